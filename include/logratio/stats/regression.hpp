#pragma once
// Trend of a metric over update number: ordinary least squares with Student-t
// inference (the numbers of scipy.stats.linregress) and the Theil-Sen median
// slope with Sen's (1968) confidence interval (scipy.stats.theilslopes,
// method "separate"). Distributions come from Boost.Math.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/math/distributions/normal.hpp>

#include "../core/error.hpp"
#include "descriptive.hpp"
#include "order_statistics.hpp"
#include "slope_selection.hpp"
#include "student_t.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {

/// Ordinary least squares of y on x.
struct linear_fit {
    std::size_t n = 0;
    double slope = nan, intercept = nan;
    double rvalue = nan;        ///< Pearson correlation
    double pvalue = nan;        ///< two-sided test of slope = 0 (t with n - 2 df)
    double slope_stderr = nan;  ///< standard error of the slope
    double intercept_stderr = nan;
    double slope_ci_low = nan, slope_ci_high = nan;  ///< slope ± t_{(1+c)/2, n-2} · stderr; NaN for n = 2
};

/// scipy.stats.linregress(x, y) plus the slope's Student-t confidence
/// interval. Needs n >= 2 and x not all equal (throws shape_error otherwise).
/// n = 2: p = 1 if y0 = y1 else 0, stderr = 0 (scipy's convention), no interval.
inline linear_fit linregress(const double* x, const double* y, std::size_t n, double confidence = 0.95) {
    if (n < 2) throw shape_error(::logratio::detail::concat("linregress: needs at least 2 points, got ", n));
    if (*std::min_element(x, x + n) == *std::max_element(x, x + n))
        throw shape_error("linregress: all x values are identical");
    linear_fit f;
    f.n = n;
    const double xm = mean(x, n), ym = mean(y, n);
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double dx = x[i] - xm, dy = y[i] - ym;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    const double dn = static_cast<double>(n);
    sxx /= dn;  // population (co)variances, as np.cov(bias=1)
    sxy /= dn;
    syy /= dn;
    double r = 0.0;
    if (sxx != 0.0 && syy != 0.0) r = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
    f.rvalue = r;
    f.slope = sxy / sxx;
    f.intercept = ym - f.slope * xm;
    if (n == 2) {
        f.pvalue = y[0] == y[1] ? 1.0 : 0.0;
        f.slope_stderr = 0.0;
        f.intercept_stderr = 0.0;
        return f;
    }
    const double df = dn - 2.0;
    constexpr double tiny = 1.0e-20;  // keeps t finite at |r| = 1, as scipy
    const double t = r * std::sqrt(df / ((1.0 - r + tiny) * (1.0 + r + tiny)));
    f.pvalue = t_two_sided_p(t, df);
    f.slope_stderr = std::sqrt((1.0 - r * r) * syy / sxx / df);
    f.intercept_stderr = f.slope_stderr * std::sqrt(sxx + xm * xm);
    const double tc = t_critical(confidence, df);
    f.slope_ci_low = f.slope - tc * f.slope_stderr;
    f.slope_ci_high = f.slope + tc * f.slope_stderr;
    return f;
}

/// Theil-Sen estimator: the median of the pairwise slopes.
struct theil_sen_fit {
    double slope = nan, intercept = nan;
    double low = nan, high = nan;  ///< Sen's confidence interval of the slope
};

