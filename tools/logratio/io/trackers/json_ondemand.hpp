#pragma once
// simdjson's On-Demand API (Debian's libsimdjson-dev 3.0) for the JSON
// history readers: values read as the caller walks the document, no DOM
// tape. Stage 1 (structure, UTF-8, control characters in strings) runs with
// the SIMD kernel chosen at run time; the walk itself is compiled into the
// CLI (simdjson's builtin kernel for the CLI's flags). Every helper returns
// false where the text might not be read exactly as json_scanner reads it
// (an error, a token it does not know, nesting past `od_max_depth`): the
// caller then reads the same text with json_scanner, which names the error
// or reads Python's spellings its own way. Included only where
// LOGRATIO_HAVE_SIMDJSON is defined.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include <simdjson.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace logratio_cli::trackers::od {

namespace sj = simdjson::ondemand;

/// Deeper than this (objects and arrays) is left to json_scanner, whose
/// limit (json_scanner::max_depth, 256) and message are the ones kept.
constexpr int max_depth = 200;

/// A token without the whitespace simdjson's raw_json_token keeps after it.
inline std::string_view trimmed(std::string_view t) {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
    return t;
}

/// Python's NaN, Infinity, -Infinity (json.dumps(allow_nan=True)) as
/// json_scanner reads them; false for any other token.
inline bool python_non_finite(std::string_view token, double& x) {
    const std::string_view t = trimmed(token);
    if (t == "NaN") x = std::numeric_limits<double>::quiet_NaN();
    else if (t == "Infinity") x = std::numeric_limits<double>::infinity();
    else if (t == "-Infinity") x = -std::numeric_limits<double>::infinity();
    else return false;
    return true;
}

/// Whether the structural character after a value's token is ',' or the
/// parent's `closer` ('}' or ']'). Needed for every value the walk does not
/// consume (strings and Python's NaN / Infinity read from raw_json_token,
/// which spans the token and the whitespace up to the next structural
/// character): On-Demand skips an unconsumed value by depth alone, so
/// `{"a": "b": 1}` or `{"a": NaN]` would otherwise pass as well-formed
/// (found by fuzz_json_history). Consumed values (numbers, booleans, null,
/// objects, arrays) have their separator checked by simdjson itself.
inline bool ends_member(std::string_view token, char closer) {
    const char c = token.data()[token.size()];  // within the document or its padding
    return c == ',' || c == closer;
}

/// Python's NaN, Infinity, -Infinity as a value of `v`'s parent (closed by
/// `closer`): python_non_finite, its separator checked (ends_member).
inline bool non_finite_value(sj::value& v, char closer, double& x) {
    const std::string_view t = v.raw_json_token();
    return python_non_finite(t, x) && ends_member(t, closer);
}

/// Whether a number token has more than 19 significant digits (from its
/// first non-zero digit to its exponent). simdjson 3.0.1 (Debian 12)
/// misreads such a number: 0.62012004852294987792 came back as 0.0667...,
/// and about a quarter of random decimals of 20-26 significant digits were
/// wrong (measured against std::from_chars; found by fuzz_json_history). Up
/// to 19 the significand fits in 64 bits and simdjson's result is exact,
/// leading zeros or not: 0 wrong in 1.4 million decimals of 1-19
/// significant digits after 0-44 leading zeros, with and without exponents
/// (2026-12-07). Counting the leading zeros too, as this did first, sent
/// every value below 0.001 written by repr (0.00045183232059956533: 17
/// significant digits, 20 in all) to json_scanner: 99.9% of the lines of
/// the benchmark's JSON Lines files and every trainer_state.json.
/// 32 bytes from `token`'s start must be readable (simdjson's padding).
inline bool long_significand(std::string_view token) {
    if (token.size() <= 19) return false;
#ifdef __SSE2__
    // a token of at most 32 bytes by bit masks (the byte loop below, run on
    // every number of 20 bytes or more -- repr's 17 significant digits after
    // "0.0" -- was a third of od::number's time, 9% of a JSON Lines read)
    if (token.size() <= 32) {
        const char* const p = token.data();
        const auto mask = [&](const __m128i lo, const __m128i span) {  // bytes in [lo, lo + span]
            const auto m16 = [&](const char* q) {
                const __m128i d = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), lo);
                return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, span), d)));
            };
            return m16(p) | m16(p + 16) << 16;
        };
        const std::uint32_t in = token.size() == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << token.size()) - 1;
        const std::uint32_t digit = mask(_mm_set1_epi8('0'), _mm_set1_epi8(9)) & in;
        const std::uint32_t nonzero = mask(_mm_set1_epi8('1'), _mm_set1_epi8(8)) & in;
        const std::uint32_t e = (mask(_mm_set1_epi8('e'), _mm_setzero_si128()) | mask(_mm_set1_epi8('E'), _mm_setzero_si128())) & in;
        // the bytes before the first exponent letter, from the first non-zero digit on
        const std::uint32_t before_e = e ? (std::uint32_t{1} << __builtin_ctz(e)) - 1 : in;
        const std::uint32_t lead = nonzero & before_e;
        if (!lead) return false;
        const std::uint32_t from_lead = ~((std::uint32_t{1} << __builtin_ctz(lead)) - 1);
        return __builtin_popcount(digit & before_e & from_lead) > 19;
    }
