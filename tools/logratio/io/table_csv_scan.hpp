#pragma once
// The byte scan CSV fields share (io/table.cpp's parse_csv, which unescapes
// in place, and io/table_stream.cpp's reader of a mapped file, which does
// not write to the bytes).
#include <cstddef>
#include <string>
#include <string_view>

#include <logratio/core/error.hpp>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace logratio_cli::csv_scan {

/// The first ',' '\n' or '"' at or after `p` (`end` if none). SSE2 (every
/// x86-64 CPU) compares 16 bytes at a time: a cell is ~20 bytes, the byte
/// loop this replaced was a third of parse_csv's time.
template <class Char>
inline Char* unquoted_field_end(Char* p, Char* const end) {
#ifdef __SSE2__
    const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"');
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, nl)),
                                         _mm_cmpeq_epi8(v, quote));
        const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && *p != ',' && *p != '\n' && *p != '"') ++p;
    return p;
}

/// An unquoted field starting at `p`: its bytes (a CRLF's '\r' left out);
/// `p` is left on the delimiter after it (',' '\n') or at `end`. A quote
/// inside it is an error naming the file and line.
template <class Char>
inline std::string_view unquoted_field(Char*& p, Char* const end, std::size_t line, const std::string& path) {
    Char* const start = p;
    p = unquoted_field_end(p, end);
    if (p < end && *p == '"')
        throw logratio::format_error(logratio::detail::concat(path, ": line ", line, ": a quote inside an unquoted field"));
    const Char* e = p;
    if (p < end && *p == '\n' && e > start && e[-1] == '\r') --e;  // CRLF
    return std::string_view(start, static_cast<std::size_t>(e - start));
}

/// Steps over a quoted field's closing quote at `p` (and a CRLF's '\r'
/// after it); what follows must be ',' '\n' or the end.
template <class Char>
inline void close_quoted_field(Char*& p, Char* const end, std::size_t line, const std::string& path) {
    ++p;  // the closing quote
    if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n') ++p;
    if (p < end && *p != ',' && *p != '\n')
        throw logratio::format_error(
            logratio::detail::concat(path, ": line ", line, ": text after the closing quote of a field"));
}

}  // namespace logratio_cli::csv_scan
