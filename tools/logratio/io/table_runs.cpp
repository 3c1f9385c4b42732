#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <logratio/core/error.hpp>

#include "table.hpp"

namespace logratio_cli {

namespace {

std::string trimmed(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

/// The runs' attributes from a long table's other columns: a column named
/// "attr:<key>" (an error if a run has two values in it), or a text column
/// (not a number somewhere) whose non-empty value is the same on every row
/// of each run (a text column that varies within a run is not an attribute:
/// it is passed over). Numeric columns are metrics, never attributes.
/// `run_of[row]` is the row's index in `out`.
/// Which columns hold a cell that is not a number: one pass over the rows
/// in storage order (a pass per column strides over every row's cells: at
/// 50 columns x 100,000 rows, cache misses were most of the reading time).
std::vector<char> text_columns(const text_table& t) {
    const std::size_t n = t.columns.size();
    std::vector<char> text(n, 0);
    std::size_t left = n;
    for (std::size_t i = 0; i < t.row_count() && left; ++i)
        for (std::size_t c = 0; c < n; ++c)
            if (!text[c] && !cell_number(t.cell(i, c))) text[c] = 1, --left;
    return text;
}

void long_format_attributes(const text_table& t, const std::vector<std::size_t>& run_of, std::vector<run_input>& out) {
    using logratio::detail::concat;
    const std::vector<char> is_text = text_columns(t);
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const std::string& name = t.columns[c];
        if (name == "run" || name == "group" || name == "update") continue;
        const bool forced = name.rfind("attr:", 0) == 0;
        const bool text = is_text[c];
        if (!forced && !text) continue;
        std::vector<std::string> value(out.size());
        std::vector<std::size_t> line(out.size(), 0);
        bool constant = true;
        for (std::size_t i = 0; i < t.row_count() && constant; ++i) {
            std::string v = trimmed(t.cell(i, c));
            if (v.empty()) continue;
            const std::size_t r = run_of[i];
            if (line[r] == 0) value[r] = std::move(v), line[r] = t.line[i];
            else if (value[r] != v) {
                if (forced)
                    throw logratio::format_error(concat(t.path, ": line ", t.line[i], ", column '", name, "': run '",
                                                        out[r].series.run, "' has '", v, "' here but '", value[r],
                                                        "' on line ", line[r], " (an attribute has one value per run)"));
                constant = false;
            }
        }
        if (!constant) continue;
        const std::string key = forced ? name.substr(5) : name;
        for (std::size_t r = 0; r < out.size(); ++r)
            if (line[r]) out[r].attributes[key] = value[r];
    }
}

}  // namespace

void long_format_runs(const text_table& t, const std::string& metric, std::vector<run_input>& out) {
    using logratio::format_error;
    using logratio::detail::concat;
    const auto rc = t.column("run"), gc = t.column("group"), uc = t.column("update"), mc = t.column(metric);
    if (!rc || !uc)
        throw format_error(t.path + ": a long-format table needs columns 'run' and 'update' (columns: " +
                           t.column_list() + ")");
    if (!mc) throw format_error(t.path + ": no column '" + metric + "' (columns: " + t.column_list() + ")");
    std::map<std::string, std::size_t> where;
    std::map<std::pair<std::string, double>, std::size_t> seen;
    const std::size_t first_run = out.size();
    std::vector<std::size_t> run_of(t.row_count());  // each row's run, counted from first_run
    for (std::size_t i = 0; i < t.row_count(); ++i) {
        const std::string run(t.cell(i, *rc));
        const std::string group = gc ? std::string(t.cell(i, *gc)) : std::string("all");
        if (run.empty()) throw format_error(concat(t.path, ": line ", t.line[i], ": empty 'run' cell"));
        const double u = parse_cell(t, i, *uc);
        if (!std::isfinite(u))  // an empty cell is missing; "nan" or "inf" is a value, said as one
            throw format_error(t.cell(i, *uc).empty()
                                   ? concat(t.path, ": line ", t.line[i], ": missing 'update' cell")
                                   : concat(t.path, ": line ", t.line[i], ": 'update' is ", u, " (the update column "
                                            "needs a finite number)"));
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
        run_of[i] = w.first->second - first_run;
        if (r.series.group != group)
            throw format_error(concat(t.path, ": line ", t.line[i], ": run '", run, "' is in group '", group,
                                      "' here but in '", r.series.group, "' before"));
        r.series.update.push_back(u);
        r.series.value.push_back(parse_cell(t, i, *mc));
    }
    std::vector<run_input> mine(std::make_move_iterator(out.begin() + first_run), std::make_move_iterator(out.end()));
    long_format_attributes(t, run_of, mine);
    std::move(mine.begin(), mine.end(), out.begin() + first_run);
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

std::string path_stem(const std::string& p) {
    std::string s = p.substr(p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/') + 1);
    const auto dot = s.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}
std::string parent_name(const std::string& p) {
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos) return "all";
    const std::string d = p.substr(0, slash);
    const auto s2 = d.find_last_of('/');
    const std::string name = s2 == std::string::npos ? d : d.substr(s2 + 1);
    return name.empty() || name == "." ? "all" : name;
}

run_input history_run(const text_table& t, const std::string& metric, const history_options& o) {
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

void keep_position(run_input& r, long position) {
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
