// Run analysis against scipy: tests/gen_runs_reference.py wrote each case's
// table and the values scipy.stats computes on it (linregress, theilslopes,
// kendalltau, ttest_ind(equal_var=False), mannwhitneyu, t intervals); here
// the same tables go through the CLI's table reader and logratio's
// statistics, and every number must agree to 1e-9 relative.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include <boost/math/distributions/students_t.hpp>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <logratio/runs/runs.hpp>
#include <logratio/stats/rank_tests.hpp>

#include "runs_output.hpp"
#include "long_runs.hpp"
#include "table.hpp"

namespace {

using json = nlohmann::json;

std::string data(const std::string& name) { return std::string(LOGRATIO_TEST_DATA) + "/runs/" + name; }

// Every value of `want` (scipy) must be in `got` and agree: numbers to 1e-9
// relative (1e-15 absolute for values that are rounding noise), nulls null.
void compare(const json& got, const json& want, const std::string& path, int& checked) {
    if (want.is_object()) {
        REQUIRE_MESSAGE(got.is_object(), path);
        for (auto it = want.begin(); it != want.end(); ++it) {
            REQUIRE_MESSAGE(got.contains(it.key()), (path + "." + it.key() + " missing"));
            compare(got[it.key()], it.value(), path + "." + it.key(), checked);
        }
    } else if (want.is_array()) {
        REQUIRE_MESSAGE(got.is_array(), path);
        REQUIRE_MESSAGE(got.size() == want.size(), path);
        for (std::size_t i = 0; i < want.size(); ++i) compare(got[i], want[i], path + "[" + std::to_string(i) + "]", checked);
    } else if (want.is_null()) {
        CHECK_MESSAGE(got.is_null(), (path + " should be null, is " + got.dump()));
    } else if (want.is_number()) {
        REQUIRE_MESSAGE(got.is_number(), (path + " should be " + want.dump() + ", is " + got.dump()));
        const double g = got.get<double>(), w = want.get<double>();
        const double err = std::fabs(g - w);
        CHECK_MESSAGE(err <= 1e-9 * std::fabs(w) + 1e-15,
                      (path + ": logratio " + std::to_string(g) + ", scipy " + std::to_string(w) +
                       ", rel err " + std::to_string(err / std::fabs(w))));
        ++checked;
    } else {
        CHECK_MESSAGE(got == want, path);
    }
}

json analyze_case(const std::string& csv, const std::string& metric, const std::string& a = "",
                  const std::string& b = "") {
    const auto t = logratio_cli::read_table(data(csv));
    std::vector<logratio_cli::run_input> in;
    logratio_test::long_runs(t, metric, in);
    std::vector<logratio::run_series> s;
    for (const auto& r : in) s.push_back(r.series);
    logratio::runs_options o;
    o.compare_a = a;
    o.compare_b = b;
    return json::parse(logratio_cli::runs_json(metric, logratio::analyze_runs(s, o), in).dump());
}

json expected(const std::string& name) {
    std::ifstream f(data(name));
    REQUIRE(f);
    return json::parse(f);
}

}  // namespace

TEST_CASE("runs: every statistic equals scipy's on the reference cases") {
    struct c {
        const char *csv, *want, *metric, *a, *b;
    };
    const c cases[] = {
        {"mixed.csv", "mixed.expected.json", "delta_abs_mean", "", ""},
        {"mixed_async_first.csv", "mixed_async_first.expected.json", "delta_abs_mean", "async", "sync"},
        {"large.csv", "large.expected.json", "delta_abs_mean", "", ""},
        {"ties.csv", "ties.expected.json", "delta_abs_mean", "", ""},
        {"edge.csv", "edge.expected.json", "delta_abs_mean", "", ""},
        {"edge_kl.csv", "edge_kl.expected.json", "kl_k3", "", ""},
    };
    for (const auto& k : cases) {
        INFO(k.csv);
        int checked = 0;
        compare(analyze_case(k.csv, k.metric, k.a, k.b), expected(k.want), k.csv, checked);
        CHECK(checked > 20);
    }
}

