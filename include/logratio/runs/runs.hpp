#pragma once
// Run analysis: does the train-inference mismatch grow over training, and
// does it differ between groups of runs (sync vs async)? Input: one series
// per run of a metric over update numbers (missing values are NaN and are
// left out, never interpolated). Output: per-run trend statistics, per-group
// means with t intervals, and a two-group comparison. Every number is the one
// scipy computes on the same data (see stats/*.hpp for which function).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <exception>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "../core/error.hpp"
#include "../detail/parallel.hpp"
#include "../stats/descriptive.hpp"
#include "../stats/rank_tests.hpp"
#include "../stats/regression.hpp"
#include "../stats/t_tests.hpp"
#include "../stats/trend_fits.hpp"
#include "run_series.hpp"

LOGRATIO_NAMESPACE_BEGIN

struct run_stats {
    std::string run, group;
    std::size_t updates = 0;  ///< updates with a value
    std::size_t missing = 0;  ///< updates whose value is missing
    stats::summary summary;   ///< mean, std (ddof 1), median, max
    stats::linear_fit ols;    ///< scipy.stats.linregress(update, value) + 95% slope interval
    stats::theil_sen_fit theil_sen;
    stats::kendall_result kendall;
    std::vector<std::string> notes;  ///< why a statistic is absent
};

struct group_stats {
    std::string group;
    std::size_t runs = 0;     ///< runs with at least one value
    std::size_t updates = 0;  ///< pooled update count
    stats::mean_interval mean_of_means;
    stats::mean_interval mean_slope;  ///< mean of the runs' OLS slopes, t interval
    std::size_t rising = 0;   ///< runs with Kendall tau > 0 at p < 1 - confidence
    std::size_t falling = 0;  ///< runs with Kendall tau < 0 at p < 1 - confidence
    std::vector<std::string> notes;
};

struct group_comparison {
    std::string a, b;
    stats::welch_result means;   ///< Welch on run means: a - b
    stats::mann_whitney_result mann_whitney;  ///< on run means, U of group a
    stats::welch_result slopes;  ///< Welch on per-run OLS slopes
    std::vector<std::string> notes;
};

struct runs_options {
    double confidence = 0.95;
    /// Groups to compare (a - b); empty: the first two groups in input order.
    std::string compare_a, compare_b;
    /// Runs analysed in parallel (0 and 1: one thread). The results never
    /// depend on it: each run is analysed on its own, stored in input order.
    unsigned threads = 1;
};

struct runs_analysis {
    std::vector<run_stats> runs;
    std::vector<group_stats> groups;  ///< in order of first appearance
    std::optional<group_comparison> comparison;
    std::vector<std::string> notes;
};

namespace detail {
/// x (update) and y (value) where the value is finite, into reused buffers.
inline void keep_finite(const run_series& s, std::vector<double>& x, std::vector<double>& y) {
    x.clear();
    y.clear();
    for (std::size_t i = 0; i < s.value.size(); ++i)
        if (std::isfinite(s.value[i])) {
            x.push_back(s.update[i]);
            y.push_back(s.value[i]);
        }
}
}  // namespace detail

