#include "wandb_chart.hpp"

#include <cmath>
#include <map>
#include <vector>

#include <logratio/core/error.hpp>

#include "run_builder.hpp"

namespace logratio_cli::trackers {

namespace {

/// "<run> - <metric>[__MIN|__MAX]" split at the last " - ".
struct chart_column {
    std::string run, metric, suffix;  ///< suffix: "", "__MIN" or "__MAX"
};

bool split_chart_column(const std::string& h, chart_column& out) {
    std::string s = h;
    out.suffix.clear();
    for (const char* suf : {"__MIN", "__MAX"})
        if (ends_with(s, suf)) {
            out.suffix = suf;
            s.resize(s.size() - 5);
        }
    const auto dash = s.rfind(" - ");
    if (dash == std::string::npos || dash == 0 || dash + 3 >= s.size()) return false;
    out.run = s.substr(0, dash);
    out.metric = s.substr(dash + 3);
    return true;
}

}  // namespace

bool looks_like_chart_export(const text_table& t) {
    if (t.columns.size() < 2) return false;
    bool minmax = false;
    chart_column c;
    for (std::size_t i = 1; i < t.columns.size(); ++i) {
        if (!split_chart_column(t.columns[i], c)) return false;
        minmax = minmax || !c.suffix.empty();
    }
    return minmax || t.columns[0] == "Step";
}

history_set read_wandb_chart(const text_table& t) {
    using logratio::detail::concat;
    if (!looks_like_chart_export(t))
        throw logratio::format_error(t.path + ": not a W&B chart export (want \"Step\", \"<run> - <metric>\", ... columns; got: " +
                                     t.column_list() + ")");
    const std::string step_name = t.columns[0] == "Step" ? "_step" : t.columns[0];
    std::map<std::string, std::size_t> base;  // "<run> - <metric>" -> column
    std::vector<chart_column> cols(t.columns.size());
    for (std::size_t i = 1; i < t.columns.size(); ++i) {
        split_chart_column(t.columns[i], cols[i]);
        if (cols[i].suffix.empty()) base[cols[i].run + " - " + cols[i].metric] = i;
    }
    for (std::size_t i = 1; i < t.columns.size(); ++i)
        if (!cols[i].suffix.empty() && !base.count(cols[i].run + " - " + cols[i].metric))
            throw logratio::format_error(t.path + ": column '" + t.columns[i] + "' has no value column '" + cols[i].run +
                                         " - " + cols[i].metric + "' (was the export cut off?)");
    std::map<std::string, run_builder> runs;
    std::map<std::string, std::size_t> bucketed;  // run -> rows with MIN != MAX
    bool grouped = false;
    for (std::size_t r = 0; r < t.row_count(); ++r) {
        const std::string place = concat(t.path, ": line ", t.line[r]);
        const double s = parse_cell(t, r, 0);
        if (std::isnan(s)) throw logratio::format_error(place + ": empty '" + t.columns[0] + "' cell");
        const std::int64_t step = integer_step(s, place);
        std::map<std::string, std::pair<double, double>> range;  // "<run> - <metric>" -> (MIN, MAX)
        for (std::size_t i = 1; i < t.columns.size(); ++i) {
            const auto& c = cols[i];
            if (t.cell(r, i).find_first_not_of(" \t") == std::string_view::npos) continue;  // "": no point
            const double v = parse_cell(t, r, i);
            const std::string key = c.run + " - " + c.metric;
            if (c.suffix == "__MIN") range.emplace(key, std::make_pair(v, v)).first->second.first = v;
            else if (c.suffix == "__MAX") range.emplace(key, std::make_pair(v, v)).first->second.second = v;
            else {
                auto it = runs.find(c.run);
                if (it == runs.end()) {
                    it = runs.emplace(c.run, run_builder(c.run, t.path, step_name)).first;
                    if (c.run.rfind("Group: ", 0) == 0) {
                        it->second.run().group = c.run.substr(7);
                        grouped = true;
                    }
                }
                it->second.add(c.metric, step, v, std::nan(""), t.path, t.line[r]);
            }
        }
        for (const auto& [key, mm] : range)  // NaN == NaN here: a NaN point is not a bucket
            if (mm.first != mm.second && !(std::isnan(mm.first) && std::isnan(mm.second)))
                ++bucketed[cols[base[key]].run];
    }
    history_set out;
    out.reader = "W&B chart export";
    out.input = t.path;
    if (runs.empty()) throw logratio::format_error(t.path + ": no values in the chart export");
    out.runs = finish_runs(runs);
    for (const auto& [run, n] : bucketed)
        out.notes.push_back(concat(t.path, ": run '", run, "': ", n, " point(s) are bucket means (MIN != MAX: W&B ",
                                   "sampled the run for the chart); export the full history (scan_history) for exact values"));
    if (grouped)
        out.notes.push_back(t.path + ": a grouped chart: each 'Group: <g>' line is one series (the mean over the group's "
                                     "runs), not a run; export the chart ungrouped for one series per run");
    return out;
}

}  // namespace logratio_cli::trackers
