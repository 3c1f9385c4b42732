// The analysis stage's end (runs_evidence.hpp's evidence_of): the evidence
// value completed with the runs table's facts and, for a report, the parts
// that come from the dumps (the histogram of one dump, the numeric-vs-lag
// lines, the doctor's findings) and the verdict.
#include <algorithm>
#include <cmath>
#include <optional>

#include "../io/dump_histogram.hpp"
#include "../output/runs_output.hpp"
#include "doctor_scan.hpp"
#include "runs_evidence.hpp"
#include "runs_render.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {

namespace {

std::string source_list(const runs_args& a) {
    std::string s;
    for (const auto& i : a.inputs) s += (s.empty() ? "" : " ") + i;
    return s;
}

}  // namespace

std::vector<std::string> split_lines(const loaded_runs& L) {
    std::vector<std::string> groups, out;
    for (const auto& d : L.dumps)
        if (d.split && std::find(groups.begin(), groups.end(), d.group) == groups.end()) groups.push_back(d.group);
    for (const auto& g : groups) {
        double tot = 0, num = 0, lag = 0;
        std::size_t n = 0;
        for (const auto& d : L.dumps)
            if (d.split && d.group == g) {
                tot += d.split->total.delta_abs_mean;
                num += d.split->numeric.delta_abs_mean;
                lag += d.split->lag.delta_abs_mean;
                ++n;
            }
        const double k = static_cast<double>(n);
        out.push_back("  " + g + " (" + std::to_string(n) + " dumps with old_logprobs): mean |delta| " +
                      fmt(tot / k) + "; per token delta = numeric + lag, mean |numeric| " + fmt(num / k) +
                      " (l_T(old) - l_E), mean |lag| " + fmt(lag / k) + " (l_T(new) - l_T(old)): " +
                      (lag > num ? "staleness dominates" : "kernels/precision dominate"));
    }
    return out;
}

namespace {

/// The dump whose histogram the report shows: --dump, else the worst update
/// (largest value of the metric), else the first dump; "" without dumps.
std::string histogram_dump(const runs_args& a, const loaded_runs& L) {
    std::string dump = a.dump;
    if (dump.empty() && !L.dumps.empty()) {
        double best = -INFINITY;
        for (const auto& d : L.dumps)
            for (const auto& e : logratio::panel_entries(d.panel))
                if (e.first == L.metric && e.second && *e.second > best) {
                    best = *e.second;
                    dump = d.path;
                }
        if (dump.empty()) dump = L.dumps.front().path;
    }
    return dump;
}

/// The verdict lines with the source line (which runs count) first.
std::vector<std::string> verdict_with_source(const runs_args& a, const evidence& e) {
    auto v = verdict_lines(e.metric, e.metrics[0].analysis, 0.95, axis_name(e.axis));
    v[0] = source_line(e);
    const auto ax = axis_line(a, e.axis);
    if (!ax.empty()) v.insert(v.begin() + 1, "  " + ax);
    const auto s = strata_line(e);
    if (!s.empty()) v.push_back("  " + s);
    return v;
}

/// A report's parts: the histogram of one dump, the numeric-vs-lag lines,
/// the doctor's findings over the dumps (its one run), the verdict, the
/// analysis sections.
report_parts report_parts_of(const runs_args& a, const loaded_runs& L, const evidence& e) {
    report_parts p;
    const std::string dump = histogram_dump(a, L);
    if (!dump.empty()) p.histogram = histogram_of_dump(dump);
    p.split = split_lines(L);
    p.doctor = diagnose_dumps(L.dumps, a.threads);
    p.verdict = verdict_with_source(a, e);
    p.source_line = p.verdict[0];
    p.analysis_sections = analysis_sections(e);
    return p;
}

}  // namespace

evidence evidence_of(const runs_args& a, const loaded_runs& L, bool report) {
    evidence e = analyze_evidence(a, L);
    e.metric = L.metric;
    e.source = source_list(a);
    e.axis = L.axis;
    e.runs = &L.runs;
    e.left_out = L.left_out;
    e.min_updates = L.min_updates;
    e.metrics_given = !a.metrics.empty();
    if (report) e.report = report_parts_of(a, L, e);
    return e;
}

}  // namespace logratio_cli
