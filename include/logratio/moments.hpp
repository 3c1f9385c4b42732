#pragma once
// Mergeable running moments (count, mean, M2, min, max) -- Welford for single
// values, Chan et al. for merging two partial results. The building block of
// every accumulator in logratio: update -> merge (threads, ranks) -> finish.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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
        return n ? std::max(m2, 0.0) / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
    }
    double stddev() const noexcept { return std::sqrt(variance()); }
};

LOGRATIO_NAMESPACE_END