/// Trend statistics of one run (values NaN-filtered; every statistic that
/// its data cannot support is NaN with a note saying why).
inline run_stats analyze_run(const run_series& s, double confidence = 0.95) {
    if (s.update.size() != s.value.size())
        throw shape_error(detail::concat("run '", s.run, "': ", s.update.size(), " update numbers but ",
                                         s.value.size(), " values"));
    run_stats r;
    r.run = s.run;
    r.group = s.group;
    thread_local std::vector<double> x, y;  // one allocation per thread, not per run
    detail::keep_finite(s, x, y);
    r.updates = y.size();
    r.missing = s.value.size() - y.size();
    // +-inf is a value a tracker logged (a diverged metric), not a gap: left
    // out like NaN, but said
    const auto infinite = static_cast<std::size_t>(
        std::count_if(s.value.begin(), s.value.end(), [](double v) { return std::isinf(v); }));
    if (infinite)
        r.notes.push_back(detail::concat("run '", s.run, "': ", infinite,
                                         " infinite value(s) left out of its statistics, like missing ones"));
    r.summary = stats::describe(y.data(), y.size());
    const std::size_t n = y.size();
    const bool x_varies = n >= 2 && *std::min_element(x.begin(), x.end()) != *std::max_element(x.begin(), x.end());
    if (n < 2) {
        r.notes.push_back(detail::concat("run '", s.run, "' has ", n, " update(s) with a value: no trend"));
    } else if (!x_varies) {
        r.notes.push_back(detail::concat("run '", s.run, "': all updates have the same number: no trend"));
    } else {
        r.ols = stats::linregress(x.data(), y.data(), n, confidence);
        const auto trend = stats::theil_sen_and_kendall(x.data(), y.data(), n, confidence);
        r.theil_sen = trend.theil_sen;
        r.kendall = trend.kendall;
        if (n == 2) r.notes.push_back(detail::concat("run '", s.run, "' has 2 updates: no slope interval"));
        if (std::isnan(r.kendall.tau))
            r.notes.push_back(detail::concat("run '", s.run, "': constant values: Kendall's tau undefined"));
    }
    return r;
}

namespace detail {
/// analyze_run of every series on `threads` threads, each taking the next
/// run no thread has taken (long runs balance), the results in input order;
/// an error is the one of the first failing run in input order, as on one
/// thread.
inline std::vector<run_stats> analyze_each_run(const std::vector<const run_series*>& series, double confidence,
                                               unsigned threads) {
    std::vector<run_stats> out(series.size());
    std::vector<std::exception_ptr> err(series.size());
    std::atomic<std::size_t> next{0};
    const auto parts = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, series.size())));
    run_parts(parts, [&](unsigned) {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < series.size();) {
            try {
                out[i] = analyze_run(*series[i], confidence);
            } catch (...) {
                err[i] = std::current_exception();
            }
        }
    });
    for (const auto& e : err)
        if (e) std::rethrow_exception(e);
    return out;
}
}  // namespace detail

/// Per-run, per-group and two-group statistics (see the header comment);
/// the series by pointer (a caller holding them elsewhere copies none).
/// The runs are analysed on opt.threads threads (identical results).
inline runs_analysis analyze_runs(const std::vector<const run_series*>& series, const runs_options& opt = {}) {
    runs_analysis out;
    out.runs = detail::analyze_each_run(series, opt.confidence, opt.threads ? opt.threads : 1u);
    std::vector<std::string> order;
    for (std::size_t i = 0; i < series.size(); ++i) {
        if (std::find(order.begin(), order.end(), series[i]->group) == order.end()) order.push_back(series[i]->group);
        for (const auto& n : out.runs[i].notes) out.notes.push_back(n);
    }
    auto values_of = [&](const std::string& g, bool slopes) {
        std::vector<double> v;
        for (const auto& r : out.runs)
            if (r.group == g) {
                const double x = slopes ? r.ols.slope : r.summary.mean;
                if (std::isfinite(x)) v.push_back(x);
            }
        return v;
    };
    for (const auto& g : order) {
        group_stats gs;
        gs.group = g;
        for (const auto& r : out.runs)
            if (r.group == g && r.updates) {
                ++gs.runs;
                gs.updates += r.updates;
            }
        for (const auto& r : out.runs)
            if (r.group == g && r.kendall.pvalue < 1.0 - opt.confidence) {
                gs.rising += r.kendall.tau > 0;
                gs.falling += r.kendall.tau < 0;
            }
        const auto m = values_of(g, false);
        gs.mean_of_means = stats::t_interval(m.data(), m.size(), opt.confidence);
        const auto sl = values_of(g, true);
        gs.mean_slope = stats::t_interval(sl.data(), sl.size(), opt.confidence);
        if (m.size() < 2)
            gs.notes.push_back(detail::concat("group '", g, "' has ", m.size(),
                                              " run(s) with values: no interval for its mean"));
        for (const auto& n : gs.notes) out.notes.push_back(n);
        out.groups.push_back(std::move(gs));
    }
    std::string a = opt.compare_a, b = opt.compare_b;
    if (a.empty() != b.empty()) throw argument_error("compare: give both groups (A,B)");
    if (a.empty()) {
        if (order.size() < 2) {
            out.notes.push_back(detail::concat("only ", order.size(), " group(s): no comparison"));
            return out;
        }
        a = order[0];
        b = order[1];
    }
    for (const auto& g : {a, b})
        if (std::find(order.begin(), order.end(), g) == order.end()) {
            std::string known;
            for (const auto& o : order) known += (known.empty() ? "" : ", ") + o;
            throw argument_error(detail::concat("compare: no group '", g, "' (groups: ", known, ")"));
        }
    if (a == b) throw argument_error("compare: the two groups are the same ('" + a + "')");
    group_comparison c;
    c.a = a;
    c.b = b;
    const auto ma = values_of(a, false), mb = values_of(b, false);
    const auto sa = values_of(a, true), sb = values_of(b, true);
    c.means = stats::welch_ttest(ma.data(), ma.size(), mb.data(), mb.size(), opt.confidence);
    if (ma.size() < 2 || mb.size() < 2)
        c.notes.push_back(detail::concat("Welch's test needs two runs per group ('", a, "' has ", ma.size(), ", '",
                                         b, "' has ", mb.size(), ")"));
    if (!ma.empty() && !mb.empty())
        c.mann_whitney = stats::mann_whitney(ma.data(), ma.size(), mb.data(), mb.size());
    else
        c.notes.push_back("Mann-Whitney needs a run in each group");
    c.slopes = stats::welch_ttest(sa.data(), sa.size(), sb.data(), sb.size(), opt.confidence);
    for (const auto& n : c.notes) out.notes.push_back(n);
    out.comparison = std::move(c);
    return out;
}

