// Google Benchmark: exact multi-quantile selection (7 quantiles of 2^25
// masked float32 delta values) against nth_element once per quantile, and
// the KLL sketch: batched vs single updates, merge of 64 sketches.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>
#include <cmath>
#include <cstdlib>
#include <string>

#include <logratio/logratio.hpp>

#include "synthetic.hpp"

namespace {

struct data {
    std::vector<float> train, rollout;
    std::vector<std::uint8_t> mask;
    std::vector<double> deltas;  // masked-in delta, for the nth_element baseline
};

const data& get() {
    static data d = [] {
        const std::size_t n = std::size_t(1) << 25;
        data x;
        x.train.resize(n);
        x.rollout.resize(n);
        x.mask.resize(n);
        std::mt19937_64 g(n);
        std::exponential_distribution<float> lp(2.0f);
        std::student_t_distribution<float> nd(3.0f);
        std::bernoulli_distribution keep(0.8);
        for (std::size_t i = 0; i < n; ++i) {
            x.rollout[i] = -std::min(lp(g), 12.0f);
            x.train[i] = std::min(x.rollout[i] + 0.01f * nd(g), 0.0f);
            x.mask[i] = keep(g);
            if (x.mask[i]) x.deltas.push_back(double(x.train[i]) - double(x.rollout[i]));
        }
        return x;
    }();
    return d;
}

const std::vector<double> probs{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};

void exact_quantiles(benchmark::State& st) {
    const auto& d = get();
    auto v = logratio::padded(d.train, d.rollout, d.mask, d.train.size() / 1024, 1024);
    logratio::quantile_workspace ws;
    for (auto _ : st) {
        auto q = logratio::quantiles(v, logratio::quantile_of::delta, probs, {}, ws);
        benchmark::DoNotOptimize(q);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.deltas.size()));
}
BENCHMARK(exact_quantiles)->UseRealTime()->Unit(benchmark::kMillisecond);

// Baseline: copy the values, nth_element once per quantile (linear method).
void nth_element_per_quantile(benchmark::State& st) {
    const auto& d = get();
    std::vector<double> work;
    for (auto _ : st) {
        work = d.deltas;
        std::vector<double> q;
        for (double p : probs) {
            const double h = (work.size() - 1) * p;
            const std::size_t lo = static_cast<std::size_t>(h);
            std::nth_element(work.begin(), work.begin() + lo, work.end());
            const double a = work[lo];
            const double b = lo + 1 < work.size() ? *std::min_element(work.begin() + lo + 1, work.end()) : a;
            q.push_back(a + (b - a) * (h - lo));
        }
        benchmark::DoNotOptimize(q);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.deltas.size()));
}
BENCHMARK(nth_element_per_quantile)->UseRealTime()->Unit(benchmark::kMillisecond);

std::vector<float> values_f() {
    const auto& d = get();
    return std::vector<float>(d.deltas.begin(), d.deltas.end());
}

void kll_batched_update(benchmark::State& st) {
    static const auto x = values_f();
    for (auto _ : st) {
        logratio::kll_sketch<float> s(200);
        s.update(x.data(), x.size());
        benchmark::DoNotOptimize(s);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * x.size()));
}
BENCHMARK(kll_batched_update)->UseRealTime()->Unit(benchmark::kMillisecond);

void kll_single_updates(benchmark::State& st) {
    static const auto x = values_f();
    for (auto _ : st) {
        logratio::kll_sketch<float> s(200);
        for (float v : x) s.update(v);
        benchmark::DoNotOptimize(s);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * x.size()));
}
BENCHMARK(kll_single_updates)->UseRealTime()->Unit(benchmark::kMillisecond);

void kll_merge_64(benchmark::State& st) {
    static const auto x = values_f();
    std::vector<logratio::kll_sketch<float>> parts;
    const std::size_t per = x.size() / 64;
    for (std::size_t p = 0; p < 64; ++p) {
        parts.emplace_back(200, p + 1);
        parts.back().update(x.data() + p * per, per);
    }
    for (auto _ : st) {
        logratio::kll_sketch<float> s(200);
        for (const auto& p : parts) s.merge(p);
        benchmark::DoNotOptimize(s);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * 64));  // sketches merged
}
BENCHMARK(kll_merge_64)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Issue 18's shape: B = 256 x T = 4096 bf16 log-probs, variable lengths,
// heavy-tailed delta (student-t 1.5), 12 exact quantiles. bf16 inputs give
// few distinct delta values (delta = 0 alone ~15% of the tokens): the
// heavy-ties case of the bracket pass. (bench/python_vs_torch.py draws the
// same distributions with torch; numpy.quantile there takes ~22 ms.)
void exact_quantiles_bf16_ties(benchmark::State& st) {
    static const auto d = [] {
        const std::size_t B = 256, T = 4096;
        std::vector<logratio::bfloat16> train(B * T), rollout(B * T);
        std::vector<std::uint8_t> mask(B * T);
        std::mt19937_64 g(18);
        std::student_t_distribution<float> t3(3.0f), t15(1.5f);
        std::uniform_int_distribution<std::size_t> len(T / 8, T);
        for (std::size_t b = 0; b < B; ++b) {
            const std::size_t n = len(g);
            for (std::size_t i = 0; i < T; ++i) {
                const float r = -std::fabs(t3(g)) * 0.8f;
                rollout[b * T + i] = logratio::to_bfloat16(r);
                train[b * T + i] = logratio::to_bfloat16(std::min(r + 0.01f * t15(g), 0.0f));
                mask[b * T + i] = i < n;
            }
        }
        return std::make_tuple(train, rollout, mask);
    }();
    const auto& [train, rollout, mask] = d;
    auto v = logratio::padded(train, rollout, mask, 256, 4096);
    const std::vector<double> q12{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};
    logratio::quantile_workspace ws;
    for (auto _ : st) {
        auto q = logratio::quantiles(v, logratio::quantile_of::delta, q12, {}, ws);
        benchmark::DoNotOptimize(q);
    }
    // values = masked-in deltas (bench/report.py reads items_per_second)
    const auto values = std::count(mask.begin(), mask.end(), std::uint8_t(1));
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(values));
}
BENCHMARK(exact_quantiles_bf16_ties)->UseRealTime()->Unit(benchmark::kMillisecond);

