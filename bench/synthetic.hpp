#pragma once
// The benchmarks' synthetic dump: n float32 token pairs (rollout log-probs
// exponential with mean 0.5 nat, train = rollout + N(0, 0.02), clipped at
// 0) and an 80% mask; generated once per size and cached. The numpy
// scripts draw the same distributions.
#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace bench {

struct tokens {
    std::vector<float> train, rollout;
    std::vector<std::uint8_t> mask;
};

inline const tokens& synthetic(std::size_t n) {
    static std::vector<std::pair<std::size_t, tokens>> cache;
    for (auto& c : cache)
        if (c.first == n) return c.second;
    tokens d;
    d.train.resize(n);
    d.rollout.resize(n);
    d.mask.resize(n);
    std::mt19937_64 g(n);
    std::exponential_distribution<float> lp(2.0f);
    std::normal_distribution<float> nd(0.0f, 0.02f);
    std::bernoulli_distribution keep(0.8);
    for (std::size_t i = 0; i < n; ++i) {
        d.rollout[i] = -std::min(lp(g), 12.0f);
        d.train[i] = std::min(d.rollout[i] + nd(g), 0.0f);
        d.mask[i] = keep(g);
    }
    cache.emplace_back(n, std::move(d));
    return cache.back().second;
}

}  // namespace bench
