#pragma once
// A pull reader of JSON text as Python's json module writes it: RFC 8259
// plus the bare NaN, Infinity and -Infinity of json.dumps(allow_nan=True)
// (https://docs.python.org/3/library/json.html). The history readers take
// keys and values one by one from it instead of building a document: a W&B
// history is hundreds of thousands of small objects, and a DOM spends most
// of its time allocating them. Everything is validated as it is read
// (grammar, escapes, UTF-8); errors name the file and line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <logratio/core/error.hpp>

namespace logratio_cli::trackers {

class json_scanner {
public:
    /// `text` must outlive the scanner; `first_line` is the line of its first byte in `file`.
    json_scanner(std::string_view text, std::string file, std::size_t first_line = 1)
        : p_(text.data()), end_(text.data() + text.size()), file_(std::move(file)), line_(first_line) {}
    /// Scans `text` next (e.g. the next line of JSON Lines), keeping the file name.
    void reset(std::string_view text, std::size_t first_line) {
        p_ = text.data();
        end_ = text.data() + text.size();
        line_ = first_line;
    }

    std::size_t line() const { return line_; }
    /// The next significant byte ('\0' at the end).
    char peek() {
        skip_ws();
        return p_ < end_ ? *p_ : '\0';
    }
    bool at_end() { return peek() == '\0' && p_ == end_; }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++p_;
    }

    /// Object members: start with first = true at the '{'; each call reads
    /// the next key into `key`, then the caller reads its value; false at
    /// the closing brace.
    bool next_member(bool& first, std::string& key);
    /// Array elements, as next_member: true when an element follows.
    bool next_element(bool& first);

    /// A string value (at '"'), unescaped into `out`.
    void string(std::string& out);

    /// A number, or Python's NaN / Infinity / -Infinity.
    double number();
    void literal(const char* word);

    /// Any value, validated and dropped; nesting deeper than `max_depth` is an error.
    void skip_value(int depth = 0);

    [[noreturn]] void fail(const std::string& what) const;

    static constexpr int max_depth = 256;

private:
    void skip_ws() {
        while (p_ < end_) {
            const char c = *p_;
            if (c == '\n') ++line_;
            else if (c != ' ' && c != '\t' && c != '\r') return;
            ++p_;
        }
    }
    bool closes(char c) {
        if (peek() != c) return false;
        ++p_;
        return true;
    }
    bool digit() const { return p_ < end_ && *p_ >= '0' && *p_ <= '9'; }
    void token(const char* word);
    unsigned hex4();
    /// After a backslash: the escape, appended to `out` (UTF-8 for \u).
    void escape(std::string& out);
    /// One multi-byte UTF-8 sequence at p_ (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
    void utf8_sequence();

    const char* p_;
    const char* end_;
    std::string file_;
    std::size_t line_;
    std::string scratch_;
};

}  // namespace logratio_cli::trackers
