// training_loop: the template for C++ RL code. Per batch: the mismatch panel,
// TIS weights + MIS/IcePop rejection (verl's options), one log line. Shows a
// padded batch, a packed batch, bf16 inputs, and buffers reused across
// batches (no allocation in the loop once the buffers have grown).
//
// The batches are made up here so the example runs anywhere; in a trainer
// `train`/`rollout` are the trainer's recomputed log-probs and the rollout
// engine's recorded log-probs of the sampled tokens (e.g. torch tensors'
// data_ptr() as float* or logratio::as_bfloat16(ptr)).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <logratio/correction/correction.hpp>
#include <logratio/panel/panel.hpp>

namespace {

// Stand-in for one batch of the trainer: log-probs of B responses of up to T
// tokens, the engine's values off by a small numeric mismatch.
struct batch {
    int B = 0, T = 0;
    std::vector<float> train, rollout;  // [B, T] padded
    std::vector<std::uint8_t> mask;     // [B, T], 1 = response token
};

batch make_batch(std::mt19937_64& g, int B, int T, double mismatch) {
    batch b{B, T, std::vector<float>(std::size_t(B) * T), std::vector<float>(std::size_t(B) * T),
            std::vector<std::uint8_t>(std::size_t(B) * T)};
    std::normal_distribution<double> n(0.0, 1.0);
    std::uniform_int_distribution<int> len(1, T);
    for (int r = 0; r < B; ++r) {
        const int L = len(g);
        for (int t = 0; t < T; ++t) {
            const std::size_t i = std::size_t(r) * T + t;
            const double lp = -std::fabs(n(g)) * 0.7;         // a sampled token's log-prob
            b.rollout[i] = static_cast<float>(lp);
            b.train[i] = static_cast<float>(std::min(0.0, lp + mismatch * n(g)));
            b.mask[i] = t < L;
        }
    }
    return b;
}

}  // namespace

int main() {
    std::mt19937_64 g(7);
    const int B = 16, T = 256;

    // Correction options, written as verl's config strings would be.
    logratio::correction_options corr;
    corr.is = logratio::is_options(logratio::is_level::token, /*C=*/2.0);  // TIS, cap 2
    corr.rejection = logratio::parse_rejection("token_k1", "0.9_1.1");     // MIS / IcePop: keep rho in [0.9, 1.1]
    corr.veto = 1e-4;                                                        // drop sequences with rho < 1e-4

    // Buffers reused across batches: grow once, then no allocation.
    std::vector<float> weights;
    std::vector<std::uint8_t> keep;
    std::vector<logratio::bfloat16> train16, rollout16;
    std::vector<float> packed_train, packed_rollout;
    std::vector<std::int64_t> cu_seqlens;

    for (int step = 0; step < 6; ++step) {
        const batch b = make_batch(g, B, T, 0.01 * (1 + step));  // mismatch that grows: what the log shows

        // 1) padded [B, T] float32 + mask
        const auto view = logratio::paired_view<float>::padded(b.train.data(), b.rollout.data(), b.mask.data(), B, T);
        const logratio::panel p = logratio::compute_panel(view);
        weights.resize(view.size());
        keep.resize(view.size());
        const auto r = logratio::correct(view, corr, weights.data(), keep.data());
        double kept = 0;
        for (auto k : keep) kept += k;

        // 2) the same tokens packed (cu_seqlens, no padding), as FSDP/Megatron
        //    sequence packing delivers them: identical panel.
        packed_train.clear();
        packed_rollout.clear();
        cu_seqlens.assign(1, 0);
        for (int r2 = 0; r2 < B; ++r2) {
            for (int t = 0; t < T; ++t)
                if (b.mask[std::size_t(r2) * T + t]) {
                    packed_train.push_back(b.train[std::size_t(r2) * T + t]);
                    packed_rollout.push_back(b.rollout[std::size_t(r2) * T + t]);
                }
            cu_seqlens.push_back(static_cast<std::int64_t>(packed_train.size()));
        }
        const auto packed = logratio::paired_view<float>::packed(packed_train.data(), packed_rollout.data(),
                                                                 packed_train.size(), cu_seqlens.data(),
                                                                 cu_seqlens.size());
        const logratio::panel pp = logratio::compute_panel(packed);

        // 3) bf16 inputs (what a bf16 trainer holds): the same view type over bfloat16.
        train16.resize(b.train.size());
        rollout16.resize(b.rollout.size());
        for (std::size_t i = 0; i < b.train.size(); ++i) {
            train16[i] = logratio::to_bfloat16(b.train[i]);
            rollout16[i] = logratio::to_bfloat16(b.rollout[i]);
        }
        const auto v16 = logratio::paired_view<logratio::bfloat16>::padded(train16.data(), rollout16.data(),
                                                                           b.mask.data(), B, T);
        const logratio::panel p16 = logratio::compute_panel(v16);

        std::printf("step %d  tokens %llu  mean|d| %.4g (packed %.4g, bf16 %.4g)  kl_k3 %.3g  max|d| %.3g  "
                    "is_mean %.4f  kept %.1f%%  rs_masked %.3f\n",
                    step, static_cast<unsigned long long>(p.tokens), p.delta_abs_mean, pp.delta_abs_mean,
                    p16.delta_abs_mean, p.kl_k3, p.delta_abs_max, r.is->mean, 100.0 * kept / double(p.tokens),
                    r.rejection.empty() ? 0.0 : r.rejection[0].masked_fraction);
        // padded and packed layouts of the same tokens: the same panel
        if (pp.tokens != p.tokens || std::fabs(pp.delta_abs_mean - p.delta_abs_mean) > 1e-12 * p.delta_abs_mean) {
            std::fprintf(stderr, "padded and packed panels differ\n");
            return 1;
        }
    }
    std::printf("training_loop ok\n");
    return 0;
}