#endif
    int digits = 0;
    bool significant = false;
    for (const char c : token) {
        if (c == 'e' || c == 'E') break;
        significant = significant || (c >= '1' && c <= '9');
        digits += significant && c >= '0' && c <= '9';
    }
    return digits > 19;
}

/// A number value (or a token simdjson does not type: Python's NaN and
/// infinities) into `x`, as json_scanner::number reads it: exactly rounded
/// (simdjson's own parser, as from_chars, up to 19 significant digits:
/// long_significand),
/// an integer -0 as +0 (Python reads
/// "-0" as the int 0); false for anything else (overflow, bad syntax).
inline bool number(sj::value& v, double& x, char closer) {
    if (long_significand(trimmed(v.raw_json_token()))) return false;  // json_scanner reads it
    if (v.get_double().get(x) == simdjson::SUCCESS) {
        if (x == 0 && std::signbit(x)) {  // rare: look at the token
            const std::string_view t = trimmed(v.raw_json_token());
            if (t.find_first_of(".eE") == std::string_view::npos) x = 0.0;
        }
        return true;
    }
    return non_finite_value(v, closer, x);
}

/// Whether `t` (a token without its trailing whitespace) is a JSON number
/// json_scanner::number reads as a finite double without failing: its
/// grammar, an exponent of at most two digits and at most 32 bytes (so
/// below 1e131: no overflow). Checked, not converted: for a value the
/// reader does not keep (key_filter). False says nothing about the token:
/// the caller then converts it (number), which decides as before.
/// 32 bytes from `t`'s start must be readable (simdjson's padding, below).
inline bool plain_number_token(std::string_view t) {
    static_assert(simdjson::SIMDJSON_PADDING >= 32, "plain_number_token reads 32 bytes");
    const std::size_t n = t.size();
    if (n == 0 || n > 32) return false;
    const char* const p = t.data();
#ifdef __SSE2__
    // the non-digit bytes as bits (SSE2: every x86-64), then only those
    // looked at: a byte loop's branch per character was 19 ns a number
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
    const auto digits16 = [&](const char* q) {
        const __m128i d = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), zero);
        return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d)));
    };
    const std::uint32_t in = n == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << n) - 1;
    std::uint32_t other = ~(digits16(p) | digits16(p + 16) << 16) & in;
    const auto next_other = [&] { return other ? static_cast<std::size_t>(__builtin_ctz(other)) : n; };
    std::size_t i = 0;
    if (p[0] == '-') {
        other &= other - 1;
        i = 1;
    }
    std::size_t at = next_other();  // the integer part is [i, at)
    if (at == i || (p[i] == '0' && at > i + 1)) return false;
    if (at == n) return true;
    other &= other - 1;
    if (p[at] == '.') {
        const std::size_t f = next_other();
        if (f == at + 1) return false;
        if (f == n) return true;
        at = f;
        other &= other - 1;
    }
    if (p[at] != 'e' && p[at] != 'E') return false;
    std::size_t e = at + 1;
    if (next_other() == e && (p[e] == '+' || p[e] == '-')) {
        other &= other - 1;
        ++e;
    }
    return other == 0 && n > e && n - e <= 2;
