// `logratio runs` / `report`: the statistics of every metric and stratum
// (runs_evidence.hpp).
#include "runs_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <logratio/core/error.hpp>

namespace logratio_cli {

namespace {

logratio::runs_options options_of(const std::string& compare, unsigned threads) {
    logratio::runs_options o;
    o.threads = threads;  // the runs analysed in parallel (identical results)
    if (compare.empty()) return o;
    const auto comma = compare.find(',');
    if (comma == std::string::npos || compare.find(',', comma + 1) != std::string::npos)
        throw logratio::error("--compare: give two groups as A,B (got '" + compare + "')");
    o.compare_a = compare.substr(0, comma);
    o.compare_b = compare.substr(comma + 1);
    return o;
}

logratio::runs_analysis analyze(const std::vector<run_input>& runs, const logratio::runs_options& o) {
    std::vector<const logratio::run_series*> series;  // no copy of the series
    series.reserve(runs.size());
    for (const auto& r : runs) series.push_back(&r.series);
    return logratio::analyze_runs(series, o);
}

std::string known_attributes(const std::vector<run_input>& runs) {
    std::map<std::string, std::size_t> keys;
    for (const auto& r : runs)
        for (const auto& kv : r.attributes) ++keys[kv.first];
    std::string s;
    std::size_t n = 0;
    for (const auto& kv : keys) {
        if (n++ == 20) return s + ", ...";
        s += (s.empty() ? "" : ", ") + kv.first;
    }
    return s.empty() ? std::string("none") : s;
}

/// The runs of each value of `by`, values in order of first appearance; runs
/// without it last, in a stratum of their own.
std::vector<stratum> split_by(const std::vector<run_input>& runs, const std::string& by) {
    std::vector<stratum> out;
    stratum none;
    none.value = "(none)";
    none.missing_key = true;
    for (const auto& r : runs) {
        auto it = r.attributes.find(by);
        if (it == r.attributes.end()) {
            none.runs.push_back(r);
            continue;
        }
        auto s = std::find_if(out.begin(), out.end(), [&](const stratum& x) { return x.value == it->second; });
        if (s == out.end()) {
            out.push_back(stratum{});
            s = out.end() - 1;
            s->value = it->second;
        }
        s->runs.push_back(r);
    }
    if (out.empty())
        throw logratio::error("--by '" + by + "': no run has this attribute (attributes: " + known_attributes(runs) +
                              "; `logratio runs ... --list-attributes` lists them with their values)");
    if (!none.runs.empty()) out.push_back(std::move(none));
    return out;
}

bool has_group(const std::vector<run_input>& runs, const std::string& g) {
    return std::any_of(runs.begin(), runs.end(), [&](const run_input& r) { return r.series.group == g; });
}

/// Each stratum analysed with the whole comparison's two groups (when it
/// holds both), and whether the difference holds there.
void analyze_strata(const runs_args& a, const logratio::runs_analysis& whole, evidence& e) {
    const double alpha = 1.0 - logratio::runs_options().confidence;
    for (auto& s : e.strata) {
        logratio::runs_options o;
        o.threads = a.threads;
        const auto* c = whole.comparison ? &*whole.comparison : nullptr;
        const bool both = c && has_group(s.runs, c->a) && has_group(s.runs, c->b);
        if (both) {
            o.compare_a = c->a;
            o.compare_b = c->b;
        }
        s.analysis = analyze(s.runs, o);
        if (!both) {
            s.analysis.comparison.reset();
            if (c)
                s.analysis.notes.push_back("stratum " + a.by + " = " + s.value + " lacks group '" +
                                           (has_group(s.runs, c->a) ? c->b : c->a) + "': no comparison there");
            continue;
        }
        const auto& sc = *s.analysis.comparison;
        ++e.agreement.assessed;
        auto holds = [&](const logratio::stats::welch_result& w, const logratio::stats::welch_result& all) {
            return w.pvalue < alpha && std::signbit(w.mean_diff) == std::signbit(all.mean_diff);
        };
        e.agreement.level_holds += holds(sc.means, c->means);
        e.agreement.drift_holds += holds(sc.slopes, c->slopes);
    }
    for (const auto& s : e.strata)
        if (s.missing_key)
            e.notes.push_back(std::to_string(s.runs.size()) + " run(s) without the attribute '" + a.by +
                              "' form their own stratum '(none)'");
}

}  // namespace

evidence analyze_evidence(const runs_args& a, const loaded_runs& L) {
    evidence e;
    const auto o = options_of(L.compare, a.threads);
    e.metrics.push_back({L.metric, &L.runs, analyze(L.runs, o)});
    for (const auto& m : L.others) {
        // a metric's comparison needs both groups to have runs with it
        e.metrics.push_back({m.metric, &m.runs, analyze(m.runs, o)});
    }
    if (!a.by.empty()) {
        e.by = a.by;
        e.strata = split_by(L.runs, a.by);
        analyze_strata(a, e.metrics[0].analysis, e);
    }
    for (const auto& n : e.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    return e;
}

namespace {

std::string count(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string source_line(const evidence& e) {
    const auto& an = e.metrics[0].analysis;
    std::size_t updates = 0;
    for (const auto& r : an.runs) updates += r.updates;
    std::string s = "metric " + e.metric + ": " + count(an.runs.size(), "run", "runs") + ", " +
                    count(updates, "update", "updates") + " (";
    for (std::size_t i = 0; i < an.groups.size(); ++i)
        s += (i ? "; " : "") + an.groups[i].group + ": " + count(an.groups[i].runs, "run", "runs") + ", " +
             count(an.groups[i].updates, "update", "updates");
    s += ")";
    if (e.min_updates) s += ", each run with >= " + std::to_string(e.min_updates) + " updates carrying it";
    if (!e.by.empty()) {
        const auto lacking = std::count_if(e.strata.begin(), e.strata.end(), [](const stratum& x) { return x.missing_key; });
        s += "; spanning " + count(e.strata.size() - static_cast<std::size_t>(lacking), "value", "values") + " of " + e.by;
        if (lacking) s += " (and " + count(e.strata.back().runs.size(), "run", "runs") + " without it)";
    }
    if (!e.left_out.empty()) {
        s += "; " + count(e.left_out.size(), "run", "runs") + " left out (";
        for (std::size_t i = 0; i < e.left_out.size(); ++i) {
            if (i == 5) {
                s += ", ...";
                break;
            }
            s += (i ? ", " : "") + e.left_out[i].run + ": " + e.left_out[i].reason;
        }
        s += ")";
    }
    return s;
}

std::string axis_name(const std::string& axis) { return axis.substr(0, axis.find(" (")); }

std::string axis_line(const runs_args& a, const std::string& axis) {
    if (axis == "update") return "";
    const double off = a.history.update_offset;
    std::string s = "step axis: update = " + axis_name(axis);
    if (off != 0) {
        char b[32];
        std::snprintf(b, sizeof b, " %c %g", off < 0 ? '-' : '+', std::fabs(off));
        s += b;
    }
    const auto paren = axis.find(" (");
    if (paren != std::string::npos) s += axis.substr(paren);
    if (a.history.steps_per_batch > 1)
        s += "; rollout batch = floor(step / " + std::to_string(a.history.steps_per_batch) + ")" +
             (a.position ? ", position " + std::to_string(*a.position) + " kept" : "");
    return s + "; values as logged, never interpolated";
}

std::string strata_line(const evidence& e) {
    if (e.by.empty()) return "";
    const std::string n = std::to_string(e.strata.size());
    const auto& c = e.metrics[0].analysis.comparison;
    if (!c)
        return "by " + e.by + ": " + n + (e.strata.size() == 1 ? " stratum" : " strata") +
               "; no two-group comparison to hold in them";
    const auto& g = e.agreement;
    if (g.assessed == 0)
        return "by " + e.by + ": none of the " + n + " strata holds both " + c->a + " and " + c->b +
               ": the difference is not checked within strata";
    const std::string y = std::to_string(g.assessed);
    std::string s = "by " + e.by + ": the level difference " + c->a + " - " + c->b + " holds in " +
                    std::to_string(g.level_holds) + " of the " + y + " strata with both groups, the drift difference in " +
                    std::to_string(g.drift_holds) + " (same sign, p < 0.05)";
    if (g.assessed < e.strata.size()) s += "; " + std::to_string(e.strata.size() - g.assessed) + " strata lack a group";
    if (g.level_holds == g.assessed && g.assessed == e.strata.size()) s += ": the level difference holds in every stratum";
    return s;
}

}  // namespace logratio_cli
