// Google Benchmark: the per-run statistics of `logratio runs` at run lengths
// of 2,000, 8,000, 100,000 and 300,000 updates -- Theil-Sen with Sen's
// interval (the randomized slope selection, O(n log n)), Kendall's tau-b
// (Knight's merge sort), linregress, and analyze_run (all of them plus the
// summary) -- and the O(n²) Theil-Sen it replaced at 2,000 and 8,000 (the
// "reference" rows: beyond that it needs n²/2 slopes in memory, 360 GB at
// 300,000). The data: a slow drift plus noise rounded to 6 digits (ties in
// y), as bench/runs_vs_scipy.py writes them. Times are CPU time of the
// benchmark thread (the machine may be shared: wall time counts the others).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <logratio/runs/runs.hpp>

namespace {

using namespace logratio;

run_series series_of(std::size_t n) {
    run_series s{"r", "g", std::vector<double>(n), std::vector<double>(n)};
    std::uint64_t state = n;
    for (std::size_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double noise = static_cast<double>(state >> 11) * 0x1p-53 - 0.5;  // uniform in [-0.5, 0.5)
        s.update[i] = static_cast<double>(i + 1);
        s.value[i] = std::round((0.01 + 2e-7 * static_cast<double>(i) + 0.004 * noise) * 1e6) / 1e6;
    }
    return s;
}

void theil_sen(benchmark::State& st) {
    const auto s = series_of(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) benchmark::DoNotOptimize(stats::theil_sen(s.update.data(), s.value.data(), s.update.size()));
    st.SetItemsProcessed(st.iterations() * st.range(0));
}

void theil_sen_reference(benchmark::State& st) {
    const auto s = series_of(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st)
        benchmark::DoNotOptimize(stats::theil_sen_reference(s.update.data(), s.value.data(), s.update.size()));
    st.SetItemsProcessed(st.iterations() * st.range(0));
}

void kendall_tau(benchmark::State& st) {
    const auto s = series_of(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) benchmark::DoNotOptimize(stats::kendall_tau(s.update.data(), s.value.data(), s.update.size()));
    st.SetItemsProcessed(st.iterations() * st.range(0));
}

void linregress(benchmark::State& st) {
    const auto s = series_of(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) benchmark::DoNotOptimize(stats::linregress(s.update.data(), s.value.data(), s.update.size()));
    st.SetItemsProcessed(st.iterations() * st.range(0));
}

void analyze_run(benchmark::State& st) {
    const auto s = series_of(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) benchmark::DoNotOptimize(logratio::analyze_run(s));
    st.SetItemsProcessed(st.iterations() * st.range(0));
}

/// 20 updates: the cost per run of many short runs (100,000 runs x 20).
void analyze_short_runs(benchmark::State& st) {
    std::vector<run_series> runs;
    for (int r = 0; r < 1000; ++r) {
        runs.push_back(series_of(20 + static_cast<std::size_t>(r % 3)));
        runs.back().group = r % 2 ? "async" : "sync";
    }
    for (auto _ : st) benchmark::DoNotOptimize(logratio::analyze_runs(runs));
    st.SetItemsProcessed(st.iterations() * 1000);
}

}  // namespace

BENCHMARK(theil_sen)->Arg(2000)->Arg(8000)->Arg(100000)->Arg(300000)->Unit(benchmark::kMillisecond);
BENCHMARK(theil_sen_reference)->Arg(2000)->Arg(8000)->Unit(benchmark::kMillisecond);
BENCHMARK(kendall_tau)->Arg(2000)->Arg(8000)->Arg(100000)->Arg(300000)->Unit(benchmark::kMillisecond);
BENCHMARK(linregress)->Arg(2000)->Arg(8000)->Arg(100000)->Arg(300000)->Unit(benchmark::kMillisecond);
BENCHMARK(analyze_run)->Arg(2000)->Arg(8000)->Arg(100000)->Arg(300000)->Unit(benchmark::kMillisecond);
BENCHMARK(analyze_short_runs)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
