// Google Benchmark: logratio::dispatch from a binary built WITHOUT any
// -march flag (a trainer's extension, the Python module), on the problems
// of bench_panel (panel) and bench_correction (correct_token): the same
// synthetic float32 tokens, 80% mask, rows of 1024, the same options.
// bench/dispatch_vs_header.sh runs this and the header-only
// bench_panel/bench_correction_x86-64-v4 (and -v3) binaries alternately in
// one run and prints the ratios: the dispatched call should cost what the
// header-only call built with -march costs (one indirect call per view).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <logratio/dispatch/dispatch.hpp>

#include "synthetic.hpp"
#include "token_options.hpp"

namespace {

constexpr std::uint64_t row = 1024;

void dispatch_panel(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = bench::synthetic(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    for (auto _ : st) {
        auto acc = logratio::dispatch::accumulate_panel(v, {}, threads);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetLabel(logratio::dispatch::simd_level());
}
BENCHMARK(dispatch_panel)->Args({16, 1})->Args({25, 1})->UseRealTime()->Unit(benchmark::kMillisecond);

void dispatch_correct_token(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = bench::synthetic(n);
    std::vector<float> w(n);
    std::vector<std::uint8_t> keep(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    const auto o = bench::token_options();
    for (auto _ : st) {
        auto r = logratio::dispatch::correct(v, o, w.data(), keep.data(), threads);
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetLabel(logratio::dispatch::simd_level());
}
BENCHMARK(dispatch_correct_token)->Args({16, 1})->Args({25, 1})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
