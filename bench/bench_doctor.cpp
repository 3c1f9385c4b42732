// Google Benchmark: logratio doctor's diagnose() against the one-pass panel
// on the same data (bench/synthetic.hpp: float32 tokens, 80% mask, rows of
// 1024), in the same run, so the ratio is not skewed by machine load.
// diagnose = one pass over memory (doctor/scan.hpp); policy_lag is not
// included (it needs old_logprobs and adds three panel passes).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include <logratio/doctor/diagnose.hpp>
#include <logratio/logratio.hpp>

#include "synthetic.hpp"

namespace {

constexpr std::uint64_t row = 1024;

void doctor_panel(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = bench::synthetic(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    for (auto _ : st) {
        auto acc = logratio::accumulate_panel(v, {}, threads);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetLabel(xsimd::default_arch::name());
}
BENCHMARK(doctor_panel)->Args({17, 1})->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

void doctor_diagnose(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const auto& d = bench::synthetic(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    logratio::doctor::diagnose_options o;
    o.threads = static_cast<unsigned>(st.range(1));
    for (auto _ : st) {
        auto r = logratio::doctor::diagnose(v, o);
        benchmark::DoNotOptimize(r);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(doctor_diagnose)->Args({17, 1})->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
