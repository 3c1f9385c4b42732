#pragma once
// Mergeable running moments (count, mean, M2, min, max) -- Welford for single
// values, Chan et al. for merging two partial results. The building block of
// every accumulator in logratio: update -> merge (threads, ranks) -> finish.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "bytes.hpp"
#include "limits.hpp"
#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

struct moments {
    std::uint64_t n = 0;
    double mean = 0.0;
    double m2 = 0.0;  ///< sum of squared deviations from the mean
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();

    void add(double x) noexcept {
        ++n;
        const double d = x - mean;
        mean += d / static_cast<double>(n);
        m2 += d * (x - mean);
        min = std::min(min, x);
        max = std::max(max, x);
    }

    void merge(const moments& o) noexcept {
        if (o.n == 0) return;
        if (n == 0) {
            *this = o;
            return;
        }
        const double na = static_cast<double>(n), nb = static_cast<double>(o.n);
        const double nt = na + nb;
        const double d = o.mean - mean;
        mean += d * (nb / nt);
        m2 += o.m2 + d * d * (na * nb / nt);
        n += o.n;
        min = std::min(min, o.min);
        max = std::max(max, o.max);
    }

    /// Population variance (ddof = 0); NaN when empty.
    double variance() const noexcept {
        return n ? std::max(m2, 0.0) / static_cast<double>(n) : undefined;
    }
    double stddev() const noexcept { return std::sqrt(variance()); }
    /// Sample standard deviation (ddof = 1); NaN when empty; 0 for one value
    /// (verl's convention for its per-sequence std metrics, which use it).
    double sample_stddev() const noexcept {
        if (n == 0) return undefined;
        return n > 1 ? std::sqrt(std::max(m2, 0.0) / static_cast<double>(n - 1)) : 0.0;
    }
};

/// Mean and M2 of values with positive weights (West's weighted Welford;
/// Chan's merge). Equal values give exactly zero variance.
struct weighted_moments {
    double weight = 0.0, mean = 0.0, m2 = 0.0;

    void add(double x, double w) noexcept {
        if (!(w > 0.0)) return;
        weight += w;
        const double d = x - mean;
        mean += d * (w / weight);
        m2 += w * d * (x - mean);
    }
    void merge(const weighted_moments& o) noexcept {
        if (!(o.weight > 0.0)) return;
        if (!(weight > 0.0)) {
            *this = o;
            return;
        }
        const double wt = weight + o.weight;
        const double d = o.mean - mean;
        mean += d * (o.weight / wt);
        m2 += o.m2 + d * d * (weight * o.weight / wt);
        weight = wt;
    }
    /// Weighted population variance; NaN when empty (no positive weight).
    double variance() const noexcept {
        return weight > 0.0 ? std::max(m2, 0.0) / weight : undefined;
    }
};

namespace detail {
inline void put(byte_writer& w, const weighted_moments& m) {
    w.f64(m.weight);
    w.f64(m.mean);
    w.f64(m.m2);
}
inline void get(byte_reader& r, weighted_moments& m) {
    m.weight = r.f64();
    m.mean = r.f64();
    m.m2 = r.f64();
}
inline void put(byte_writer& w, const moments& m) {
    w.u64(m.n);
    w.f64(m.mean);
    w.f64(m.m2);
    w.f64(m.min);
    w.f64(m.max);
}
inline void get(byte_reader& r, moments& m) {
    m.n = r.u64();
    m.mean = r.f64();
    m.m2 = r.f64();
    m.min = r.f64();
    m.max = r.f64();
}
}  // namespace detail

LOGRATIO_NAMESPACE_END
