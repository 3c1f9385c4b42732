#pragma once
// Dumps of the bundled tiny model (examples/make_sample/tiny_model.hpp: a
// float32 trainer against a bf16 split-K rollout engine, real numerical
// mismatch) with one data bug planted, deterministic from a seed. The
// doctor's thresholds are measured on these (include/logratio/doctor/checks).
//
//   clean          the real bf16-vs-float32 mismatch, nothing planted
//   shift_ahead    l_T[t] is the trainer's log-prob of token t+1 (k = +1);
//                  the last token of each sequence is masked out
//   shift_behind   l_T[t] is that of token t-1 (k = -1); position 0 masked out
//   zero_fill      3% of sequences: their last 8 rollout log-probs are 0.0
//   sentinel       1% of tokens: rollout log-prob -9999 (missing values)
//   temperature    the engine samples with temperature 0.7 and returns those
//                  log-probs; the trainer's are at temperature 1
//   top_p          the engine samples from the top-p 0.9 nucleus and returns
//                  renormalised log-probs log(p / kept mass)
//   desync         5% of sequences: from the middle on, the rollout log-prob
//                  at t is that of token t+1 (re-tokenised out of step)
//   first_token    position 0: the rollout log-prob gets extra N(0, 0.5) noise
//                  (clipped at 0), as a mis-handled first generated token
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../../examples/make_sample/tiny_model.hpp"

