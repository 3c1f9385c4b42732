// Google Benchmark: the one-pass panel over float32 tokens with an 80% mask,
// in cache (2^16) and out of cache (2^25), one and two threads; the exact
// quantiles as a separate pass and fused into the panel's; and the read
// bandwidth of this machine over the same 9 bytes/token, the roofline.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <logratio/logratio.hpp>

#include "roofline.hpp"
#include "synthetic.hpp"

namespace {

using data = bench::tokens;
inline const data& get(std::size_t n) { return bench::synthetic(n); }

constexpr std::uint64_t row = 1024;

void panel(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    for (auto _ : st) {
        auto acc = logratio::accumulate_panel(v, {}, threads);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 9));
    st.SetLabel(xsimd::default_arch::name());
}
BENCHMARK(panel)->Args({16, 1})->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

void panel_scalar(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    for (auto _ : st) {
        auto acc = logratio::accumulate_panel_scalar(v);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 9));
}
BENCHMARK(panel_scalar)->Arg(25)->UseRealTime()->Unit(benchmark::kMillisecond);

void panel_quantiles(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    logratio::quantile_workspace ws;
    logratio::panel p;
    for (auto _ : st) {
        logratio::add_panel_quantiles(p, v, ws);
        benchmark::DoNotOptimize(p);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(panel_quantiles)->Arg(25)->UseRealTime()->Unit(benchmark::kMillisecond);

// The panel and its quantiles in one pass (panel/panel_quantiles.hpp),
// against `panel` above (same data, same binary): the ratio of their times.
void panel_with_quantiles(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    logratio::quantile_workspace ws;
    for (auto _ : st) {
        auto p = logratio::compute_panel_with_quantiles(v, {}, threads, ws);
        benchmark::DoNotOptimize(p);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 9));
}
BENCHMARK(panel_with_quantiles)->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

// Read bandwidth over the same bytes (two float arrays and a byte mask):
// the roofline. Threads split the range.
void read_bandwidth(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    const auto& d = get(n);
    auto sum_range = [&](std::size_t b, std::size_t e) { return bench::read_tokens(d, b, e); };
    for (auto _ : st) {
        std::uint32_t total = 0;
        if (threads == 1) {
            total = sum_range(0, n);
        } else {
            std::uint32_t other = 0;
            std::thread th([&] { other = sum_range(n / 2, n); });
            total = sum_range(0, n / 2);
            th.join();
            total += other;
        }
        benchmark::DoNotOptimize(total);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 9));
}
BENCHMARK(read_bandwidth)->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
