#pragma once
// Exact quantiles, bit-for-bit numpy.quantile(method=...) on float64 data,
// without sorting: all requested order statistics are selected in one
// recursive partition pass (nth_element on the middle requested rank, then
// each side with the ranks that fall in it), O(n log q).
//
// And the panel's second, opt-in pass: delta_q* and abs_delta_q* of SPEC.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"
#include "panel.hpp"
#include "view.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// numpy's quantile methods (numpy >= 1.22 names).
enum class quantile_method {
    inverted_cdf,
    averaged_inverted_cdf,
    closest_observation,
    interpolated_inverted_cdf,
    hazen,
    weibull,
    linear,  ///< default: Hyndman-Fan type 7
    median_unbiased,
    normal_unbiased,
    lower,
    higher,
    midpoint,
    nearest
};

inline quantile_method parse_quantile_method(const std::string& s) {
    static const std::pair<const char*, quantile_method> names[] = {
        {"inverted_cdf", quantile_method::inverted_cdf},
        {"averaged_inverted_cdf", quantile_method::averaged_inverted_cdf},
        {"closest_observation", quantile_method::closest_observation},
        {"interpolated_inverted_cdf", quantile_method::interpolated_inverted_cdf},
        {"hazen", quantile_method::hazen},
        {"weibull", quantile_method::weibull},
        {"linear", quantile_method::linear},
        {"median_unbiased", quantile_method::median_unbiased},
        {"normal_unbiased", quantile_method::normal_unbiased},
        {"lower", quantile_method::lower},
        {"higher", quantile_method::higher},
        {"midpoint", quantile_method::midpoint},
        {"nearest", quantile_method::nearest}};
    for (const auto& n : names)
        if (s == n.first) return n.second;
    throw shape_error("unknown quantile method '" + s + "'");
}

namespace detail {

/// Where quantile p of n sorted values lies: either one index (discrete
/// methods) or an interpolation between lo and hi with weight gamma.
struct quantile_position {
    std::uint64_t lo = 0, hi = 0;
    double gamma = 0.0;
    bool interpolate = false;
};

inline double floor_mod2(double x) { return x - 2.0 * std::floor(x / 2.0); }

inline quantile_position locate_quantile(std::uint64_t count, double q, quantile_method m) {
    const double n = static_cast<double>(count);
    const double last = n - 1;
    quantile_position pos;
    auto index = [&](double i) {  // integer index, clipped like numpy
        i = std::min(std::max(i, 0.0), last);
        pos.lo = pos.hi = static_cast<std::uint64_t>(i);
        pos.interpolate = false;
        return pos;
    };
    auto boundaries = [&](double v, bool take_previous_when) {
        const double prev = std::floor(v);
        return index(take_previous_when ? prev : prev + 1);
    };
    auto virtual_index = [&](double alpha, double beta) { return n * q + (alpha + q * (1 - alpha - beta)) - 1; };
    double v = 0;
    bool fixed_gamma = false;
    double gamma_fixed = 0;
    switch (m) {
        case quantile_method::lower: return index(std::floor(last * q));
        case quantile_method::higher: return index(std::ceil(last * q));
        case quantile_method::nearest: return index(std::nearbyint(last * q));  // half to even, as np.around
        case quantile_method::inverted_cdf: {
            const double vi = n * q - 1;
            return boundaries(vi, vi - std::floor(vi) == 0);
        }
        case quantile_method::closest_observation: {
            const double vi = n * q - 1 - 0.5;
            return boundaries(vi, (vi - std::floor(vi) == 0) && floor_mod2(std::floor(vi)) == 0);
        }
        case quantile_method::linear: v = last * q; break;
        case quantile_method::interpolated_inverted_cdf: v = virtual_index(0, 1); break;
        case quantile_method::hazen: v = virtual_index(0.5, 0.5); break;
        case quantile_method::weibull: v = virtual_index(0, 0); break;
        case quantile_method::median_unbiased: v = virtual_index(1 / 3.0, 1 / 3.0); break;
        case quantile_method::normal_unbiased: v = virtual_index(3 / 8.0, 3 / 8.0); break;
        case quantile_method::averaged_inverted_cdf: v = n * q - 1; break;
        case quantile_method::midpoint:
            v = 0.5 * (std::floor(last * q) + std::ceil(last * q));
            fixed_gamma = true;
            gamma_fixed = (v - std::floor(v) == 0) ? 0.0 : 0.5;
            break;
    }
    double prev = std::floor(v);
    if (v >= last) return index(last);
    if (v < 0) prev = 0;
    pos.lo = static_cast<std::uint64_t>(prev);
    pos.hi = pos.lo + 1;
    pos.interpolate = true;
    pos.gamma = v - prev;
    if (fixed_gamma) pos.gamma = gamma_fixed;
    if (m == quantile_method::averaged_inverted_cdf) pos.gamma = (pos.gamma == 0) ? 0.5 : 1.0;
    if (v < 0) {  // numpy takes the minimum on both sides
        pos.hi = 0;
    }
    return pos;
}

/// numpy's _lerp, rounding exactly as it does (no fused multiply-add).
inline double numpy_lerp(double a, double b, double t) {
    const double diff = b - a;
    volatile double p = diff * t;
    double r = a + p;
    if (t >= 0.5) {
        volatile double p2 = diff * (1 - t);
        r = b - p2;
    }
    return r;
}

/// Places the order statistics ranks[first, last) (sorted, unique) of
/// data[lo, hi) at their sorted positions.
inline void multi_select(double* data, std::uint64_t lo, std::uint64_t hi, const std::uint64_t* ranks,
                         std::size_t first, std::size_t last) {
    while (first < last && hi - lo > 1) {
        const std::size_t mid = first + (last - first) / 2;
        const std::uint64_t k = ranks[mid];
        std::nth_element(data + lo, data + k, data + hi);
        multi_select(data, lo, k, ranks, first, mid);
        lo = k + 1;
        first = mid + 1;
    }
}

}  // namespace detail

