// Google Benchmark: the fused two-row logits pass (entropies, KL both ways,
// TV, selected-token log-probs) over rows of V = 151,936 (float32 and
// bf16), one and two threads. Counted in logit pairs: one train and one
// rollout entry per pair.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include <logratio/logratio.hpp>

namespace {

constexpr std::uint64_t V = 151936, N = 32;

template <class T>
struct rows {
    std::vector<T> z, y;
    std::vector<std::int64_t> tok;
    rows() : z(N * V), y(N * V), tok(N) {
        std::mt19937_64 g(7);
        std::normal_distribution<float> nd(0.0f, 3.0f), small(0.0f, 0.02f);
        for (std::uint64_t i = 0; i < N * V; ++i) {
            const float a = nd(g);
            if constexpr (std::is_same<T, float>::value) {
                z[i] = a;
                y[i] = a + small(g);
            } else {
                z[i] = logratio::to_bfloat16(a);
                y[i] = logratio::to_bfloat16(a + small(g));
            }
        }
        for (std::uint64_t i = 0; i < N; ++i) tok[i] = static_cast<std::int64_t>((i * 7919) % V);
    }
};

template <class T>
void logits(benchmark::State& st) {
    static rows<T> r;
    const unsigned threads = static_cast<unsigned>(st.range(0));
    std::vector<logratio::logits_row> out(N);
    logratio::logits_view<T> z(r.z.data(), N, V), y(r.y.data(), N, V);
    for (auto _ : st) {
        logratio::compare_logits(z, y, r.tok.data(), out.data(), {}, threads);
        benchmark::DoNotOptimize(out.data());
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * N * V));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * N * V * 2 * sizeof(T)));
    st.SetLabel(xsimd::default_arch::name());
}
BENCHMARK_TEMPLATE(logits, float)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(logits, logratio::bfloat16)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