TEST_CASE("runs: exact and asymptotic paths are the ones scipy takes") {
    using namespace logratio::stats;
    // no ties, n <= 33: exact Kendall; n = 40: asymptotic
    std::vector<double> x(40), y(40);
    for (int i = 0; i < 40; ++i) {
        x[static_cast<std::size_t>(i)] = i;
        y[static_cast<std::size_t>(i)] = std::sin(i * 1.7) + 0.05 * i;
    }
    CHECK(kendall_tau(x.data(), y.data(), 30).exact);
    CHECK_FALSE(kendall_tau(x.data(), y.data(), 40).exact);
    // Mann-Whitney: exact when a sample has <= 8 values and nothing ties
    const double a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    const auto mw = mann_whitney(a, 4, b, 10);
    CHECK(mw.exact);
    CHECK(mw.u == 0.0);
    // all 4 lowest of 14: P = 2 / C(14, 4) = 2 / 1001
    CHECK(mw.pvalue == doctest::Approx(2.0 / 1001.0).epsilon(1e-14));
    const double c[] = {1, 2, 2, 4};
    CHECK_FALSE(mann_whitney(c, 4, b, 10).exact);
    // Kendall exact: perfectly ordered n = 5 -> 2 / 5! = 1/60
    const double u[] = {1, 2, 3, 4, 5};
    const auto k = kendall_tau(u, u, 5);
    CHECK(k.tau == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(k.pvalue == doctest::Approx(2.0 / 120.0).epsilon(1e-14));
}

TEST_CASE("runs: degenerate inputs give absent values and a note, not a crash") {
    logratio::run_series one{"r", "g", {1}, {0.5}};
    const auto r = logratio::analyze_run(one);
    CHECK(r.updates == 1);
    CHECK(std::isnan(r.ols.slope));
    CHECK_FALSE(r.notes.empty());
    logratio::run_series allnan{"n", "g", {1, 2, 3}, {NAN, NAN, NAN}};
    const auto rn = logratio::analyze_run(allnan);
    CHECK(rn.updates == 0);
    CHECK(rn.missing == 3);
    CHECK(std::isnan(rn.summary.mean));
    CHECK(rn.notes.size() == 1);  // no value: no trend; NaN is missing, not said once more
    // +-inf (a diverged metric) is left out like NaN, and said
    logratio::run_series inf{"i", "g", {1, 2, 3, 4}, {0.5, INFINITY, -INFINITY, 0.25}};
    const auto ri = logratio::analyze_run(inf);
    CHECK(ri.updates == 2);
    CHECK(ri.missing == 2);
    bool said = false;
    for (const auto& n : ri.notes) said |= n == "run 'i': 2 infinite value(s) left out of its statistics, like missing ones";
    CHECK(said);
    // a group with one run: no interval, a note; comparison still has Mann-Whitney
    const auto an = logratio::analyze_runs({{"a", "sync", {1, 2, 3}, {1, 2, 3}},
                                            {"b", "async", {1, 2, 3}, {2, 3, 5}},
                                            {"c", "async", {1, 2, 3}, {2, 4, 5}}});
    REQUIRE(an.comparison);
    CHECK(std::isnan(an.comparison->means.pvalue));
    CHECK(std::isfinite(an.comparison->mann_whitney.pvalue));
    CHECK(std::isnan(an.groups[0].mean_of_means.low));
    bool noted = false;
    for (const auto& n : an.notes) noted |= n.find("group 'sync' has 1 run") != std::string::npos;
    CHECK(noted);
    CHECK_THROWS_WITH_AS(logratio::analyze_runs({{"a", "x", {1}, {1}}, {"b", "y", {1}, {1}}}, {0.95, "x", "z"}),
                         "compare: no group 'z' (groups: x, y)", logratio::argument_error);
}

TEST_CASE("runs: the t quantile of intervals is scipy 1.10's stats.t.ppf") {
    // /usr/bin/python3 -c "from scipy import stats; print(repr(stats.t.ppf(0.975, df)))" (scipy 1.10.1):
    // cdflib's inversion, within 1e-8 of the exact quantile; logratio reproduces it.
    const std::pair<double, double> scipy[] = {{18, 2.10092204024096},    {38, 2.024394164575136},
                                               {49, 2.009575234489209},   {3, 3.182446305284263},
                                               {5.015, 2.568270977542566}, {1, 12.706204736432095},
                                               {200, 1.9718962236316089}};
    for (const auto& [df, q] : scipy) {
        CHECK(logratio::stats::t_quantile(0.975, df) == doctest::Approx(q).epsilon(1e-13));
        // and it is within cdflib's 1e-8 tolerance of the exact quantile
        CHECK(logratio::stats::t_quantile_exact(0.975, df) == doctest::Approx(q).epsilon(1e-8));
    }
}

TEST_CASE("runs: the verdict rule is a value (report's first line)") {
    using logratio::trend_verdict;
    logratio::group_stats g;
    g.runs = 4;
    auto with = [&](double low, double high, std::size_t rising) {
        g.mean_slope.low = low;
        g.mean_slope.high = high;
        g.rising = rising;
        return logratio::verdict_of(g);
    };
    CHECK(with(0.1, 0.3, 3) == trend_verdict::grows);           // interval above 0 and 3 of 4 rise
    CHECK(with(0.1, 0.3, 2) == trend_verdict::probably_grows);  // half is not most
    CHECK(with(-0.1, 0.3, 3) == trend_verdict::probably_grows);
    CHECK(with(-0.3, -0.1, 0) == trend_verdict::shrinks);
    CHECK(with(-0.1, 0.1, 1) == trend_verdict::no_clear_trend);
    CHECK(with(std::nan(""), std::nan(""), 1) == trend_verdict::no_clear_trend);  // n < 2: no interval
    g.runs = 0;
    CHECK(with(0.1, 0.3, 0) == trend_verdict::probably_grows);
    CHECK(std::string(logratio::verdict_label(trend_verdict::grows)) == "GROWS");
    CHECK(std::string(logratio::verdict_label(trend_verdict::no_clear_trend)) == "no clear trend");
    logratio::group_comparison c;
    c.means.pvalue = 0.01;
    c.slopes.pvalue = 0.2;
    const auto v = logratio::verdict_of(c);
    CHECK(v.level_differs);
    CHECK_FALSE(v.drift_differs);
    CHECK(logratio::verdict_of(c, 0.75).drift_differs);  // alpha 0.25
}

TEST_CASE("runs: the t tail in double is within 1e-12 of Boost's long-double evaluation") {
    // student_t.hpp evaluates Boost.Math in double (no promotion to long
    // double, whose x87 powl dominated many short runs); its header states
    // the measured bound, 4.2e-13 relative: checked here on a grid
    double worst = 0;
    for (double df = 1; df < 1e6; df *= 1.9)
        for (double t = 0.0; t < 30; t += 0.73) {
            const boost::math::students_t_distribution<double> promoted(df);
            const double want = 2.0 * boost::math::cdf(boost::math::complement(promoted, t));
            const double got = logratio::stats::t_two_sided_p(t, df);
            if (want > 1e-300) worst = std::max(worst, std::fabs(got - want) / std::min(1.0, want));
        }
    CHECK(worst < 1e-12);
    CHECK(worst > 0);  // the two evaluations do differ: the test is not vacuous
}
