// What the C++ blocks of README.md and docs/*.md may assume: each block is the
// body of a function compiled after this header (tests/docs/doc_snippets.py).
//
//   B, T            a padded batch of B = 8 responses of T = 64 slots
//   train, rollout  std::vector<float> [B, T]: the trainer's and the rollout
//                   engine's log-probs of the sampled tokens
//   mask            std::vector<std::uint8_t> [B, T]: 1 = response token
//   view            logratio::paired_view<float> over the three
//   train_logits, rollout_logits (std::vector<logratio::bfloat16> [N, V]),
//   tokens (std::vector<std::int32_t> [N]), N, V: full logits for logits.md
//
// The numbers are made up (a reproducible generator), the shapes are real.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <logratio/logratio.hpp>

namespace doc_prelude {

inline int failures = 0;

struct batch {
    std::vector<float> train, rollout;
    std::vector<std::uint8_t> mask;
};

// Rows of random length; the rollout's log-probs off by a small mismatch.
inline batch make_batch(std::size_t B, std::size_t T, unsigned seed) {
    batch b{std::vector<float>(B * T), std::vector<float>(B * T), std::vector<std::uint8_t>(B * T)};
    std::mt19937_64 g(seed);
    std::normal_distribution<double> n(0.0, 1.0);
    for (std::size_t r = 0; r < B; ++r) {
        const std::size_t len = 1 + g() % T;
        for (std::size_t t = 0; t < T; ++t) {
            const std::size_t i = r * T + t;
            const double lp = -std::fabs(n(g)) * 0.7;
            b.rollout[i] = static_cast<float>(lp);
            b.train[i] = static_cast<float>(std::min(0.0, lp + 0.02 * n(g)));
            b.mask[i] = t < len;
        }
    }
    return b;
}

inline std::vector<logratio::bfloat16> make_logits(std::size_t N, std::size_t V, unsigned seed) {
    std::vector<logratio::bfloat16> z(N * V);
    std::mt19937_64 g(seed);
    std::normal_distribution<float> n(0.0f, 2.0f);
    for (auto& x : z) x = logratio::to_bfloat16(n(g));
    return z;
}

template <class F>
void run(const char* where, F f) {
    try {
        f();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: the block threw: %s\n", where, e.what());
        ++failures;
    }
}

}  // namespace doc_prelude

inline const std::size_t B = 8, T = 64;
inline const doc_prelude::batch doc_batch = doc_prelude::make_batch(B, T, 1);
inline const std::vector<float>& train = doc_batch.train;
inline const std::vector<float>& rollout = doc_batch.rollout;
inline const std::vector<std::uint8_t>& mask = doc_batch.mask;
inline const logratio::paired_view<float> view =
    logratio::padded(train, rollout, mask, B, T);
inline const std::size_t N = 16, V = 1000;
inline const std::vector<logratio::bfloat16> train_logits = doc_prelude::make_logits(N, V, 2);
inline const std::vector<logratio::bfloat16> rollout_logits = doc_prelude::make_logits(N, V, 3);
inline const std::vector<std::int32_t> tokens(N, 7);
using doc_prelude::run;
