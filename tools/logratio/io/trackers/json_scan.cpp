#include "json_scan.hpp"

#include <cmath>
#include <limits>
#include <system_error>

#include <logratio/core/error.hpp>

#include "../number_parse.hpp"

namespace logratio_cli::trackers {

bool json_scanner::next_member(bool& first, std::string& key) {
    if (first) {
        expect('{');
        first = false;
        if (closes('}')) return false;
    } else {
        if (closes('}')) return false;
        expect(',');
    }
    if (peek() != '"') fail("expected a string key");
    string(key);
    expect(':');
    return true;
}

bool json_scanner::next_element(bool& first) {
    if (first) {
        expect('[');
        first = false;
        return !closes(']');
    }
    if (closes(']')) return false;
    expect(',');
    return true;
}

void json_scanner::string(std::string& out) {
    expect('"');
    out.clear();
    const char* run = p_;
    for (;;) {
        if (p_ == end_) fail("unterminated string");
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"') break;
        if (c < 0x20) fail("a control character inside a string");
        if (c == '\\') {
            out.append(run, static_cast<std::size_t>(p_ - run));
            ++p_;
            escape(out);
            run = p_;
        } else if (c >= 0x80) {
            utf8_sequence();
        } else {
            ++p_;
        }
    }
    out.append(run, static_cast<std::size_t>(p_ - run));
    ++p_;
}

double json_scanner::number() {
    skip_ws();
    if (p_ < end_ && (*p_ == 'N' || *p_ == 'I' || (*p_ == '-' && end_ - p_ > 1 && p_[1] == 'I'))) {
        const bool neg = *p_ == '-';
        p_ += neg;
        if (*p_ == 'N') {
            token("NaN");
            return std::numeric_limits<double>::quiet_NaN();
        }
        token("Infinity");
        return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    }
    const char* s = p_;
    bool integer = true;  // Python reads "-0" as the integer 0: +0.0
    if (p_ < end_ && *p_ == '-') ++p_;
    if (!digit()) fail("invalid number");
    if (*p_ == '0') ++p_;
    else
        while (digit()) ++p_;
    if (p_ < end_ && *p_ == '.') {
        integer = false;
        ++p_;
        if (!digit()) fail("invalid number: no digit after '.'");
        while (digit()) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
        integer = false;
        ++p_;
        if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
        if (!digit()) fail("invalid number: no digit in the exponent");
        while (digit()) ++p_;
    }
    double x = 0;
    parse_double(s, p_, x);  // correctly rounded, as Python's float(); the grammar is checked above
    if (std::isinf(x)) fail("number overflow: " + std::string(s, static_cast<std::size_t>(p_ - s)));
    return integer && x == 0 ? 0.0 : x;
}

void json_scanner::literal(const char* word) {
    skip_ws();
    token(word);
}

void json_scanner::skip_value(int depth) {
    if (depth > max_depth) fail("nested more than 256 levels deep");
    switch (peek()) {
    case '{': {
        bool first = true;
        while (next_member(first, scratch_)) skip_value(depth + 1);
        return;
    }
    case '[': {
        bool first = true;
        while (next_element(first)) skip_value(depth + 1);
        return;
    }
    case '"': return string(scratch_);
    case 't': return token("true");
    case 'f': return token("false");
    case 'n': return token("null");
    default: number();
    }
}

void json_scanner::fail(const std::string& what) const {
    throw logratio::format_error(logratio::detail::concat(file_, ": line ", line_, ": not valid JSON: ", what));
}

void json_scanner::token(const char* word) {
    const std::string_view w(word);
    if (static_cast<std::size_t>(end_ - p_) < w.size() || std::string_view(p_, w.size()) != w)
        fail(p_ < end_ ? std::string("unexpected '") + *p_ + "'" : std::string("unexpected end of text"));
    p_ += w.size();
}

unsigned json_scanner::hex4() {
    if (end_ - p_ < 4) fail("a short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
        const char c = *p_;
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) fail("an invalid \\u escape");
        v = v * 16 + static_cast<unsigned>(d);
    }
    return v;
}

void json_scanner::escape(std::string& out) {
    if (p_ == end_) fail("unterminated string");
    const char c = *p_++;
    switch (c) {
    case '"': case '\\': case '/': out += c; return;
    case 'b': out += '\b'; return;
    case 'f': out += '\f'; return;
    case 'n': out += '\n'; return;
    case 'r': out += '\r'; return;
    case 't': out += '\t'; return;
    case 'u': break;
    default: fail(std::string("an invalid escape '\\") + c + "'");
    }
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair
        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("a high surrogate without its low half");
        p_ += 2;
        const unsigned lo = hex4();
        if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

void json_scanner::utf8_sequence() {
    const auto b0 = static_cast<unsigned char>(*p_);
    int n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (b0 >= 0xC2 && b0 <= 0xDF) n = 1;
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 2;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 3;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        fail("ill-formed UTF-8 in a string");
    }
    if (end_ - p_ <= n) fail("ill-formed UTF-8 in a string");
    for (int i = 1; i <= n; ++i) {
        const auto b = static_cast<unsigned char>(p_[i]);
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) fail("ill-formed UTF-8 in a string");
    }
    p_ += n + 1;
}

}  // namespace logratio_cli::trackers