#if LOGRATIO_PANEL_F32 && defined(__AVX512BW__) && defined(__AVX512VL__)
// The parts of bench_panel's panel_with_quantiles/25/1 (same data: 2^25
// float32 tokens of bench/synthetic.hpp, rows of 1024), for issue 41's
// breakdown: the sample and its plan, the classification as a separate pass
// over the view (the fused one runs per sequence inside the panel's loop:
// its cost there is panel_with_quantiles - panel - sample - resolution), and
// the resolution from one pass's counts. Registered only with
// LOGRATIO_BENCH_BREAKDOWN=1 (bench/run.sh does not run them).
struct breakdown_data {
    logratio::paired_view<float, std::uint8_t> v;
    logratio::detail::f32_interval_set set;
    logratio::detail::f32_interval_counts cnt;
    std::vector<float> t, r;
};
const breakdown_data& breakdown() {
    static breakdown_data b = [] {
        const auto& d = bench::synthetic(std::size_t(1) << 25);
        breakdown_data x{logratio::padded(d.train, d.rollout, d.mask, d.train.size() / 1024, 1024), {}, {}, {}, {}};
        double share = 0;
        logratio::detail::plan_f32_intervals(logratio::detail::sample_f32_keys(x.v), logratio::default_delta_probs(),
                                             logratio::default_abs_delta_probs(), x.set, share);
        x.t.resize(d.train.size() + 64);
        x.r.resize(d.train.size() + 64);
        x.cnt.t = x.t.data();
        x.cnt.r = x.r.data();
        logratio::detail::count_intervals_avx512(x.v, 0, x.v.size(), false, x.set, x.cnt);
        return x;
    }();
    return b;
}
void pwq_sample(benchmark::State& st) {
    const auto& b = breakdown();
    for (auto _ : st) {
        logratio::detail::f32_interval_set set;
        double share = 0;
        const bool ok = logratio::detail::plan_f32_intervals(logratio::detail::sample_f32_keys(b.v),
                                                             logratio::default_delta_probs(),
                                                             logratio::default_abs_delta_probs(), set, share);
        benchmark::DoNotOptimize(ok);
        benchmark::DoNotOptimize(set);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * b.v.size()));
    st.SetLabel("stored share " + std::to_string(double(b.cnt.used) / double(b.cnt.tokens)));
}
void pwq_classify_pass(benchmark::State& st) {
    const auto& b = breakdown();
    std::vector<float> t(b.v.size() + 64), r(b.v.size() + 64);
    for (auto _ : st) {
        logratio::detail::f32_interval_counts c;
        c.t = t.data();
        c.r = r.data();
        logratio::detail::count_intervals_avx512(b.v, 0, b.v.size(), false, b.set, c);
        benchmark::DoNotOptimize(c);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * b.v.size()));
}
void pwq_resolve(benchmark::State& st) {
    const auto& b = breakdown();
    const std::vector<const logratio::detail::f32_interval_counts*> parts{&b.cnt};
    logratio::quantile_workspace ws;  // kept between calls, as the panel's
    for (auto _ : st) {
        std::vector<double> qd, qa;
        const bool ok = logratio::detail::resolve_f32_intervals(
            b.set, parts, b.cnt.tokens, logratio::default_delta_probs(), logratio::default_abs_delta_probs(), qd, qa,
            &ws.f32_bins);
        benchmark::DoNotOptimize(ok);
        benchmark::DoNotOptimize(qd);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * b.v.size()));
    st.SetLabel("stored " + std::to_string(b.cnt.used));
}
const bool breakdown_registered = [] {
    const char* e = std::getenv("LOGRATIO_BENCH_BREAKDOWN");
    if (!e || std::string(e) != "1") return false;
    benchmark::RegisterBenchmark("pwq_sample", pwq_sample)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pwq_classify_pass", pwq_classify_pass)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("pwq_resolve", pwq_resolve)->UseRealTime()->Unit(benchmark::kMillisecond);
    return true;
}();
#endif

}  // namespace

BENCHMARK_MAIN();
