// The logging-history export of one run (history_run, keep_position) and
// path names; long tables are read by io/table_stream.hpp.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "table.hpp"

namespace logratio_cli {

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
