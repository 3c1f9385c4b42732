// `logratio runs` / `report`: the inputs -- long tables, tracker histories
// (io/trackers: detect.hpp picks the reader, to_runs.hpp the step, metric and
// group), directories of dumps -- read into runs.
#include <cmath>
#include <cstdio>
#include <map>

#include <logratio/core/error.hpp>

#include "../io/trackers/detect.hpp"
#include "../io/trackers/to_runs.hpp"
#include "../output/panel_table.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {
namespace {

/// Runs from the dumps' panels: the metric is a SPEC key or a split column
/// (numeric_delta_abs_mean, lag_kl_k3, ...).
std::vector<run_input> runs_from_dumps(const std::vector<dump_panel>& ds, const std::string& metric) {
    std::vector<run_input> out;
    for (const auto& d : ds) {
        std::optional<double> v;
        bool known = false;
        for (const auto& e : dump_columns(d, true))
            if (e.first == metric) {
                known = true;
                v = e.second;
            }
        if (!known) throw logratio::error("no metric '" + metric + "' in a dump's panel (use a SPEC.md key)");
        auto it = std::find_if(out.begin(), out.end(), [&](const run_input& r) { return r.series.run == d.run; });
        if (it == out.end()) {
            run_input r;
            r.series.run = d.run;
            r.series.group = d.group;
            out.push_back(r);
            it = out.end() - 1;
        }
        if (it->series.group != d.group)
            throw logratio::error(d.path + ": run '" + d.run + "' is in group '" + d.group + "' here but in '" +
                                  it->series.group + "' in another dump");
        it->series.update.push_back(d.update);
        it->series.value.push_back(v ? *v : std::nan(""));
    }
    return out;
}

/// Tracker histories -> runs (trackers/to_runs.hpp does the step, metric and
/// group choices); says on stderr which reader took each input.
void runs_from_histories(const runs_args& a, const trackers::history_set& set, loaded_runs& L,
                         std::vector<std::string>& notes) {
    {
        std::map<std::string, std::size_t> steps_used;
        std::size_t taken = 0;
        for (const auto& h : set.runs) {
            if (!h.metrics.count(L.metric)) {
                notes.push_back(set.input + ": run '" + h.name + "' has no '" + L.metric + "': left out");
                continue;
            }
            std::string step;
            run_input r = trackers::run_from_history(h, L.metric, a.history, step);
            ++steps_used[step];
            if (set.runs.size() == 1 && !a.history.run.empty()) r.series.run = a.history.run;
            if (set.runs.size() == 1 && !a.history.group.empty()) r.series.group = a.history.group;
            L.runs.push_back(std::move(r));
            ++taken;
        }
        std::string how;
        for (const auto& [st, n] : steps_used) how += (how.empty() ? "" : ", ") + st + (steps_used.size() > 1 ? " (" + std::to_string(n) + " runs)" : "");
        std::fprintf(stderr, "read %zu run(s) from %s %s%s\n", set.runs.size(), set.reader.c_str(), set.input.c_str(),
                     how.empty() ? "" : ("; step: " + how).c_str());
        if (taken == 0) throw logratio::error(set.input + ": no run has the metric '" + L.metric + "'");
        notes.insert(notes.end(), set.notes.begin(), set.notes.end());
    }
}

/// Runs without a group (tracker layouts that give none) join one group
/// "all", and the notes say that a comparison needs groups.
void settle_groups(const runs_args& a, loaded_runs& L, std::vector<std::string>& notes) {
    if (!a.group_pattern.empty()) {
        trackers::apply_group_pattern(L.runs, a.group_pattern);
        return;
    }
    bool ungrouped = false;
    for (auto& r : L.runs)
        if (r.series.group.empty()) {
            r.series.group = "all";
            ungrouped = true;
        }
    if (ungrouped)
        notes.push_back("runs without a group are in group 'all': a sync-vs-async comparison needs groups "
                        "(--group-pattern REGEX on run names, or <group>/<run> directories)");
}

}  // namespace

loaded_runs load_runs(const runs_args& a) {
    loaded_runs L;
    std::vector<trackers::detected_input> ins;
    std::vector<const trackers::history_set*> sets;
    std::vector<std::string> notes;
    // Of a tracker history only what the analysis uses is read (the metric or
    // the candidates for it, the step and gradient-norm columns).
    const auto keys = trackers::keys_to_read(a.metric, a.history.step_column, a.history.grad_norm_column);
    for (const auto& in : a.inputs) ins.push_back(trackers::read_input(in, a.format, keys));
    for (const auto& d : ins)
        if (d.kind == trackers::detected_input::history) sets.push_back(&d.set);
    L.metric = !a.metric.empty() ? a.metric : sets.empty() ? std::string("delta_abs_mean")
                                                            : trackers::choose_metric(sets, "", notes);
    if (L.metric.rfind("training/rollout_probs_diff", 0) == 0)
        notes.push_back("'" + L.metric + "' (verl) is a difference of PROBABILITIES |exp(l_T) - exp(l_E)|, not of "
                        "log-probs: it is not delta and shrinks where tokens are unlikely");
    for (std::size_t i = 0; i < ins.size(); ++i) {  // in the order given: the first two groups are compared
        const auto& d = ins[i];
        if (d.kind == trackers::detected_input::dumps) {
            logratio::panel_options opt;
            auto ds = panels_of_directory(a.inputs[i], a.pattern, opt, a.threads);
            auto rs = runs_from_dumps(ds, L.metric);
            L.runs.insert(L.runs.end(), rs.begin(), rs.end());
            L.dumps.insert(L.dumps.end(), ds.begin(), ds.end());
        } else if (d.kind == trackers::detected_input::long_table) {
            if (!a.history.step_column.empty())
                throw logratio::error(a.inputs[i] + ": --step-column applies to logging-history exports; this is a long-format table");
            long_format_runs(d.table, L.metric, L.runs);
        } else {
            runs_from_histories(a, d.set, L, notes);
            ins[i].set = trackers::history_set();  // the points are in L.runs now: free the rest
        }
    }
    for (std::size_t i = 0; i < L.runs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (L.runs[i].series.run == L.runs[j].series.run)
                throw logratio::error("run '" + L.runs[i].series.run + "' appears twice in the inputs (runs never merge; "
                                      "rename one, or give each export once)");
    settle_groups(a, L, notes);
    if (a.position) {
        for (auto& r : L.runs) {
            if (r.position.size() != r.series.update.size())
                throw logratio::error("--position needs logging-history exports (with --steps-per-batch)");
            keep_position(r, *a.position);
        }
    }
    if (L.runs.empty()) throw logratio::error("no runs in the inputs");
    for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    L.runs.front().notes.insert(L.runs.front().notes.begin(), notes.begin(), notes.end());
    return L;
}

}  // namespace logratio_cli
