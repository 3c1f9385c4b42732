#include "table.hpp"

#include "trackers/lenient_json.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>
#include "files_read.hpp"
#include "number_parse.hpp"
#include "table_csv_scan.hpp"

namespace logratio_cli {

std::optional<std::size_t> text_table::column(const std::string& name) const {
    auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) return std::nullopt;
    return static_cast<std::size_t>(it - columns.begin());
}

void text_table::take(text_table& o) noexcept {
    const char* const from = o.storage.data();
    const std::size_t size = o.storage.size();
    path = std::move(o.path);
    columns = std::move(o.columns);
    storage = std::move(o.storage);
    mapping = std::move(o.mapping);  // its pages stay where they are
    cells = std::move(o.cells);
    line = std::move(o.line);
    dropped = std::move(o.dropped);
    if (storage.data() == from) return;  // the buffer moved with the string (any but a short one)
    for (auto& c : cells)
        if (c.data() >= from && c.data() <= from + size)  // (a JSON Lines table's absent cells point nowhere)
            c = std::string_view(storage.data() + (c.data() - from), c.size());
}

std::string text_table::column_list() const {
    std::string s;
    for (const auto& c : columns) s += (s.empty() ? "" : ", ") + c;
    return s;
}

namespace {

/// One CSV field starting at `p` (a quoted field is unescaped in place, the
/// view then covers the shortened text); `p` is left on the delimiter after
/// it (',' '\n' "\r\n") or at `end`. `line` counts the newlines inside.
inline std::string_view csv_field(char*& p, char* end, std::size_t& line, bool& quoted, const std::string& path) {
    using logratio::format_error;
    using logratio::detail::concat;
    quoted = p < end && *p == '"';
    if (!quoted) return csv_scan::unquoted_field(p, end, line, path);
    const std::size_t first_line = line;
    char* w = ++p;
    char* const body = p;
    for (;; ++p) {
        if (p == end)
            throw format_error(concat(path, ": line ", first_line, ": unterminated quoted field at end of file"));
        if (*p == '"') {
            if (p + 1 < end && p[1] == '"') {
                *w++ = '"';
                ++p;
                continue;
            }
            break;
        }
        if (*p == '\n') ++line;
        *w++ = *p;
    }
    csv_scan::close_quoted_field(p, end, line, path);
    return std::string_view(body, static_cast<std::size_t>(w - body));
}

}  // namespace

text_table parse_csv(const std::string& text, const std::string& path) { return parse_csv(std::string(text), path); }

text_table parse_csv(std::string&& text, const std::string& path) { return parse_csv(std::move(text), path, nullptr, nullptr); }

namespace {

/// The header's columns into `t` (those `keep` keeps; every one without
/// it) and, per column, whether its cells are stored (empty: all).
std::vector<char> kept_columns(text_table& t, const std::vector<std::string_view>& header, csv_columns keep,
                               const void* context) {
    std::vector<char> kept;
    if (!keep) {
        t.columns.assign(header.begin(), header.end());
        return kept;
    }
    for (const auto h : header) {
        std::string name(h);
        kept.push_back(keep(name, context));
        (kept.back() ? t.columns : t.dropped).push_back(std::move(name));
    }
    return kept;
}

}  // namespace