namespace planted {

enum class bug { clean, shift_ahead, shift_behind, zero_fill, sentinel, temperature, top_p, desync, first_token };

inline const std::vector<std::pair<bug, std::string>>& all_bugs() {
    static const std::vector<std::pair<bug, std::string>> b{
        {bug::clean, "clean"},           {bug::shift_ahead, "shift_ahead"}, {bug::shift_behind, "shift_behind"},
        {bug::zero_fill, "zero_fill"},   {bug::sentinel, "sentinel"},       {bug::temperature, "temperature"},
        {bug::top_p, "top_p"},           {bug::desync, "desync"},           {bug::first_token, "first_token"}};
    return b;
}

struct dump {
    int B = 0, T = 0;
    std::vector<float> train, rollout;
    std::vector<std::uint8_t> mask;
};

/// The engine's distribution after processing: temperature or top-p.
inline void process(std::vector<float>& lp, bug b) {
    if (b == bug::temperature) {
        std::vector<float> z(lp.size());
        for (std::size_t i = 0; i < lp.size(); ++i) z[i] = lp[i] / 0.7f;
        tiny_model::log_softmax(z, lp);
    } else if (b == bug::top_p) {
        std::vector<int> idx(lp.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::sort(idx.begin(), idx.end(), [&](int a, int c) { return lp[a] > lp[c] || (lp[a] == lp[c] && a < c); });
        double kept = 0;
        std::size_t n = 0;
        while (n < idx.size() && kept < 0.9) kept += std::exp(static_cast<double>(lp[idx[n++]]));
        std::vector<float> out(lp.size(), -INFINITY);
        for (std::size_t i = 0; i < n; ++i)
            out[idx[i]] = static_cast<float>(static_cast<double>(lp[idx[i]]) - std::log(kept));
        lp = out;
    } else {
        return;
    }
    for (auto& x : lp) x = std::min(tiny_model::bf16(x), 0.0f);
}

/// Samples B sequences of up to T tokens (row 0 full length) with bug b.
inline dump sample(bug b, int B = 160, int T = 128, std::uint64_t seed = 20261203) {
    using namespace tiny_model;
    const model m(seed);
    std::mt19937_64 g(seed + 1);
    dump d;
    d.B = B;
    d.T = T;
    const std::size_t n = static_cast<std::size_t>(B) * static_cast<std::size_t>(T);
    d.train.assign(n, 0.0f);
    d.rollout.assign(n, 0.0f);
    d.mask.assign(n, 0);
    std::vector<float> lp_t, lp_e;
    std::vector<int> lens(B);
    for (int r = 0; r < B; ++r) {
        const int len = r == 0 ? T : 1 + static_cast<int>(g() % static_cast<std::uint64_t>(T));
        lens[r] = len;
        std::vector<float> h(D, 0.0f);
        int token = static_cast<int>(g() % V);
        for (int t = 0; t < len; ++t) {
            step(m, h, token);
            rollout_logprobs(m, h, lp_e);
            process(lp_e, b);
            trainer_logprobs(m, h, lp_t);
            std::uniform_real_distribution<double> u(0.0, 1.0);
            double x = u(g), c = 0.0;
            int a = V - 1;
            for (int v = 0; v < V; ++v) {
                c += std::exp(static_cast<double>(lp_e[v]));
                if (x < c) {
                    a = v;
                    break;
                }
            }
            if (!std::isfinite(lp_e[a])) a = static_cast<int>(std::max_element(lp_e.begin(), lp_e.end()) - lp_e.begin());
            const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(T) + static_cast<std::size_t>(t);
            d.train[i] = lp_t[a];
            d.rollout[i] = lp_e[a];
            d.mask[i] = 1;
            token = a;
        }
    }
    std::mt19937_64 p(seed + 2);  // the planting's own stream
    auto at = [&](int r, int t) { return static_cast<std::size_t>(r) * static_cast<std::size_t>(T) + static_cast<std::size_t>(t); };
    for (int r = 0; r < B; ++r) {
        const int len = lens[r];
        switch (b) {
            case bug::shift_ahead:
                for (int t = 0; t + 1 < len; ++t) d.train[at(r, t)] = d.train[at(r, t + 1)];
                d.mask[at(r, len - 1)] = 0;
                break;
            case bug::shift_behind:
                for (int t = len - 1; t >= 1; --t) d.train[at(r, t)] = d.train[at(r, t - 1)];
                d.mask[at(r, 0)] = 0;
                break;
            case bug::zero_fill:
                if (p() % 100 < 3)
                    for (int t = std::max(0, len - 8); t < len; ++t) d.rollout[at(r, t)] = 0.0f;
                break;
            case bug::sentinel:
                for (int t = 0; t < len; ++t)
                    if (p() % 100 == 0) d.rollout[at(r, t)] = -9999.0f;
                break;
            case bug::desync:
                if (len >= 16 && p() % 100 < 5)
                    for (int t = len / 2; t + 1 < len; ++t) d.rollout[at(r, t)] = d.rollout[at(r, t + 1)];
                break;
            case bug::first_token: {
                std::normal_distribution<float> nd(0.0f, 0.5f);
                d.rollout[at(r, 0)] = std::min(0.0f, d.rollout[at(r, 0)] + nd(p));
                break;
            }
            default: break;
        }
    }
    return d;
}

/// Scales the mismatch: l_T = l_E + k (l_T - l_E), clipped at 0 -- a
/// healthy engine at another level (k = 1.55: mean |delta| 0.022) or a
/// drifting one (k = 8).
inline void scale_mismatch(dump& d, double k) {
    for (std::size_t i = 0; i < d.train.size(); ++i) {
        const double e = d.rollout[i], t = d.train[i];
        d.train[i] = static_cast<float>(std::min(0.0, e + k * (t - e)));
    }
}

/// Plants N(0, sigma) noise on the rollout log-prob of each sequence's
/// first (masked-in) token, clipped at 0, from its own seed.
inline void plant_first_token(dump& d, float sigma, std::uint64_t seed) {
    std::mt19937_64 p(seed);
    std::normal_distribution<float> nd(0.0f, sigma);
    for (int r = 0; r < d.B; ++r) {
        const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(d.T);
        if (d.mask[i]) d.rollout[i] = std::min(0.0f, d.rollout[i] + nd(p));
    }
}

}  // namespace planted
