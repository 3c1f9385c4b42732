#pragma once
// Descriptive statistics of a small series of per-update values (one run's
// metric over its updates): the numbers `logratio runs` prints per run.
// Same conventions as numpy: two-pass mean and variance, median of the two
// middle values for even n, sample standard deviation with ddof = 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "../core/limits.hpp"
#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {

inline constexpr double nan = undefined;

/// Sum in numpy's pairwise order (blocks of 128 with eight partial sums,
/// halves split at a multiple of 8), so that means and variances are the
/// same doubles numpy computes.
template <class F>
double pairwise_sum(std::size_t n, const F& at, std::size_t first = 0) {
    if (n < 8) {
        double s = 0.0;
        for (std::size_t i = 0; i < n; ++i) s += at(first + i);
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; ++k) r[k] = at(first + static_cast<std::size_t>(k));
        std::size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (std::size_t k = 0; k < 8; ++k) r[k] += at(first + i + k);
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) s += at(first + i);
        return s;
    }
    std::size_t h = n / 2;
    h -= h % 8;
    return pairwise_sum(h, at, first) + pairwise_sum(n - h, at, first + h);
}

/// Arithmetic mean (numpy.mean); NaN when n = 0.
inline double mean(const double* x, std::size_t n) noexcept {
    if (n == 0) return nan;
    return pairwise_sum(n, [x](std::size_t i) { return x[i]; }) / static_cast<double>(n);
}

/// Variance with `ddof` delta degrees of freedom (numpy.var: two-pass);
/// NaN when n <= ddof.
inline double variance(const double* x, std::size_t n, unsigned ddof = 1) noexcept {
    if (n <= ddof) return nan;
    const double m = mean(x, n);
    return pairwise_sum(n, [x, m](std::size_t i) { return (x[i] - m) * (x[i] - m); }) /
           static_cast<double>(n - ddof);
}

/// numpy.median: the middle value, or the mean of the two middle values.
inline double median(const double* x, std::size_t n) {
    if (n == 0) return nan;
    std::vector<double> v(x, x + n);
    const std::size_t h = n / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
    const double hi = v[h];
    if (n % 2) return hi;
    const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h));
    return (lo + hi) / 2.0;  // numpy: the mean of the two middle values
}

struct summary {
    std::size_t n = 0;
    double mean = nan;
    double std = nan;  ///< sample standard deviation (ddof = 1); NaN for n < 2
    double median = nan;
    double min = nan;
    double max = nan;
};

inline summary describe(const double* x, std::size_t n) {
    summary s;
    s.n = n;
    if (n == 0) return s;
    s.mean = mean(x, n);
    s.std = std::sqrt(variance(x, n, 1));
    s.median = median(x, n);
    s.min = *std::min_element(x, x + n);
    s.max = *std::max_element(x, x + n);
    return s;
}

/// Average ranks (1-based) of the values, ties sharing the mean of their
/// ranks (scipy.stats.rankdata's default).
inline std::vector<double> average_ranks(const double* x, std::size_t n) {
    std::vector<std::size_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [x](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && x[idx[j]] == x[idx[i]]) ++j;
        const double avg = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 .. j
        for (std::size_t k = i; k < j; ++k) r[idx[k]] = avg;
        i = j;
    }
    return r;
}

/// Sizes of the groups of equal values that have more than one member.
inline std::vector<std::size_t> tie_groups(const double* x, std::size_t n) {
    std::vector<double> v(x, x + n);
    std::sort(v.begin(), v.end());
    std::vector<std::size_t> t;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && v[j] == v[i]) ++j;
        if (j - i > 1) t.push_back(j - i);
        i = j;
    }
    return t;
}

}  // namespace stats
LOGRATIO_NAMESPACE_END