/// Per-run, per-group and two-group statistics (see the header comment).
inline runs_analysis analyze_runs(const std::vector<run_series>& series, const runs_options& opt = {}) {
    std::vector<const run_series*> p;
    p.reserve(series.size());
    for (const auto& s : series) p.push_back(&s);
    return analyze_runs(p, opt);
}

/// Does a group's mismatch grow over the updates? The verdict's rule (the
/// first line of `logratio report`):
///   grows           the mean OLS slope's interval lies above 0 and most of
///                   the group's runs rise (Kendall tau > 0 at p < 1 - confidence);
///   probably_grows  one of the two;
///   shrinks         the mean slope's interval lies below 0;
///   no_clear_trend  otherwise.
enum class trend_verdict { grows, probably_grows, shrinks, no_clear_trend };

inline trend_verdict verdict_of(const group_stats& g) {
    const bool grows = g.mean_slope.low > 0, shrinks = g.mean_slope.high < 0;
    const bool majority_up = g.runs && 2 * g.rising > g.runs;
    if (grows && majority_up) return trend_verdict::grows;
    if (grows || majority_up) return trend_verdict::probably_grows;
    if (shrinks) return trend_verdict::shrinks;
    return trend_verdict::no_clear_trend;
}

/// "GROWS", "probably grows", "shrinks" or "no clear trend".
inline const char* verdict_label(trend_verdict v) {
    switch (v) {
        case trend_verdict::grows: return "GROWS";
        case trend_verdict::probably_grows: return "probably grows";
        case trend_verdict::shrinks: return "shrinks";
        case trend_verdict::no_clear_trend: break;
    }
    return "no clear trend";
}

/// The two-group comparison's verdict at level alpha = 1 - confidence: do
/// the groups' levels (Welch on run means) and drifts (Welch on run slopes)
/// differ?
struct comparison_verdict {
    bool level_differs = false;
    bool drift_differs = false;
};

inline comparison_verdict verdict_of(const group_comparison& c, double confidence = 0.95) {
    const double alpha = 1.0 - confidence;
    return {c.means.pvalue < alpha, c.slopes.pvalue < alpha};
}

LOGRATIO_NAMESPACE_END
