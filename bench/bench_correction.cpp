// Google Benchmark: the fused correction -- token-level TIS (C = 2), token
// rejection (token_k1 band 0.5_2 and token_k3 <= 0.01), veto 1e-4, every
// verl metric, weights (float32) and mask written -- over float32 tokens
// with an 80% mask, in cache (2^16) and out of cache (2^25), one and two
// threads; and the sequence-level variant (two phases do real work).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <logratio/logratio.hpp>

#include "roofline.hpp"
#include "synthetic.hpp"
#include "token_options.hpp"

namespace {

struct data {
    const bench::tokens& in;
    std::vector<float> w;
    std::vector<std::uint8_t> out_mask;
    const std::vector<float>& train = in.train;
    const std::vector<float>& rollout = in.rollout;
    const std::vector<std::uint8_t>& mask = in.mask;
    explicit data(std::size_t n) : in(bench::synthetic(n)), w(n), out_mask(n) {}
};

data& get(std::size_t n) {
    static std::vector<std::unique_ptr<data>> cache;
    for (auto& c : cache)
        if (c->w.size() == n) return *c;
    cache.push_back(std::make_unique<data>(n));
    return *cache.back();
}

constexpr std::uint64_t row = 1024;

void correct_token(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    const auto o = bench::token_options();
    for (auto _ : st) {
        auto r = logratio::correct(v, o, d.w.data(), d.out_mask.data(), threads);
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 14));  // reads 9 B, writes 5 B per token
    st.SetLabel(xsimd::default_arch::name());
}
BENCHMARK(correct_token)->Args({16, 1})->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

void correct_token_scalar(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    const auto o = bench::token_options();
    for (auto _ : st) {
        auto acc = logratio::correct_range_scalar(v, 0, v.num_sequences(), o, d.w.data(), d.out_mask.data());
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(correct_token_scalar)->Arg(25)->UseRealTime()->Unit(benchmark::kMillisecond);

void correct_sequence(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    auto& d = get(n);
    auto v = logratio::padded(d.train, d.rollout, d.mask, n / row, row);
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::sequence, 2.0, std::nullopt, true);
    o.rejection = logratio::parse_rejection("seq_mean_k1,seq_max_k3", "0.999_1.001,0.01");
    for (auto _ : st) {
        auto r = logratio::correct(v, o, d.w.data(), d.out_mask.data());
        benchmark::DoNotOptimize(r);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetLabel(xsimd::default_arch::name());
}
BENCHMARK(correct_sequence)->Arg(25)->UseRealTime()->Unit(benchmark::kMillisecond);

// The traffic of the correction with no arithmetic to speak of: reads the
// two float arrays and the mask, writes a float (t - r) and a 0/1 byte per
// token, in one fused loop with plain stores -- the memory roofline of
// correct_token at 2^25 tokens. Threads split the range.
void traffic_roofline(benchmark::State& st) {
    const std::size_t n = std::size_t(1) << st.range(0);
    const unsigned threads = static_cast<unsigned>(st.range(1));
    auto& d = get(n);
    auto run = [&](std::size_t b, std::size_t e) { bench::move_tokens(d.in, d.w.data(), d.out_mask.data(), b, e); };
    for (auto _ : st) {
        if (threads == 1) {
            run(0, n);
        } else {
            std::thread th([&] { run(n / 2, n); });
            run(0, n / 2);
            th.join();
        }
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * n * 14));
}
BENCHMARK(traffic_roofline)->Args({25, 1})->Args({25, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