#else
    const char* q = p;
    const char* const end = p + n;
    const auto digit = [&] { return q < end && *q >= '0' && *q <= '9'; };
    if (*q == '-') ++q;
    if (!digit()) return false;
    if (*q == '0') ++q;
    else
        while (digit()) ++q;
    if (q < end && *q == '.') {
        ++q;
        if (!digit()) return false;
        while (digit()) ++q;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        ++q;
        if (q < end && (*q == '+' || *q == '-')) ++q;
        const char* const e = q;
        while (digit()) ++q;
        if (q == e || q - e > 2) return false;
    }
    return q == end;
#endif
}

/// A number value the reader does not keep, passed over without converting
/// it: true where json_scanner would read it without an error (its token a
/// plain_number_token, followed by ',' or the parent's `closer`: the value
/// is left unconsumed, ends_member); false: convert it (number), which then
/// decides exactly as before.
inline bool skipped_number(sj::value& v, char closer) {
    const std::string_view raw = v.raw_json_token();
    return plain_number_token(trimmed(raw)) && ends_member(raw, closer);
}

/// The text between the quotes of a string token (a key: f.key().raw();
/// a value: its raw_json_token()) when it has no backslash; false for one
/// with an escape (json_scanner unescapes it and checks its escapes: stage 1
/// only finds where a string ends). `s` points after the opening quote.
inline bool unescaped_text(const char* s, std::string_view& out) {
    const char* p = s;
#ifdef __SSE2__
    // 16 bytes at a time (a key is ~30): the first '"' or backslash; the
    // padding after the document keeps the loads inside the buffer
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    for (;; p += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const unsigned hit =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))));
        if (hit) {
            p += __builtin_ctz(hit);
            break;
        }
    }
    if (*p == '\\') return false;
#else
    while (*p != '"') {  // stage 1 found the closing quote
        if (*p == '\\') return false;
        ++p;
    }
#endif
    out = std::string_view(s, static_cast<std::size_t>(p - s));
    return true;
}
inline bool key_text(const sj::field& f, std::string_view& out) { return unescaped_text(f.key().raw(), out); }
inline bool string_text(sj::value& v, std::string_view& out, char closer) {
    const std::string_view t = v.raw_json_token();
    return !t.empty() && t[0] == '"' && unescaped_text(t.data() + 1, out) && ends_member(t, closer);
}

/// Whether `v` is a valid value json_scanner::skip_value would pass over
/// (every element and member visited, so commas, colons and literals are
/// checked as json_scanner checks them); `depth`: of `v`; `closer`: its
/// parent's ('}' or ']').
inline bool valid(sj::value v, int depth, char closer) {
    sj::json_type t;
    if (v.type().get(t)) {
        double x;
        return non_finite_value(v, closer, x);
    }
    switch (t) {
    case sj::json_type::object: {
        if (depth >= max_depth) return false;
        sj::object o;
        if (v.get_object().get(o)) return false;
        for (auto f : o) {
            sj::field m;
            std::string_view k;
            if (std::move(f).get(m) || !key_text(m, k) || !valid(m.value(), depth + 1, '}')) return false;
        }
        return true;
    }
    case sj::json_type::array: {
        if (depth >= max_depth) return false;
        sj::array a;
        if (v.get_array().get(a)) return false;
        for (auto e : a) {
            sj::value x;
            if (std::move(e).get(x) || !valid(x, depth + 1, ']')) return false;
        }
        return true;
    }
    case sj::json_type::number: {
        double x;
        return number(v, x, closer);
    }
    case sj::json_type::string: {
        std::string_view s;
        return string_text(v, s, closer);
    }
    case sj::json_type::boolean: {
        bool b;
        return !v.get_bool().get(b);
    }
    case sj::json_type::null: {
        bool n = false;
        return !v.is_null().get(n) && n;
    }
    }
    return false;
}

/// Whether the document was read to its end (no text after the value).
inline bool at_end(sj::document& doc) {
    const char* at = nullptr;
    return doc.current_location().get(at) == simdjson::OUT_OF_BOUNDS;
}

}  // namespace logratio_cli::trackers::od
