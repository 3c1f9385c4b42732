#pragma once
// The bundled tiny next-token model of make_sample (see make_sample.cpp for
// what it models): weights, the shared hidden-state step, and the two
// execution paths (float32 trainer, bf16 split-K rollout engine). Shared by
// make_sample and by the doctor's planted-bug generator (tests/doctor/).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <logratio/core/dtype.hpp>

namespace tiny_model {

constexpr int V = 512, D = 48;

inline float bf16(float x) { return logratio::to_float(logratio::to_bfloat16(x)); }

struct model {
    std::vector<float> embed, mix, out;  // [V, D], [D, D], [V, D]
    explicit model(std::uint64_t seed) : embed(V * D), mix(D * D), out(V * D) {
        std::mt19937_64 g(seed);
        std::normal_distribution<float> n(0.0f, 1.0f);
        for (auto& x : embed) x = n(g);
        for (auto& x : mix) x = n(g) / std::sqrt(static_cast<float>(D)) * 0.9f;
        for (auto& x : out) x = n(g) * 0.9f;  // sharp: large logit spread
    }
    /// One optimizer update: every output weight moves by lr * N(0, 1).
    void update(std::mt19937_64& g, float lr) {
        std::normal_distribution<float> n(0.0f, 1.0f);
        for (auto& x : out) x += lr * n(g);
    }
};

// Next hidden state (shared by both paths: the prefix is the same).
inline void step(const model& m, std::vector<float>& h, int token) {
    std::vector<float> nh(D);
    for (int i = 0; i < D; ++i) {
        float s = m.embed[token * D + i];
        for (int j = 0; j < D; ++j) s += m.mix[i * D + j] * h[j];
        nh[i] = std::tanh(s);
    }
    h = nh;
}

// log-softmax of the logits on one path.
inline void log_softmax(const std::vector<float>& z, std::vector<float>& out) {
    const float mx = *std::max_element(z.begin(), z.end());
    float s = 0.0f;
    for (float x : z) s += std::exp(x - mx);
    const float lse = mx + std::log(s);
    out.resize(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) out[i] = z[i] - lse;
}

inline void trainer_logprobs(const model& m, const std::vector<float>& h, std::vector<float>& lp) {
    std::vector<float> z(V);
    for (int v = 0; v < V; ++v) {
        float s = 0.0f;
        for (int j = 0; j < D; ++j) s += m.out[v * D + j] * h[j];
        z[v] = s;
    }
    log_softmax(z, lp);
}

inline void rollout_logprobs(const model& m, const std::vector<float>& h, std::vector<float>& lp) {
    std::vector<float> z(V);
    constexpr int K = 4, chunk = D / K;
    for (int v = 0; v < V; ++v) {
        float part[K];
        for (int k = 0; k < K; ++k) {
            float s = 0.0f;
            for (int j = k * chunk; j < (k + 1) * chunk; ++j) s += bf16(m.out[v * D + j]) * bf16(h[j]);
            part[k] = bf16(s);
        }
        float s = 0.0f;
        for (int k = K - 1; k >= 0; --k) s += part[k];
        z[v] = bf16(s);
    }
    log_softmax(z, lp);
    for (auto& x : lp) x = bf16(x);  // the engine returns bf16 log-probs
    for (auto& x : lp) x = std::min(x, 0.0f);
}

}  // namespace tiny_model
