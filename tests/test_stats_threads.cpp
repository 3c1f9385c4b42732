// The run analysis on several threads (runs.hpp, analyze_runs with
// runs_options::threads): the same numbers, bit for bit, the same notes in
// the same order, and the same error (the first bad run in input order) as
// on one thread.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/runs/runs.hpp>

namespace {

bool threads_same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Runs of 0 to ~3,000 updates (the short ones list their slopes, the long
/// ones search), a drift in group "b", missing values, two groups.
std::vector<logratio::run_series> threads_test_runs() {
    std::vector<logratio::run_series> runs;
    std::uint64_t state = 2026;
    for (int r = 0; r < 37; ++r) {
        logratio::run_series s;
        s.run = "run" + std::to_string(r);
        s.group = r % 2 ? "b" : "a";
        const std::size_t n = r % 5 == 0 ? static_cast<std::size_t>(r % 3) : 50 + static_cast<std::size_t>(r) * 80;
        for (std::size_t i = 0; i < n; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const double noise = static_cast<double>(state >> 11) * 0x1p-53 - 0.5;
            s.update.push_back(static_cast<double>(i + 1));
            const double drift = r % 2 ? 1e-5 * static_cast<double>(i) : 0.0;
            s.value.push_back(i % 17 == 3 ? std::nan("") : std::round((0.01 + drift + 0.004 * noise) * 1e6) / 1e6);
        }
        runs.push_back(std::move(s));
    }
    return runs;
}

void check_same_run(const logratio::run_stats& a, const logratio::run_stats& b) {
    INFO("run " << a.run);
    CHECK(a.run == b.run);
    CHECK(a.updates == b.updates);
    CHECK(a.notes == b.notes);
    for (const auto& [x, y] : {std::pair{a.summary.mean, b.summary.mean}, {a.summary.median, b.summary.median},
                              {a.ols.slope, b.ols.slope}, {a.ols.pvalue, b.ols.pvalue},
                              {a.theil_sen.slope, b.theil_sen.slope}, {a.theil_sen.low, b.theil_sen.low},
                              {a.theil_sen.high, b.theil_sen.high}, {a.kendall.tau, b.kendall.tau},
                              {a.kendall.pvalue, b.kendall.pvalue}})
        CHECK(threads_same_bits(x, y));
}

}  // namespace

TEST_CASE("analyze_runs: the runs on 1, 2 and 5 threads give the same analysis, in input order") {
    const auto runs = threads_test_runs();
    logratio::runs_options one;
    one.threads = 1;
    const auto ref = logratio::analyze_runs(runs, one);
    REQUIRE(ref.runs.size() == runs.size());
    CHECK(ref.runs[33].theil_sen.slope > 5e-6);  // the long drifting runs went through the search
    for (const unsigned t : {2u, 5u}) {
        logratio::runs_options o;
        o.threads = t;
        const auto got = logratio::analyze_runs(runs, o);
        INFO(t << " threads");
        REQUIRE(got.runs.size() == ref.runs.size());
        for (std::size_t i = 0; i < ref.runs.size(); ++i) check_same_run(ref.runs[i], got.runs[i]);
        CHECK(got.notes == ref.notes);
        REQUIRE(got.groups.size() == 2);
        for (std::size_t g = 0; g < 2; ++g) {
            CHECK(got.groups[g].group == ref.groups[g].group);
            CHECK(threads_same_bits(got.groups[g].mean_slope.mean, ref.groups[g].mean_slope.mean));
            CHECK(got.groups[g].rising == ref.groups[g].rising);
        }
        REQUIRE(got.comparison);
        CHECK(threads_same_bits(got.comparison->slopes.pvalue, ref.comparison->slopes.pvalue));
    }
    // the default options: one thread
    const auto dflt = logratio::analyze_runs(runs);
    for (std::size_t i = 0; i < ref.runs.size(); ++i) check_same_run(ref.runs[i], dflt.runs[i]);
}

TEST_CASE("analyze_runs on threads: the error of the first bad run in input order") {
    auto runs = threads_test_runs();
    runs[31].value.pop_back();  // run30 is empty (30 % 5 == 0): pop one that has values
    runs[7].value.pop_back();
    for (const unsigned t : {1u, 4u}) {
        logratio::runs_options o;
        o.threads = t;
        std::string what;
        try {
            logratio::analyze_runs(runs, o);
        } catch (const logratio::shape_error& e) {
            what = e.what();
        }
        INFO(t << " threads");
        CHECK(what.find("run 'run7'") != std::string::npos);
    }
}
