#pragma once
// Shared helpers of the test suite: SPEC's tolerance, the panel's entries,
// a naive long-double reference panel (two-pass, one token at a time) that
// the kernels are checked against, and synthetic data. Light on purpose
// (no JSON, no file readers, not the umbrella header): the fixture loaders
// are in test_data.hpp, and each test includes the components it tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <logratio/core/dtype.hpp>
#include <logratio/core/view.hpp>
#include <logratio/panel/panel.hpp>

namespace test {

/// SPEC: within 1e-6 relative, or 1e-12 absolute where the value is below 1e-6.
inline bool spec_close(double got, double want, double rel = 1e-6, double abs_small = 1e-12) {
    if (std::isnan(want)) return std::isnan(got);
    const double err = std::fabs(got - want);
    if (std::fabs(want) < 1e-6) return err <= std::max(abs_small, rel * std::fabs(want));
    return err <= rel * std::fabs(want);
}

inline double rel_err(double got, double want) {
    return std::fabs(got - want) / std::max(std::fabs(want), 1e-300);
}

/// The value of one panel key (the key must be present with a value).
inline double entry(const logratio::panel& p, const std::string& key) {
    for (const auto& e : logratio::panel_entries(p))
        if (e.first == key) {
            REQUIRE_MESSAGE(e.second.has_value(), key << " has no value");
            return *e.second;
        }
    FAIL("no key " << key);
    return 0;
}

/// Checks every key of `want` against the panel entries.
inline void check_entries(const logratio::panel& p, const std::map<std::string, double>& want,
                          const std::string& label, double rel = 1e-6) {
    std::map<std::string, double> got;
    for (const auto& e : logratio::panel_entries(p))
        if (e.second) got[e.first] = *e.second;
    for (const auto& w : want) {
        INFO(label << ": key " << w.first);
        REQUIRE_MESSAGE(got.count(w.first) == 1, "missing key " << w.first);
        CHECK_MESSAGE(spec_close(got[w.first], w.second, rel), w.first << " = " << got[w.first] << ", want "
                                                                     << w.second << " (rel err "
                                                                     << rel_err(got[w.first], w.second) << ")");
    }
}

/// The naive reference: SPEC's formulas evaluated one token at a time in
/// long double, variance by two passes.
template <class T, class M>
std::map<std::string, double> reference_panel(const logratio::paired_view<T, M>& v,
                                              const std::vector<double>& thr = {1e-3, 0.01, 0.1, 1.0}) {
    using ld = long double;
    std::vector<ld> d, seq_sum, seq_geo;
    ld st = 0, sr = 0, ppl_t = 0, ppl_r = 0;
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) {
        ld ss = 0, lt = 0, lr = 0;
        std::uint64_t L = 0;
        for (std::uint64_t i = v.sequence_begin(s); i < v.sequence_end(s); ++i) {
            if (!v.counts(i)) continue;
            const ld a = logratio::to_double(v.train()[i]), b = logratio::to_double(v.rollout()[i]);
            d.push_back(a - b);
            ss += a - b;
            lt += a;
            lr += b;
            ++L;
        }
        if (L == 0) continue;
        st += lt;
        sr += lr;
        seq_sum.push_back(ss);
        seq_geo.push_back(ss / L);
        ppl_t += std::exp(-lt / L);
        ppl_r += std::exp(-lr / L);
    }
    std::map<std::string, double> out;
    out["tokens"] = static_cast<double>(d.size());
    out["sequences"] = static_cast<double>(seq_sum.size());
    if (d.empty()) return out;
    const ld n = static_cast<ld>(d.size());
    auto mean = [](const std::vector<ld>& x) {
        ld s = 0;
        for (ld y : x) s += y;
        return s / x.size();
    };
    auto stdev = [&](const std::vector<ld>& x) {
        const ld m = mean(x);
        ld s = 0;
        for (ld y : x) s += (y - m) * (y - m);
        return std::sqrt(s / x.size());
    };
    std::vector<ld> rho, ad;
    ld k2 = 0, k3 = 0, rev = 0, chi = 0, tv = 0, sabs = 0;
    std::vector<ld> above(thr.size(), 0);
    for (ld x : d) {
        const ld dc = std::min<ld>(std::max<ld>(x, -20), 20);
        const ld em = std::expm1(dc);
        rho.push_back(1 + em);
        sabs += std::fabs(x);
        k2 += x * x / 2;
        k3 += em - dc;
        rev += (1 + em) * dc;
        chi += std::expm1(2 * dc);
        tv += std::fabs(em);
        for (std::size_t k = 0; k < thr.size(); ++k) above[k] += std::fabs(x) > thr[k];
    }
    ld srho = 0, srho2 = 0;
    for (ld r : rho) {
        srho += r;
        srho2 += r * r;
    }
    out["delta_mean"] = static_cast<double>(mean(d));
    out["delta_abs_mean"] = static_cast<double>(sabs / n);
    out["delta_std"] = static_cast<double>(stdev(d));
    out["delta_min"] = static_cast<double>(*std::min_element(d.begin(), d.end()));
    out["delta_max"] = static_cast<double>(*std::max_element(d.begin(), d.end()));
    ld amax = 0;
    for (ld x : d) amax = std::max(amax, std::fabs(x));
    out["delta_abs_max"] = static_cast<double>(amax);
    out["ratio_mean"] = static_cast<double>(mean(rho));
    out["ratio_std"] = static_cast<double>(stdev(rho));
    out["ratio_min"] = static_cast<double>(*std::min_element(rho.begin(), rho.end()));
    out["ratio_max"] = static_cast<double>(*std::max_element(rho.begin(), rho.end()));
    out["kl_k1"] = static_cast<double>(-mean(d));
    out["kl_k2"] = static_cast<double>(k2 / n);
    out["kl_k3"] = static_cast<double>(k3 / n);
    out["kl_reverse"] = static_cast<double>(rev / n);
    out["chi2"] = static_cast<double>(chi / n);
    out["tv"] = static_cast<double>(tv / (2 * n));
    out["ess_fraction"] = static_cast<double>(srho * srho / (n * srho2));
    out["train_logprob_mean"] = static_cast<double>(st / n);
    out["rollout_logprob_mean"] = static_cast<double>(sr / n);
    out["train_ppl"] = static_cast<double>(ppl_t / seq_sum.size());
    out["rollout_ppl"] = static_cast<double>(ppl_r / seq_sum.size());
    out["seq_log_ratio_mean"] = static_cast<double>(mean(seq_sum));
    out["seq_log_ratio_std"] = static_cast<double>(stdev(seq_sum));
    out["seq_log_ratio_min"] = static_cast<double>(*std::min_element(seq_sum.begin(), seq_sum.end()));
    out["seq_log_ratio_max"] = static_cast<double>(*std::max_element(seq_sum.begin(), seq_sum.end()));
    out["seq_geo_log_ratio_mean"] = static_cast<double>(mean(seq_geo));
    out["seq_geo_log_ratio_std"] = static_cast<double>(stdev(seq_geo));
    out["seq_geo_log_ratio_min"] = static_cast<double>(*std::min_element(seq_geo.begin(), seq_geo.end()));
    out["seq_geo_log_ratio_max"] = static_cast<double>(*std::max_element(seq_geo.begin(), seq_geo.end()));
    for (std::size_t k = 0; k < thr.size(); ++k)
        out["frac_abs_delta_gt_" + logratio::format_g(thr[k])] = static_cast<double>(above[k] / n);
    return out;
}

/// Synthetic paired log-probs with a realistic mismatch: l_E in (-8, 0],
/// delta of scale `scale` (heavy-tailed), a mask with `keep` probability.
struct synthetic {
    std::vector<double> train, rollout;
    std::vector<std::uint8_t> mask;
};
inline synthetic make_synthetic(std::size_t n, std::uint64_t seed, double scale = 0.02, double keep = 0.8) {
    std::mt19937_64 g(seed);
    std::exponential_distribution<double> lp(1.0);
    std::student_t_distribution<double> heavy(3.0);
    std::bernoulli_distribution m(keep);
    synthetic s;
    s.train.resize(n);
    s.rollout.resize(n);
    s.mask.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double le = -std::min(lp(g), 8.0);
        const double d = scale * heavy(g);
        s.rollout[i] = le;
        s.train[i] = std::min(le + d, 0.0);
        s.mask[i] = m(g) ? 1 : 0;
    }
    return s;
}

}  // namespace test
