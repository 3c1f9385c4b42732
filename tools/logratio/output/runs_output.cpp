#include "runs_output.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include <logratio/runs/runs.hpp>

namespace logratio_cli {

namespace {

nlohmann::ordered_json num(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}
nlohmann::ordered_json pair_json(double a, double b) { return nlohmann::ordered_json::array({num(a), num(b)}); }

/// A p-value into `o[key]`: the number, or below p_floor the bound p_floor
/// with `<key>_is_upper_bound: true` (never a p of 0, which no test gives).
void put_p(nlohmann::ordered_json& o, const std::string& key, double p) {
    if (std::isfinite(p) && p < p_floor) {
        o[key] = p_floor;
        o[key + "_is_upper_bound"] = true;
    } else {
        o[key] = num(p);
    }
}

}  // namespace

std::vector<std::pair<long, std::pair<std::size_t, double>>> position_means(const run_input& r) {
    std::map<long, std::pair<std::size_t, double>> m;
    for (std::size_t i = 0; i < r.position.size(); ++i)
        if (std::isfinite(r.series.value[i])) {
            auto& e = m[r.position[i]];
            ++e.first;
            e.second += r.series.value[i];
        }
    std::vector<std::pair<long, std::pair<std::size_t, double>>> out;
    for (auto& [p, e] : m) out.push_back({p, {e.first, e.second / static_cast<double>(e.first)}});
    return out;
}

nlohmann::ordered_json runs_json(const std::string& metric, const logratio::runs_analysis& a,
                                 const std::vector<run_input>& in) {
    nlohmann::ordered_json j;
    j["metric"] = metric;
    j["runs"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < a.runs.size(); ++i) {
        const auto& r = a.runs[i];
        nlohmann::ordered_json o;
        o["run"] = r.run;
        o["group"] = r.group;
        o["updates"] = r.updates;
        o["mean"] = num(r.summary.mean);
        o["std"] = num(r.summary.std);
        o["median"] = num(r.summary.median);
        o["max"] = num(r.summary.max);
        o["slope"] = num(r.ols.slope);
        o["slope_stderr"] = num(r.ols.slope_stderr);
        o["slope_ci"] = pair_json(r.ols.slope_ci_low, r.ols.slope_ci_high);
        put_p(o, "slope_p", r.ols.pvalue);
        o["theil_sen_slope"] = num(r.theil_sen.slope);
        o["theil_sen_ci"] = pair_json(r.theil_sen.low, r.theil_sen.high);
        o["kendall_tau"] = num(r.kendall.tau);
        put_p(o, "kendall_p", r.kendall.pvalue);
        o["missing"] = r.missing;
        if (i < in.size()) {
            if (!in[i].zero_grad_norm.empty()) o["zero_grad_norm_updates"] = in[i].zero_grad_norm;
            const auto pm = position_means(in[i]);
            if (pm.size() > 1) {
                auto arr = nlohmann::ordered_json::array();
                for (const auto& [p, e] : pm)
                    arr.push_back({{"position", p}, {"updates", e.first}, {"mean", num(e.second)}});
                o["positions"] = arr;
            }
        }
        j["runs"].push_back(o);
    }
    j["groups"] = nlohmann::ordered_json::array();
    for (const auto& g : a.groups) {
        nlohmann::ordered_json o;
        o["group"] = g.group;
        o["runs"] = g.runs;
        o["updates"] = g.updates;
        o["mean_of_means"] = num(g.mean_of_means.mean);
        o["ci"] = pair_json(g.mean_of_means.low, g.mean_of_means.high);
        o["mean_slope"] = num(g.mean_slope.mean);
        o["mean_slope_ci"] = pair_json(g.mean_slope.low, g.mean_slope.high);
        o["rising_runs"] = g.rising;
        o["falling_runs"] = g.falling;
        j["groups"].push_back(o);
    }
    if (a.comparison) {
        const auto& c = *a.comparison;
        auto& o = j["comparison"];
        o = {{"a", c.a},
             {"b", c.b},
             {"mean_diff", num(c.means.mean_diff)},
             {"mean_diff_ci", pair_json(c.means.ci_low, c.means.ci_high)},
             {"welch_t", num(c.means.t)},
             {"welch_df", num(c.means.df)}};
        put_p(o, "welch_p", c.means.pvalue);
        o["mannwhitney_u"] = num(c.mann_whitney.u);
        put_p(o, "mannwhitney_p", c.mann_whitney.pvalue);
        o["slope_welch_t"] = num(c.slopes.t);
        o["slope_welch_df"] = num(c.slopes.df);
        put_p(o, "slope_welch_p", c.slopes.pvalue);
    } else {
        j["comparison"] = nullptr;
    }
    auto notes = nlohmann::ordered_json::array();
    for (const auto& r : in)
        for (const auto& n : r.notes) notes.push_back(n);
    for (const auto& n : a.notes) notes.push_back(n);
    j["notes"] = notes;
    return j;
}

std::string runs_json_text(const std::string& metric, const logratio::runs_analysis& a,
                           const std::vector<run_input>& in) {
    return runs_json(metric, a, in).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string fmt(double v, const char* f) {
    if (!std::isfinite(v)) return "-";
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string p_cell(double p, const char* f) { return std::isfinite(p) && p < p_floor ? "<1e-300" : fmt(p, f); }

std::string p_phrase(double p, const char* f) {
    return std::isfinite(p) && p < p_floor ? "p < 1e-300" : "p = " + fmt(p, f);
}

void print_runs_table(const std::string& metric, const logratio::runs_analysis& a) {
    std::printf("metric: %s\n\n", metric.c_str());
    std::printf("%-16s %-8s %7s %11s %11s %11s %11s %12s %24s %9s %8s %9s\n", "run", "group", "updates", "mean", "std",
                "median", "max", "slope", "slope 95% CI", "slope p", "tau", "tau p");
    for (const auto& r : a.runs)
        std::printf("%-16s %-8s %7zu %11s %11s %11s %11s %12s %24s %9s %8s %9s\n", r.run.c_str(), r.group.c_str(),
                    r.updates, fmt(r.summary.mean).c_str(), fmt(r.summary.std).c_str(), fmt(r.summary.median).c_str(),
                    fmt(r.summary.max).c_str(), fmt(r.ols.slope, "%.3e").c_str(),
                    ("[" + fmt(r.ols.slope_ci_low, "%.2e") + ", " + fmt(r.ols.slope_ci_high, "%.2e") + "]").c_str(),
                    p_cell(r.ols.pvalue).c_str(), fmt(r.kendall.tau, "%.3f").c_str(), p_cell(r.kendall.pvalue).c_str());
    std::printf("\n%-10s %5s %8s %12s %26s %12s %8s\n", "group", "runs", "updates", "mean", "95% CI", "mean slope",
                "rising");
    for (const auto& g : a.groups)
        std::printf("%-10s %5zu %8zu %12s %26s %12s %5zu/%zu\n", g.group.c_str(), g.runs, g.updates,
                    fmt(g.mean_of_means.mean).c_str(),
                    ("[" + fmt(g.mean_of_means.low) + ", " + fmt(g.mean_of_means.high) + "]").c_str(),
                    fmt(g.mean_slope.mean, "%.3e").c_str(), g.rising, g.runs);
    if (a.comparison) {
        const auto& c = *a.comparison;
        std::printf("\n%s - %s: mean difference %s [95%% CI %s, %s]; Welch t = %s (df %s), %s; "
                    "Mann-Whitney U = %s, %s%s\n",
                    c.a.c_str(), c.b.c_str(), fmt(c.means.mean_diff).c_str(), fmt(c.means.ci_low).c_str(),
                    fmt(c.means.ci_high).c_str(), fmt(c.means.t).c_str(), fmt(c.means.df).c_str(),
                    p_phrase(c.means.pvalue, "%.3g").c_str(), fmt(c.mann_whitney.u).c_str(),
                    p_phrase(c.mann_whitney.pvalue, "%.3g").c_str(), c.mann_whitney.exact ? " (exact)" : "");
        std::printf("slopes %s - %s: Welch t = %s (df %s), %s\n", c.a.c_str(), c.b.c_str(), fmt(c.slopes.t).c_str(),
                    fmt(c.slopes.df).c_str(), p_phrase(c.slopes.pvalue, "%.3g").c_str());
    }
}

std::vector<std::string> verdict_lines(const std::string& metric, const logratio::runs_analysis& a,
                                       double confidence, const std::string& axis) {
    std::vector<std::string> out;
    const double alpha = 1.0 - confidence;
    std::size_t updates = 0;
    for (const auto& r : a.runs) updates += r.updates;
    std::string head = "metric " + metric + ": " + std::to_string(updates) + " updates of " +
                       std::to_string(a.runs.size()) + " runs (";
    for (std::size_t i = 0; i < a.groups.size(); ++i)
        head += (i ? ", " : "") + a.groups[i].group + " " + std::to_string(a.groups[i].runs);
    out.push_back(head + ")");
    for (const auto& g : a.groups) {
        const std::string w = logratio::verdict_label(logratio::verdict_of(g));
        out.push_back("  " + g.group + ": " + w + " - " + std::to_string(g.rising) + "/" + std::to_string(g.runs) +
                      " runs rise (Kendall p < " + fmt(alpha, "%g") + "), " + std::to_string(g.falling) +
                      " fall; mean slope " + fmt(g.mean_slope.mean, "%.3g") + " per " + axis + " [" +
                      fmt(g.mean_slope.low, "%.3g") + ", " + fmt(g.mean_slope.high, "%.3g") + "]; level " +
                      fmt(g.mean_of_means.mean, "%.4g") + " [" + fmt(g.mean_of_means.low, "%.4g") + ", " +
                      fmt(g.mean_of_means.high, "%.4g") + "]");
    }
    if (a.comparison) {
        const auto& c = *a.comparison;
        const logratio::comparison_verdict cv = logratio::verdict_of(c, confidence);
        const bool level = cv.level_differs, slope = cv.drift_differs;
        out.push_back("  " + c.a + " vs " + c.b + ": level " + (level ? "differs" : "not distinguishable") +
                      " (difference " + fmt(c.means.mean_diff, "%.3g") + " [" + fmt(c.means.ci_low, "%.3g") + ", " +
                      fmt(c.means.ci_high, "%.3g") + "], Welch " + p_phrase(c.means.pvalue) +
                      ", Mann-Whitney " + p_phrase(c.mann_whitney.pvalue) + "); drift " +
                      (slope ? "differs" : "not distinguishable") + " (slope Welch " + p_phrase(c.slopes.pvalue) + ")");
    }
    return out;
}

}  // namespace logratio_cli