/// Quantiles of data[0, n) for every p in probs (each in [0, 1]), as
/// numpy.quantile(data, probs, method) returns them. Reorders data (it is
/// the scratch buffer); does not allocate beyond the rank list. NaN values
/// are an error (omit them before calling).
inline std::vector<double> quantiles_inplace(double* data, std::uint64_t n, const std::vector<double>& probs,
                                             quantile_method method = quantile_method::linear) {
    if (n == 0) throw shape_error("quantiles: empty input");
    for (std::size_t i = 0; i < probs.size(); ++i)
        if (!(probs[i] >= 0.0 && probs[i] <= 1.0))
            throw shape_error(detail::concat("quantiles: probability ", probs[i], " at index ", i,
                                             " is outside [0, 1]"));
    for (std::uint64_t i = 0; i < n; ++i)
        if (std::isnan(data[i])) throw value_error(detail::concat("quantiles: NaN at index ", i), "values", 0, i, data[i]);
    std::vector<detail::quantile_position> pos(probs.size());
    std::vector<std::uint64_t> ranks;
    ranks.reserve(2 * probs.size());
    for (std::size_t i = 0; i < probs.size(); ++i) {
        pos[i] = detail::locate_quantile(n, probs[i], method);
        ranks.push_back(pos[i].lo);
        ranks.push_back(pos[i].hi);
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    detail::multi_select(data, 0, n, ranks.data(), 0, ranks.size());
    std::vector<double> out(probs.size());
    for (std::size_t i = 0; i < probs.size(); ++i) {
        const auto& p = pos[i];
        out[i] = p.interpolate ? detail::numpy_lerp(data[p.lo], data[p.hi], p.gamma) : data[p.lo];
    }
    return out;
}

/// Quantiles of a copy of [first, last) (the input is not modified).
template <class It>
std::vector<double> quantiles(It first, It last, const std::vector<double>& probs,
                              quantile_method method = quantile_method::linear) {
    std::vector<double> scratch(first, last);
    return quantiles_inplace(scratch.data(), scratch.size(), probs, method);
}

/// SPEC's default quantile probabilities of the panel.
inline const std::vector<double>& default_delta_probs() {
    static const std::vector<double> p{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    return p;
}
inline const std::vector<double>& default_abs_delta_probs() {
    static const std::vector<double> p{0.5, 0.9, 0.99, 0.999, 0.9999};
    return p;
}

/// Copies delta of every masked-in token of v into `scratch` (resized),
/// computed as the panel kernel computes it. Non-finite tokens are skipped
/// (they are either an error the panel pass reports, or omitted).
template <class T, class M>
void gather_deltas(const paired_view<T, M>& v, std::vector<double>& scratch) {
    scratch.clear();
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) {
        const std::uint64_t e = v.sequence_end(s);
        for (std::uint64_t i = v.sequence_begin(s); i < e; ++i) {
            if (!v.counts(i)) continue;
            const double d = to_double(v.train()[i]) - to_double(v.rollout()[i]);
            if (std::isfinite(d)) scratch.push_back(d);
        }
    }
}

/// The panel's second pass: fills p.delta_quantiles and
/// p.abs_delta_quantiles (SPEC's delta_q*, abs_delta_q*). `scratch` holds
/// 8 bytes per masked-in token and may be reused across calls. Nothing is
/// added when the panel has no tokens.
template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, std::vector<double>& scratch,
                         const std::vector<double>& delta_probs = default_delta_probs(),
                         const std::vector<double>& abs_delta_probs = default_abs_delta_probs(),
                         quantile_method method = quantile_method::linear) {
    p.delta_quantiles.clear();
    p.abs_delta_quantiles.clear();
    gather_deltas(v, scratch);
    if (scratch.empty()) return;
    const auto qd = quantiles_inplace(scratch.data(), scratch.size(), delta_probs, method);
    for (double& x : scratch) x = std::fabs(x);
    const auto qa = quantiles_inplace(scratch.data(), scratch.size(), abs_delta_probs, method);
    for (std::size_t i = 0; i < qd.size(); ++i) p.delta_quantiles.emplace_back(delta_probs[i], qd[i]);
    for (std::size_t i = 0; i < qa.size(); ++i) p.abs_delta_quantiles.emplace_back(abs_delta_probs[i], qa[i]);
}

template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v) {
    std::vector<double> scratch;
    add_panel_quantiles(p, v, scratch);
}

LOGRATIO_NAMESPACE_END
