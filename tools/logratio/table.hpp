#pragma once
// Tables of per-update metrics, as users export them:
//  - long format (CSV or JSON Lines): one row per update with columns run,
//    group, update and metric columns;
//  - logging-history exports (W&B-style CSV, one file per run): `_step` is a
//    logging-event counter, not a training step; rows are sparse (each event
//    logs some metrics); the training step is in a column such as
//    `train/step`.
// Missing cells stay missing (NaN in the series): never interpolated, never 0.
// Errors name the file, line and column.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>
#include <logratio/runs/runs.hpp>

namespace logratio_cli {

/// A table of text cells. The cells are views into `storage` (the file's
/// bytes, quoted CSV fields unescaped in place), row-major; `line[i]` is the
/// 1-based source line of row i. Movable, not copyable (the views would
/// point into the original).
struct text_table {
    std::string path;
    std::vector<std::string> columns;
    std::vector<char> storage;  ///< a vector keeps its buffer when moved
    std::vector<std::string_view> cells;
    std::vector<std::size_t> line;

    text_table() = default;
    text_table(text_table&&) = default;
    text_table& operator=(text_table&&) = default;
    text_table(const text_table&) = delete;
    text_table& operator=(const text_table&) = delete;

    std::size_t row_count() const { return line.size(); }
    std::string_view cell(std::size_t row, std::size_t col) const { return cells[row * columns.size() + col]; }
    std::optional<std::size_t> column(const std::string& name) const {
        auto it = std::find(columns.begin(), columns.end(), name);
        if (it == columns.end()) return std::nullopt;
        return static_cast<std::size_t>(it - columns.begin());
    }
    std::string column_list() const {
        std::string s;
        for (const auto& c : columns) s += (s.empty() ? "" : ", ") + c;
        return s;
    }
};

namespace detail {

/// One CSV field starting at `p` (a quoted field is unescaped in place, the
/// view then covers the shortened text); `p` is left on the delimiter after
/// it (',' '\n' "\r\n") or at `end`. `line` counts the newlines inside.
inline std::string_view csv_field(char*& p, char* end, std::size_t& line, bool& quoted, const std::string& path) {
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

}  // namespace detail

/// RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines;
/// CRLF or LF line ends; the first record is the header; blank lines are
/// skipped. One pass over the bytes; cells are views (text_table).
inline text_table parse_csv(const std::string& text, const std::string& path) {
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
            rec.push_back(detail::csv_field(p, end, line, quoted, path));
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

/// JSON Lines: one object per line, keys are columns (union over all lines,
/// in order of first appearance); null or absent = missing.
inline text_table parse_jsonl(const std::string& text, const std::string& path) {
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
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(s);
        } catch (const nlohmann::json::exception& e) {
            throw format_error(concat(path, ": line ", line, ": not valid JSON: ", e.what()));
        }
        if (!j.is_object()) throw format_error(concat(path, ": line ", line, ": not a JSON object"));
        std::vector<std::pair<std::size_t, std::string>> row;
        for (auto it = j.begin(); it != j.end(); ++it) {
            auto ins = index.emplace(it.key(), t.columns.size());
            if (ins.second) t.columns.push_back(it.key());
            const auto& v = it.value();
            std::string cell;
            if (v.is_null()) cell.clear();
            else if (v.is_string()) cell = v.get<std::string>();
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

inline std::string read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw logratio::error(path + ": read error");
    return ss.str();
}

inline bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

/// CSV or JSON Lines by extension; a UTF-8 byte-order mark (Excel, some
/// Windows tools) is skipped; CRLF line ends are read as LF.
inline text_table read_table(const std::string& path) {
    std::string text = read_text_file(path);
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson")) return parse_jsonl(text, path);
    return parse_csv(text, path);
}

/// A cell's text as a number: empty, nan, NaN, null, None, NA = missing
/// (NaN); surrounding spaces and tabs are ignored; std::nullopt if it is not
/// a number. std::from_chars: correctly rounded, locale-independent.
inline std::optional<double> cell_number(std::string_view s) {
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

/// A cell as a number (cell_number); a non-number is an error naming the
/// file, line and column.
inline double parse_cell(const text_table& t, std::size_t row, std::size_t col) {
    const std::string_view s = t.cell(row, col);
    if (const auto x = cell_number(s)) return *x;
    const auto b = s.find_first_not_of(" \t");
    const std::string v(s.substr(b, s.find_last_not_of(" \t") - b + 1));
    throw logratio::format_error(logratio::detail::concat(t.path, ": line ", t.line[row], ", column '",
                                                          t.columns[col], "': '", v, "' is not a number"));
}

/// How to read a logging-history export into updates.
struct history_options {
    std::string step_column;       ///< the training-step column (e.g. train/step); required
    double update_offset = 0;      ///< update = step + update_offset
    long steps_per_batch = 1;      ///< rollout batch = floor(step / steps_per_batch); position = step mod it
    std::string grad_norm_column;  ///< updates whose value here is exactly 0 are listed
    std::string run, group;        ///< names (default: file stem, parent directory)
};

/// One run's series plus what the tool reports beside the statistics.
struct run_input {
    logratio::run_series series;
    std::vector<long> position;          ///< position of each update in its rollout batch (history exports)
    std::vector<double> zero_grad_norm;  ///< updates with a recorded zero gradient norm
    std::vector<std::string> notes;
};

/// The long format: columns run, group, update and the metric. Rows keep
/// their order within a run after sorting by update; (run, update) pairs
/// must be unique; a run must stay in one group.
inline void long_format_runs(const text_table& t, const std::string& metric, std::vector<run_input>& out) {
    using logratio::format_error;
    using logratio::detail::concat;
    const auto rc = t.column("run"), gc = t.column("group"), uc = t.column("update"), mc = t.column(metric);
    if (!rc || !uc)
        throw format_error(t.path + ": a long-format table needs columns 'run' and 'update' (columns: " +
                           t.column_list() + ")");
    if (!mc) throw format_error(t.path + ": no column '" + metric + "' (columns: " + t.column_list() + ")");
    std::map<std::string, std::size_t> where;
    std::map<std::pair<std::string, double>, std::size_t> seen;
    for (std::size_t i = 0; i < t.row_count(); ++i) {
        const std::string run(t.cell(i, *rc));
        const std::string group = gc ? std::string(t.cell(i, *gc)) : std::string("all");
        if (run.empty()) throw format_error(concat(t.path, ": line ", t.line[i], ": empty 'run' cell"));
        const double u = parse_cell(t, i, *uc);
        if (!std::isfinite(u)) throw format_error(concat(t.path, ": line ", t.line[i], ": missing 'update' cell"));
        auto dup = seen.emplace(std::make_pair(run, u), t.line[i]);
        if (!dup.second)
            throw format_error(concat(t.path, ": run '", run, "' update ", u, " appears on lines ", dup.first->second,
                                      " and ", t.line[i]));
        auto w = where.emplace(run, out.size());
        if (w.second) {
            run_input r;
            r.series.run = run;
            r.series.group = group;
            out.push_back(std::move(r));
        }
        auto& r = out[w.first->second];
        if (r.series.group != group)
            throw format_error(concat(t.path, ": line ", t.line[i], ": run '", run, "' is in group '", group,
                                      "' here but in '", r.series.group, "' before"));
        r.series.update.push_back(u);
        r.series.value.push_back(parse_cell(t, i, *mc));
    }
    for (auto& r : out) {  // order by update
        std::vector<std::size_t> idx(r.series.update.size());
        for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = k;
        std::stable_sort(idx.begin(), idx.end(),
                         [&](std::size_t a, std::size_t b) { return r.series.update[a] < r.series.update[b]; });
        std::vector<double> u, v;
        for (auto k : idx) {
            u.push_back(r.series.update[k]);
            v.push_back(r.series.value[k]);
        }
        r.series.update = std::move(u);
        r.series.value = std::move(v);
    }
}

inline std::string path_stem(const std::string& p) {
    std::string s = p.substr(p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/') + 1);
    const auto dot = s.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}
inline std::string parent_name(const std::string& p) {
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos) return "all";
    const std::string d = p.substr(0, slash);
    const auto s2 = d.find_last_of('/');
    const std::string name = s2 == std::string::npos ? d : d.substr(s2 + 1);
    return name.empty() || name == "." ? "all" : name;
}

/// A logging-history export of one run: rows merged per training step (the
/// last non-missing value of an event wins), events without a step skipped
/// (counted in a note), zero gradient norms listed.
inline run_input history_run(const text_table& t, const std::string& metric, const history_options& o) {
    using logratio::format_error;
    using logratio::detail::concat;
    if (o.step_column.empty())
        throw format_error(t.path + ": this looks like a logging-history export ('_step' counts logging events, "
                                    "not training steps): name the training-step column with --step-column "
                                    "(columns: " + t.column_list() + ")");
    if (o.steps_per_batch < 1) throw format_error("--steps-per-batch must be at least 1");
    const auto sc = t.column(o.step_column), mc = t.column(metric);
    if (!sc) throw format_error(t.path + ": no step column '" + o.step_column + "' (columns: " + t.column_list() + ")");
    if (!mc) throw format_error(t.path + ": no column '" + metric + "' (columns: " + t.column_list() + ")");
    std::optional<std::size_t> gc;
    if (!o.grad_norm_column.empty()) {
        gc = t.column(o.grad_norm_column);
        if (!gc)
            throw format_error(t.path + ": no gradient-norm column '" + o.grad_norm_column + "' (columns: " +
                               t.column_list() + ")");
    }
    struct step_cells {
        double value = std::nan(""), grad = std::nan("");
    };
    std::map<double, step_cells> steps;
    std::size_t no_step = 0;
    for (std::size_t i = 0; i < t.row_count(); ++i) {
        const double s = parse_cell(t, i, *sc);
        if (std::isnan(s)) {
            ++no_step;
            continue;
        }
        if (!std::isfinite(s) || s != std::floor(s) || std::fabs(s) > 9007199254740992.0)
            throw format_error(concat(t.path, ": line ", t.line[i], ", column '", o.step_column, "': step ", s,
                                      " is not an integer (or beyond 2^53)"));
        auto& c = steps[s];
        const double v = parse_cell(t, i, *mc);
        if (!std::isnan(v)) c.value = v;
        if (gc) {
            const double g = parse_cell(t, i, *gc);
            if (!std::isnan(g)) c.grad = g;
        }
    }
    run_input r;
    r.series.run = o.run.empty() ? path_stem(t.path) : o.run;
    r.series.group = o.group.empty() ? parent_name(t.path) : o.group;
    for (const auto& [step, c] : steps) {
        const double u = step + o.update_offset;
        r.series.update.push_back(u);
        r.series.value.push_back(c.value);
        const auto st = static_cast<long long>(step);  // |step| <= 2^53, checked above
        r.position.push_back(static_cast<long>(((st % o.steps_per_batch) + o.steps_per_batch) % o.steps_per_batch));
        if (c.grad == 0.0) r.zero_grad_norm.push_back(u);
    }
    if (no_step)
        r.notes.push_back(concat(t.path, ": ", no_step, " logging event(s) without '", o.step_column, "' skipped"));
    if (!r.zero_grad_norm.empty())
        r.notes.push_back(concat("run '", r.series.run, "': ", r.zero_grad_norm.size(),
                                 " update(s) with zero gradient norm (kept, listed)"));
    return r;
}

/// Keeps only the updates at `position` inside their rollout batch.
inline void keep_position(run_input& r, long position) {
    run_input k = r;
    k.series.update.clear();
    k.series.value.clear();
    k.position.clear();
    for (std::size_t i = 0; i < r.series.update.size(); ++i)
        if (r.position[i] == position) {
            k.series.update.push_back(r.series.update[i]);
            k.series.value.push_back(r.series.value[i]);
            k.position.push_back(position);
        }
    r = std::move(k);
}

}  // namespace logratio_cli
