#include "table.hpp"

#include "trackers/lenient_json.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>
#include "files_read.hpp"

namespace logratio_cli {

std::optional<std::size_t> text_table::column(const std::string& name) const {
    auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) return std::nullopt;
    return static_cast<std::size_t>(it - columns.begin());
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
std::string_view csv_field(char*& p, char* end, std::size_t& line, bool& quoted, const std::string& path) {
    using logratio::format_error;
    using logratio::detail::concat;
    char* const start = p;
    quoted = p < end && *p == '"';
    if (!quoted) {
        while (p < end && *p != ',' && *p != '\n') {
            if (*p == '"') throw format_error(concat(path, ": line ", line, ": a quote inside an unquoted field"));
            ++p;
        }
        const char* e = p;
        if (p < end && *p == '\n' && e > start && e[-1] == '\r') --e;  // CRLF
        return std::string_view(start, static_cast<std::size_t>(e - start));
    }
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
    ++p;  // the closing quote
    if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n') ++p;
    if (p < end && *p != ',' && *p != '\n')
        throw format_error(concat(path, ": line ", line, ": text after the closing quote of a field"));
    return std::string_view(body, static_cast<std::size_t>(w - body));
}

}  // namespace

text_table parse_csv(const std::string& text, const std::string& path) {
    using logratio::format_error;
    using logratio::detail::concat;
    text_table t;
    t.path = path;
    t.storage.assign(text.begin(), text.end());
    char* p = t.storage.data();
    char* const end = p + t.storage.size();
    std::vector<std::string_view> rec;
    std::size_t line = 1;
    bool header = true;
    while (p < end) {
        const std::size_t rec_line = line;
        rec.clear();
        bool quoted = false, any_quoted = false;
        for (;;) {
            rec.push_back(csv_field(p, end, line, quoted, path));
            any_quoted = any_quoted || quoted;
            if (p == end || *p == '\n') break;
            ++p;  // ','
        }
        if (p < end) {  // the '\n' ending the record
            ++p;
            ++line;
        }
        if (rec.size() == 1 && rec[0].empty() && !any_quoted) continue;  // a blank line
        if (header) {
            t.columns.assign(rec.begin(), rec.end());
            header = false;
            continue;
        }
        if (rec.size() != t.columns.size())
            throw format_error(concat(path, ": line ", rec_line, " has ", rec.size(), " fields, the header has ",
                                      t.columns.size()));
        t.cells.insert(t.cells.end(), rec.begin(), rec.end());
        t.line.push_back(rec_line);
    }
    if (header) throw format_error(path + ": empty table (no header line)");
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (t.columns[i] == t.columns[j] && !t.columns[i].empty())
                throw format_error(concat(path, ": duplicate column '", t.columns[i], "' in the header"));
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
            t.storage.insert(t.storage.end(), text.begin(), text.end());
            t.cells[i * t.columns.size() + col] = std::string_view(at, text.size());
        }
    return t;
}

std::string read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    note_file_read(path);
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw logratio::error(path + ": read error");
    return ss.str();
}

bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

text_table read_table(const std::string& path) {
    std::string text = read_text_file(path);
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson")) return parse_jsonl(text, path);
    return parse_csv(text, path);
}

std::optional<double> cell_number(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return std::nan("");
    s = s.substr(b, s.find_last_not_of(" \t") - b + 1);
    if (s == "nan" || s == "NaN" || s == "null" || s == "None" || s == "NA") return std::nan("");
    std::string_view digits = s;
    if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);  // strtod's '+'
    double x = 0;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), x);
    if (r.ptr != digits.data() + digits.size()) return std::nullopt;
    if (r.ec == std::errc::result_out_of_range) {  // as strtod: overflow is +-inf, underflow rounds to 0
        const bool neg = digits[0] == '-';
        const auto e = digits.find_first_of("eE");
        const bool tiny = e != std::string_view::npos && digits.find('-', e) != std::string_view::npos;
        x = tiny ? (neg ? -0.0 : 0.0) : (neg ? -HUGE_VAL : HUGE_VAL);
    } else if (r.ec != std::errc()) {
        return std::nullopt;
    }
    return x;
}

double parse_cell(const text_table& t, std::size_t row, std::size_t col) {
    const std::string_view s = t.cell(row, col);
    if (const auto x = cell_number(s)) return *x;
    const auto b = s.find_first_not_of(" \t");
    const std::string v(s.substr(b, s.find_last_not_of(" \t") - b + 1));
    throw logratio::format_error(logratio::detail::concat(t.path, ": line ", t.line[row], ", column '",
                                                          t.columns[col], "': '", v, "' is not a number"));
}

}  // namespace logratio_cli