namespace detail {
/// numpy's round (half to even) of a double, as an integer.
inline long long round_half_even(double v) { return static_cast<long long>(std::nearbyint(v)); }
inline double tie_sum(const std::vector<std::size_t>& t) {
    double s = 0.0;
    for (std::size_t k : t) {
        const double dk = static_cast<double>(k);
        s += dk * (dk - 1.0) * (2.0 * dk + 5.0);
    }
    return s;
}

/// The standard normal quantile at p, remembered for the last p asked (a
/// run analysis asks the same confidence of every run).
inline double normal_quantile_cached(double p) {
    thread_local double last_p = std::numeric_limits<double>::quiet_NaN(), last_z = 0;
    if (p != last_p) {
        last_z = boost::math::quantile(boost::math::normal_distribution<double, double_policy>(), p);
        last_p = p;
    }
    return last_z;
}

/// The ranks (0-based, in the sorted list of the m pairwise slopes) that
/// scipy.stats.theilslopes reads: the median's one or two, and Sen's
/// interval's [lo, hi] from the normal approximation to Kendall's S with
/// Sen's tie correction (m where scipy's numpy indexing finds no interval).
struct theil_sen_ranks {
    std::uint64_t median_lo = 0, median_hi = 0, lo = 0, hi = 0;
};

/// x_ties, y_ties: the sums of k(k-1)(2k+5) over the sizes k of the groups
/// of tied x, of tied y (tie_sum).
inline theil_sen_ranks theil_sen_ranks_of(std::uint64_t m, std::size_t n, double x_ties, double y_ties,
                                          double confidence) {
    theil_sen_ranks r;
    r.median_lo = m / 2 - (m % 2 == 0);
    r.median_hi = m / 2;
    double alpha = confidence;
    if (alpha > 0.5) alpha = 1.0 - alpha;
    const double z = normal_quantile_cached(alpha / 2.0);
    const double dn = static_cast<double>(n);
    const double sigsq = 1.0 / 18.0 * (dn * (dn - 1.0) * (2.0 * dn + 5.0) - x_ties - y_ties);
    // numpy indexing of the sorted slopes: negative indices count from the
    // end; out of range -> no interval
    const auto index = [&](long long k) {
        if (k < 0) k += static_cast<long long>(m);
        return (k < 0 || k >= static_cast<long long>(m)) ? m : static_cast<std::uint64_t>(k);
    };
    r.lo = r.hi = m;
    if (sigsq >= 0) {
        const double sigma = std::sqrt(sigsq), nt = static_cast<double>(m);
        r.hi = index(std::min(round_half_even((nt - z * sigma) / 2.0), static_cast<long long>(m) - 1));
        r.lo = index(std::max(round_half_even((nt + z * sigma) / 2.0) - 1, 0LL));
    }
    return r;
}

/// The fit from the slopes at the ranks of theil_sen_ranks_of.
inline theil_sen_fit theil_sen_from(std::uint64_t m, const theil_sen_ranks& r, double s_median_lo, double s_median_hi,
                                    double s_lo, double s_hi, const double* x, const double* y, std::size_t n) {
    theil_sen_fit f;
    f.slope = m % 2 ? s_median_hi : (s_median_lo + s_median_hi) / 2.0;
    f.intercept = median(y, n) - f.slope * median(x, n);
    if (r.lo == m || r.hi == m || std::isnan(s_lo) || std::isnan(s_hi)) return f;
    f.low = s_lo;
    f.high = s_hi;
    return f;
}

}  // namespace detail

/// scipy.stats.theilslopes(y, x, alpha=confidence), the O(n²) definition:
/// every slope over the pairs with x_j > x_i formed, the ranks selected.
/// The reference of theil_sen (tests); O(n²) memory.
inline theil_sen_fit theil_sen_reference(const double* x, const double* y, std::size_t n, double confidence = 0.95) {
    std::vector<double> s;
    s.reserve(n * (n - (n > 0)) / 2);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (x[i] - x[j] > 0) s.push_back((y[i] - y[j]) / (x[i] - x[j]));
    if (s.empty()) throw shape_error("theil_sen: needs two distinct x values");
    const std::uint64_t m = s.size();
    const auto r = detail::theil_sen_ranks_of(m, n, detail::tie_sum(tie_groups(x, n)), detail::tie_sum(tie_groups(y, n)),
                                              confidence);
    detail::select_order_statistics(s, {r.median_lo, r.median_hi, r.lo, r.hi});
    const auto at = [&](std::uint64_t k) { return k < m ? s[static_cast<std::size_t>(k)] : nan; };
    return detail::theil_sen_from(m, r, at(r.median_lo), at(r.median_hi), at(r.lo), at(r.hi), x, y, n);
}

/// scipy.stats.theilslopes(y, x, alpha=confidence): slopes over the pairs
/// with x_j > x_i; intercept median(y) - slope·median(x); interval from the
/// normal approximation to Kendall's S with Sen's tie correction. The order
/// statistics of the n²/2 slopes come from the randomized slope selection
/// (slope_selection.hpp) in O(n log n) expected time and O(n) memory, and
/// are bitwise the slopes theil_sen_reference selects. Throws when all x
/// are equal.
inline theil_sen_fit theil_sen(const double* x, const double* y, std::size_t n, double confidence = 0.95);

namespace detail {
/// theil_sen on the points of d (from slope_data_of(x, y, n), n > 90).
inline theil_sen_fit theil_sen_of(const slope_data& d, const double* x, const double* y, std::size_t n,
                                  double confidence) {
    const std::uint64_t m = d.pairs;
    if (m == 0) throw shape_error("theil_sen: needs two distinct x values");
    const auto r = theil_sen_ranks_of(m, n, d.x_tie_sum, d.y_tie_sum, confidence);
    std::vector<std::uint64_t> ranks = {r.median_lo, r.median_hi};
    if (r.lo < m && r.hi < m) {
        ranks.push_back(r.lo);
        ranks.push_back(r.hi);
    }
    const auto v = slopes_at_ranks(d, ranks);
    const double lo = v.size() > 2 ? v[2] : nan, hi = v.size() > 2 ? v[3] : nan;
    return theil_sen_from(m, r, v[0], v[1], lo, hi, x, y, n);
}
}  // namespace detail

inline theil_sen_fit theil_sen(const double* x, const double* y, std::size_t n, double confidence) {
    // up to 4005 slopes: listing them is faster than any search (the same
    // slopes, the same ranks: the same result)
    if (n <= 90) return theil_sen_reference(x, y, n, confidence);
    return detail::theil_sen_of(detail::slope_data_of(x, y, n), x, y, n, confidence);
}

}  // namespace stats
LOGRATIO_NAMESPACE_END