namespace {
/// parse_csv of the bytes [p, end) (t's storage or mapping) into `t`.
void parse_csv_bytes(text_table& t, char* p, char* const end, csv_columns keep, const void* context) {
    using logratio::format_error;
    using logratio::detail::concat;
    const std::string& path = t.path;
    std::vector<std::string_view> header;
    std::vector<char> kept;  // per column: stored (empty: every column)
    std::size_t line = 1;
    bool in_header = true;
    while (p < end) {
        const std::size_t rec_line = line;
        // the fields go straight to t.cells (the header's to `header`)
        std::vector<std::string_view>& rec = in_header ? header : t.cells;
        const std::size_t first = rec.size();
        bool quoted = false, any_quoted = false, last_empty = false;
        std::size_t fields = 0;
        for (;; ++fields) {
            const std::string_view f = csv_field(p, end, line, quoted, path);
            if (in_header || kept.empty() || (fields < kept.size() && kept[fields])) rec.push_back(f);
            last_empty = f.empty();
            any_quoted = any_quoted || quoted;
            if (p == end || *p == '\n') break;
            ++p;  // ','
        }
        ++fields;
        if (p < end) {  // the '\n' ending the record
            ++p;
            ++line;
        }
        if (fields == 1 && last_empty && !any_quoted) {  // a blank line
            rec.resize(first);
            continue;
        }
        if (in_header) {
            kept = kept_columns(t, header, keep, context);
            in_header = false;
            // room for every row at once: at most one per line left (quoted
            // newlines and blank lines only make it more than needed); the
            // estimate from the first row's size this replaced fell short on
            // rows of varying length, and the one reallocation it then made
            // (copying every cell's view) was a tenth of the time
            const auto rows = static_cast<std::size_t>(std::count(static_cast<const char*>(p), static_cast<const char*>(end), '\n')) + 1;
            t.cells.reserve(rows * t.columns.size());
            t.line.reserve(rows);
            continue;
        }
        if (fields != header.size())
            throw format_error(concat(path, ": line ", rec_line, " has ", fields, " fields, the header has ", header.size()));
        t.line.push_back(rec_line);
    }
    if (in_header) throw format_error(path + ": empty table (no header line)");
    for (std::size_t i = 0; i < header.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (header[i] == header[j] && !header[i].empty())
                throw format_error(concat(path, ": duplicate column '", header[i], "' in the header"));
}
}  // namespace

text_table parse_csv(std::string&& text, const std::string& path, csv_columns keep, const void* context) {
    text_table t;
    t.path = path;
    t.storage = std::move(text);
    parse_csv_bytes(t, t.storage.data(), t.storage.data() + t.storage.size(), keep, context);
    return t;
}

text_table read_csv_file(const std::string& path, csv_columns keep, const void* context) {
    if (!mappable(path)) return parse_csv(read_text_file_without_bom(path), path, keep, context);
    text_table t;
    t.path = path;
    t.mapping = std::make_unique<mapped_file>(path, true);
    char* p = t.mapping->mutable_data();
    char* const end = p + t.mapping->size();
    p += utf8_bom_size(std::string_view(p, t.mapping->size()));
    parse_csv_bytes(t, p, end, keep, context);
    return t;
}

text_table parse_jsonl(const std::string& text, const std::string& path) {
    using logratio::format_error;
    using logratio::detail::concat;
    text_table t;
    t.path = path;
    std::map<std::string, std::size_t> index;
    std::vector<std::vector<std::pair<std::size_t, std::string>>> cells;
    std::istringstream in(text);
    std::string s;
    for (std::size_t line = 1; std::getline(in, s); ++line) {
        if (s.find_first_not_of(" \t\r") == std::string::npos) continue;
        // Python's NaN / Infinity / -Infinity allowed, as the format
        // detection (json_object_has) allows them
        const nlohmann::json j = trackers::parse_python_json(s, path, line);
        if (!j.is_object()) throw format_error(concat(path, ": line ", line, ": not a JSON object"));
        std::vector<std::pair<std::size_t, std::string>> row;
        for (auto it = j.begin(); it != j.end(); ++it) {
            auto ins = index.emplace(it.key(), t.columns.size());
            if (ins.second) t.columns.push_back(it.key());
            const auto& v = it.value();
            std::string cell;
            if (v.is_null()) cell.clear();
            else if (v.is_string()) {  // text, or the marker of a NaN / Infinity token
                const auto x = trackers::number_of(v);
                cell = x ? concat(*x) : v.get<std::string>();
            }
            else if (v.is_boolean()) cell = v.get<bool>() ? "1" : "0";
            else if (v.is_number()) cell = v.dump();
            else throw format_error(concat(path, ": line ", line, ", key '", it.key(), "': nested value"));
            row.emplace_back(ins.first->second, cell);
        }
        cells.push_back(std::move(row));
        t.line.push_back(line);
    }
    if (cells.empty()) throw format_error(path + ": empty table (no JSON lines)");
    std::size_t bytes = 0;
    for (const auto& r : cells)
        for (const auto& c : r) bytes += c.second.size();
    t.storage.reserve(bytes);  // no reallocation below: the views stay valid
    t.cells.assign(cells.size() * t.columns.size(), std::string_view());
    for (std::size_t i = 0; i < cells.size(); ++i)
        for (const auto& [col, text] : cells[i]) {
            const char* at = t.storage.data() + t.storage.size();
            t.storage.append(text);
            t.cells[i * t.columns.size() + col] = std::string_view(at, text.size());
        }
    return t;
}

std::string read_text_file(const std::string& path) {
    std::ifstream f(openable_path(path), std::ios::binary);
    if (!f) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    note_file_read(path);
    // One read into a buffer of the file's size (a stringstream grows and
    // copies it several times: a tenth of the CSV reader's time at 100 MB);
    // the loop below reads what a growing or special file holds beyond it.
    std::string text;
    f.seekg(0, std::ios::end);
    const auto size = f.tellg();  // -1 for a pipe: no seeking, the loop reads it all
    f.clear();
    f.seekg(0, std::ios::beg);
    f.clear();
    if (size > 0) {
        text.resize(static_cast<std::size_t>(size));
        f.read(text.data(), static_cast<std::streamsize>(size));
        text.resize(static_cast<std::size_t>(f.gcount()));
    }
    char buf[1 << 16];
    while (f.read(buf, sizeof buf) || f.gcount() > 0) text.append(buf, static_cast<std::size_t>(f.gcount()));
    if (f.bad()) throw logratio::error(path + ": read error");
    return text;
}

bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::string read_text_file_without_bom(const std::string& path) {
    std::string text = read_text_file(path);
    text.erase(0, utf8_bom_size(text));
    return text;
}

text_table read_table(const std::string& path) {
    const std::string text = read_text_file_without_bom(path);
    if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson")) return parse_jsonl(text, path);
    return parse_csv(text, path);
}

namespace {

/// [-]digits[.digits] with at most 15 digits in all, exactly: the digits
/// are an integer below 2^53 and the power of ten is exact, so one IEEE
/// division is the correctly rounded value (Clinger's fast path), as
/// from_chars gives it; false (x unchanged) for any other text. A CSV's
/// updates and rounded metrics are such numbers: this takes a third of the
/// time from_chars did on them.
inline bool short_decimal(const char* b, const char* e, double& x) {
    static constexpr double pow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                         1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const bool neg = b < e && *b == '-';
    const char* p = b + neg;
    const char* const digits = p;
    std::uint64_t m = 0;
    while (p < e && static_cast<unsigned>(*p - '0') < 10) m = m * 10 + static_cast<unsigned>(*p++ - '0');
    const auto whole = p - digits;
    std::ptrdiff_t frac = 0;
    if (p < e && *p == '.') {
        const char* const f = ++p;
        while (p < e && static_cast<unsigned>(*p - '0') < 10) m = m * 10 + static_cast<unsigned>(*p++ - '0');
        frac = p - f;
        if (frac == 0) return false;
    }
    if (p != e || whole == 0 || whole + frac > 15) return false;
    const double v = static_cast<double>(m) / pow10[frac];
    x = neg ? -v : v;
    return true;
}

}  // namespace

bool cell_double(std::string_view s, double& x) {
    const char* b = s.data();
    const char* e = b + s.size();
    while (b < e && (*b == ' ' || *b == '\t')) ++b;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t')) --e;
    if (b == e) return x = std::nan(""), true;
    if (short_decimal(b, e, x)) return true;
    if (b + 1 < e && *b == '+' && b[1] != '-') ++b;  // strtod's '+'
    if (parse_double(b, e, x) == e) return true;     // overflow is +-inf, underflow rounds to 0 (as strtod)
    const std::string_view t(b, static_cast<std::size_t>(e - b));
    if (t == "null" || t == "None" || t == "NA") return x = std::nan(""), true;  // "nan", "NaN" parse as NaN above
    return false;
}

double parse_cell(const text_table& t, std::size_t row, std::size_t col) {
    const std::string_view s = t.cell(row, col);
    double x = 0;
    if (cell_double(s, x)) return x;
    const auto b = s.find_first_not_of(" \t");
    const std::string v(s.substr(b, s.find_last_not_of(" \t") - b + 1));
    throw logratio::format_error(logratio::detail::concat(t.path, ": line ", t.line[row], ", column '",
                                                          t.columns[col], "': '", v, "' is not a number"));
}

}  // namespace logratio_cli
