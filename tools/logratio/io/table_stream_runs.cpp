// long_table_runs: a long_table's runs, checked (the one set of a long
// table's rules: every reader of a long table comes here).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "table_stream.hpp"

namespace logratio_cli {

namespace {

using attribute_maps = std::vector<std::map<std::string, std::string>>;

/// The first error on the rows for the metric in column `mc`: a row's own error, or the metric's first non-number cell,
/// whichever row comes first (on the same row the row's own: it is checked
/// first).
void throw_first_row_error(const long_table& t, std::size_t mc) {
    const auto& row = t.first_error;
    const auto& cell = t.non_number[mc];
    if (row && (!cell || row->line <= cell->line)) throw logratio::format_error(row->message);
    if (cell) throw logratio::format_error(cell->message);
}

/// The runs' attributes: an
/// "attr:<key>" column (an error where a run has two values), or a text
/// column whose non-empty text is one per run; the columns in order.
attribute_maps stream_attributes(const long_table& t) {
    using logratio::detail::concat;
    attribute_maps out(t.runs.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const std::string& name = t.columns[c];
        if (name == "run" || name == "group" || name == "update") continue;
        const bool forced = name.rfind("attr:", 0) == 0;
        if (!forced && !t.non_number[c]) continue;  // a numeric column is a metric
        if (const auto& ch = t.changes[c]) {
            if (!forced) continue;  // a text column that varies within a run
            const auto& r = t.runs[ch->run];
            throw logratio::format_error(concat(t.path, ": line ", ch->line, ", column '", name, "': run '", r.name,
                                                "' has '", ch->value, "' here but '", r.first_text[c], "' on line ",
                                                r.first_line[c], " (an attribute has one value per run)"));
        }
        const std::string key = forced ? name.substr(5) : name;
        for (std::size_t k = 0; k < t.runs.size(); ++k)
            if (t.runs[k].first_line[c]) out[k][key] = t.runs[k].first_text[c];
    }
    return out;
}

/// A repeated (run, update): its earlier and later line, the run and update.
struct repeat {
    std::size_t earlier = 0, later = 0, run = 0;
    double update = 0;
};

/// Orders run `k`'s rows by update, stably (rows keep their order within
/// an update), every column alike; a repeated update goes to `dup`
/// if its later line comes before dup's.
void sort_run(long_table::run& r, std::size_t k, repeat& dup) {
    auto& u = r.update;
    std::vector<std::size_t> lines;  // only for a run out of order: the lines follow the rows
    if (!std::is_sorted(u.begin(), u.end())) {
        std::vector<std::size_t> idx(u.size());
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return u[a] < u[b]; });
        const auto permuted = [&](std::vector<double>& v) {
            std::vector<double> s(v.size());
            for (std::size_t i = 0; i < idx.size(); ++i) s[i] = v[idx[i]];
            v = std::move(s);
        };
        permuted(u);
        for (auto& v : r.values)
            if (v.size() == idx.size()) permuted(v);
        lines.resize(idx.size());
        for (std::size_t i = 0; i < idx.size(); ++i) lines[i] = r.lines.at(idx[i]);
    }
    const auto line = [&](std::size_t i) { return lines.empty() ? r.lines.at(i) : lines[i]; };
    for (std::size_t i = 1; i < u.size(); ++i)
        if (u[i] == u[i - 1]) {
            const std::size_t a = line(i), b = line(i - 1);
            const std::size_t later = std::max(a, b), earlier = std::min(a, b);
            if (dup.later == 0 || later < dup.later) dup = {earlier, later, k, u[i]};
        }
}

/// A vector's spare room given back when it is more than an eighth (the
/// builder's reservations by the run before).
std::vector<double> fitted(std::vector<double>&& v) {
    if (v.capacity() > v.size() + v.size() / 8 + 16) v.shrink_to_fit();
    return std::move(v);
}

}  // namespace

namespace {

void require_key_columns(const long_table& t) {
    if (!t.column("run") || !t.column("update"))
        throw logratio::format_error(t.path + ": a long-format table needs columns 'run' and 'update' (columns: " +
                                     t.column_list() + ")");
}

/// After the rows' own errors: the attributes (an attr: conflict thrown),
/// each run's rows ordered by update and the first repeated (run, update)
/// thrown -- the checks that follow the rows' in long_table_runs.
attribute_maps sorted_runs(long_table& t) {
    attribute_maps attributes = stream_attributes(t);
    repeat dup;
    for (std::size_t k = 0; k < t.runs.size(); ++k) sort_run(t.runs[k], k, dup);
    if (dup.later)  // (run, update) pairs are unique: the first repeat in line order
        throw logratio::format_error(logratio::detail::concat(t.path, ": run '", t.runs[dup.run].name, "' update ",
                                                              dup.update, " appears on lines ", dup.earlier, " and ",
                                                              dup.later));
    return attributes;
}

}  // namespace

std::vector<std::map<std::string, std::string>> checked_long_table(long_table& t) {
    require_key_columns(t);
    if (t.first_error) throw logratio::format_error(t.first_error->message);
    return sorted_runs(t);
}

bool is_metric_column(const long_table& t, std::size_t c) {
    const auto& name = t.columns[c];
    return name != "run" && name != "group" && name != "update" && name.rfind("attr:", 0) != 0 && !t.non_number[c];
}

void long_table_runs(long_table& t, const std::vector<std::string>& metrics, std::vector<std::vector<run_input>>& got) {
    using logratio::format_error;
    require_key_columns(t);
    const auto uc = t.column("update");
    std::vector<std::optional<std::size_t>> col(metrics.size());
    for (std::size_t m = 0; m < metrics.size(); ++m) col[m] = t.column(metrics[m]);
    if (!col[0]) throw format_error(t.path + ": no column '" + metrics[0] + "' (columns: " + t.column_list() + ")");
    throw_first_row_error(t, *col[0]);
    const attribute_maps attributes = sorted_runs(t);
    std::size_t last = 0;  // the last metric that is a column: it takes the updates, the others a copy
    for (std::size_t m = 0; m < metrics.size(); ++m)
        if (col[m]) {
            throw_first_row_error(t, *col[m]);
            last = m;
        }
    for (std::size_t k = 0; k < t.runs.size(); ++k) {
        auto& r = t.runs[k];
        for (std::size_t m = 0; m < metrics.size(); ++m) {
            if (!col[m]) continue;
            run_input in;
            in.series.run = r.name;
            in.series.group = r.group;
            in.attributes = attributes[k];
            in.series.value = *col[m] == *uc ? r.update : fitted(std::move(r.values[*col[m]]));
            in.series.update = m == last ? fitted(std::move(r.update)) : r.update;
            got[m].push_back(std::move(in));
        }
        r = long_table::run();  // its memory back as the runs are handed over
    }
}

void long_table_metric_names(const long_table& t, std::vector<std::string>& out) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const auto& name = t.columns[c];
        if (name == "run" || name == "group" || name == "update" || name.rfind("attr:", 0) == 0) continue;
        if (t.non_number[c]) continue;
        const bool enough = std::any_of(t.runs.begin(), t.runs.end(), [&](const long_table::run& r) {
            return std::count_if(r.values[c].begin(), r.values[c].end(), [](double v) { return !std::isnan(v); }) >= 2;
        });
        if (enough && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
}

}  // namespace logratio_cli
