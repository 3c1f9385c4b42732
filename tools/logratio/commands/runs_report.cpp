// `logratio report`'s parts that come from the dumps (runs.hpp): the
// histogram of one dump, the numeric-vs-lag lines, the Doctor section.
#include <algorithm>
#include <cmath>
#include <optional>

#include "../io/dump_histogram.hpp"
#include "../output/html_report.hpp"
#include "../output/runs_output.hpp"
#include "doctor_scan.hpp"
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

report_inputs report_inputs_of(const runs_args& a, const loaded_runs& L, const logratio::runs_analysis& an,
                              report_storage& keep) {
    auto& h = keep.histogram;
    std::string dump = a.dump;
    if (dump.empty() && !L.dumps.empty()) {  // the worst update: largest value of the metric
        double best = -INFINITY;
        for (const auto& d : L.dumps)
            for (const auto& e : logratio::panel_entries(d.panel))
                if (e.first == L.metric && e.second && *e.second > best) {
                    best = *e.second;
                    dump = d.path;
                }
        if (dump.empty()) dump = L.dumps.front().path;
    }
    if (!dump.empty()) h = histogram_of_dump(dump);
    report_inputs r;
    r.metric = L.metric;
    r.source = source_list(a);
    r.analysis = &an;
    r.runs = &L.runs;
    r.histogram = h ? &*h : nullptr;
    r.split = split_lines(L);
    keep.doctor = diagnose_dumps(L.dumps, a.threads);
    r.doctor = &keep.doctor;
    r.axis = L.axis;
    return r;
}

}  // namespace logratio_cli
