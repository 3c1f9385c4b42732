#pragma once
// Rank statistics: Kendall's tau-b with its p-value (scipy.stats.kendalltau,
// method "auto": exact null distribution for n <= 33 without ties, the
// tie-corrected normal approximation otherwise) and the Mann-Whitney U test
// (scipy.stats.mannwhitneyu, two-sided, method "auto": exact when one sample
// has at most 8 values and there are no ties, else normal with tie and
// continuity correction).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <boost/math/special_functions/factorials.hpp>

#include "../core/error.hpp"
#include "descriptive.hpp"
#include "pair_counts.hpp"
#include "regression.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {

struct kendall_result {
    double tau = nan;     ///< tau-b; NaN when x or y is constant
    double pvalue = nan;  ///< two-sided
    bool exact = false;   ///< p from the exact permutation distribution
};

namespace detail {
/// n! as Boost.Math gives it (correctly rounded), n <= 170, read from a
/// table made once: boost::math::factorial<double> went through its
/// long-double table on every call (a fifth of the time of many short runs).
inline double factorial_of(std::uint64_t n) {
    static const std::vector<double> table = [] {
        std::vector<double> t(171);
        for (unsigned i = 0; i < t.size(); ++i) t[i] = boost::math::factorial<double>(i);
        return t;
    }();
    return table[static_cast<std::size_t>(n)];
}
}  // namespace detail

namespace detail {
/// f[k], k = 0..c: the permutations of n elements with k inversions (Kendall
/// 1970, by cumulative sums), divided by j! at each step when `scaled`
/// (n >= 171: the counts overflow; scipy does the same). Each f[k] depends
/// on f[0..k] only, so the first c + 1 entries of a longer table are these,
/// bit for bit.
inline std::vector<double> kendall_inversion_table(std::uint64_t n, std::uint64_t c, bool scaled) {
    std::vector<double> f(c + 1, 0.0);
    f[0] = f[1] = 1.0;
    for (std::uint64_t j = 3; j <= n; ++j) {
        double run = 0.0;
        for (std::uint64_t k = 0; k <= c; ++k) {
            run += f[k];
            f[k] = scaled ? run / static_cast<double>(j) : run;
        }
        if (j <= c)  // f[k] -= f[k - j] with the values before this subtraction
            for (std::uint64_t k = c; k >= j; --k) f[k] -= f[k - j];
    }
    return f;
}

/// The sum of f[0..c] of kendall_inversion_table(n, c, false), the tables
/// of n <= 64 kept per thread once made (at most ~180 KB): many short runs
/// pay the O(n³) recurrence once per length (it was a fifth of their
/// analysis), same bits.
inline double kendall_inversions_up_to(std::uint64_t n, std::uint64_t c) {
    thread_local std::vector<std::vector<double>> tables(65);
    auto& table = tables[static_cast<std::size_t>(n)];
    if (table.empty()) table = kendall_inversion_table(n, n * (n - 1) / 4, false);
    double s = 0.0;
    for (std::uint64_t k = 0; k <= c; ++k) s += table[static_cast<std::size_t>(k)];
    return s;
}
}  // namespace detail

/// Two-sided exact p-value of Kendall's statistic with c concordant pairs
/// among n values without ties (Kendall 1970: the number of permutations
/// with k inversions, by cumulative sums).
inline double kendall_exact_p(std::uint64_t n, std::uint64_t c) {
    const std::uint64_t tot = n * (n - 1) / 2;
    c = std::min(c, tot - c);
    if (n <= 2) return 1.0;
    if (c == 0) return n < 171 ? 2.0 / detail::factorial_of(n) : 0.0;
    if (c == 1) return n < 172 ? 2.0 / detail::factorial_of(n - 1) : 0.0;
    if (4 * c == n * (n - 1)) return 1.0;
    const bool scaled = n >= 171;
    double s = 0.0;
    if (n <= 64) {
        s = detail::kendall_inversions_up_to(n, c);  // c <= tot / 2: inside the table
    } else {
        for (double v : detail::kendall_inversion_table(n, c, scaled)) s += v;
    }
    const double p = !scaled ? 2.0 * s / detail::factorial_of(n) : s;
    return std::clamp(p, 0.0, 1.0);
}

namespace detail {

/// tau-b and its p-value from the pair counts (scipy.stats.kendalltau).
inline kendall_result kendall_from_counts(const kendall_counts& c, std::size_t n) {
    kendall_result r;
    const std::uint64_t xtie = c.xtie, ytie = c.ytie;
    const double x0 = c.x0, x1 = c.x1, y0 = c.y0, y1 = c.y1;
    const std::uint64_t tot = static_cast<std::uint64_t>(n) * (n - 1) / 2;
    if (xtie == tot || ytie == tot) return r;
    const double sd = static_cast<double>(c.s);
    r.tau = std::clamp(sd / std::sqrt(static_cast<double>(tot - xtie)) / std::sqrt(static_cast<double>(tot - ytie)),
                       -1.0, 1.0);
    if (xtie == 0 && ytie == 0 && (n <= 33 || std::min(c.dis, tot - c.dis) <= 1)) {
        r.exact = true;
        r.pvalue = kendall_exact_p(n, tot - c.dis);
        return r;
    }
    const double dn = static_cast<double>(n), m = dn * (dn - 1.0);
    const double var = (m * (2.0 * dn + 5.0) - x1 - y1) / 18.0 +
                       (2.0 * static_cast<double>(xtie) * static_cast<double>(ytie)) / m +
                       x0 * y0 / (9.0 * m * (dn - 2.0));
    r.pvalue = z_two_sided_p(sd / std::sqrt(var));
    return r;
}

}  // namespace detail

/// Kendall's tau-b of (x, y) and its two-sided p-value, as
/// scipy.stats.kendalltau(x, y). O(n log n) (Knight's merge sort).
inline kendall_result kendall_tau(const double* x, const double* y, std::size_t n) {
    if (n < 2) return {};
    return detail::kendall_from_counts(detail::kendall_counts_of(x, y, n), n);
}

/// kendall_tau by the O(n²) pair count (the reference of the tests).
inline kendall_result kendall_tau_reference(const double* x, const double* y, std::size_t n) {
    if (n < 2) return {};
    return detail::kendall_from_counts(detail::kendall_counts_reference(x, y, n), n);
}

struct mann_whitney_result {
    double u = nan;       ///< U statistic of the first sample
    double pvalue = nan;  ///< two-sided
    bool exact = false;
};

/// Upper tail P(U >= u) of the Mann-Whitney statistic for samples of m and n
/// values without ties: counts f(m, n, k) of arrangements with U = k from
/// f(m, n, k) = f(m-1, n, k-n) + f(m, n-1, k) (Di Bucchianico 1999), kept for
/// k <= K only, divided by C(m+n, m).
inline double mann_whitney_exact_sf(std::uint64_t m, std::uint64_t n, std::uint64_t u) {
    const std::uint64_t K = m * n - u;  // sf(u) = cdf(mn - u) by symmetry
    // layer[a][k] = f(a, b, k) for the current b; start at b = 0: f(a, 0, k) = [k == 0]
    std::vector<std::vector<double>> layer(m + 1, std::vector<double>(K + 1, 0.0));
    for (auto& l : layer) l[0] = 1.0;
    for (std::uint64_t b = 1; b <= n; ++b) {
        // layer[a] holds f(a, b-1, .) and layer[a-1] already f(a-1, b, .); f(0, b, k) = [k == 0]
        for (std::uint64_t a = 1; a <= m; ++a)
            for (std::uint64_t k = K + 1; k-- > b;) layer[a][k] += layer[a - 1][k - b];
    }
    // binom(m+n, m) in floating point
    double c = 1.0;
    for (std::uint64_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
    double s = 0.0;
    for (std::uint64_t k = 0; k <= K; ++k) s += layer[m][k] / c;
    return s;
}

/// scipy.stats.mannwhitneyu(a, b) (two-sided, use_continuity, method auto).
inline mann_whitney_result mann_whitney(const double* a, std::size_t na, const double* b, std::size_t nb) {
    mann_whitney_result r;
    if (na == 0 || nb == 0) throw shape_error("mann_whitney: both samples need at least one value");
    std::vector<double> xy(a, a + na);
    xy.insert(xy.end(), b, b + nb);
    const std::size_t N = na + nb;
    const auto ranks = average_ranks(xy.data(), N);
    double r1 = 0.0;
    for (std::size_t i = 0; i < na; ++i) r1 += ranks[i];
    const double n1 = static_cast<double>(na), n2 = static_cast<double>(nb);
    const double u1 = r1 - n1 * (n1 + 1.0) / 2.0, u2 = n1 * n2 - u1;
    r.u = u1;
    const double u = std::max(u1, u2);
    const auto ties = tie_groups(xy.data(), N);
    if ((na <= 8 || nb <= 8) && ties.empty()) {
        r.exact = true;
        r.pvalue = std::clamp(2.0 * mann_whitney_exact_sf(na, nb, static_cast<std::uint64_t>(u)), 0.0, 1.0);
        return r;
    }
    double tie_term = 0.0;
    for (std::size_t t : ties) {
        const double d = static_cast<double>(t);
        tie_term += d * d * d - d;
    }
    const double n = n1 + n2;
    const double sd = std::sqrt(n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0))));
    const double z = (u - n1 * n2 / 2.0 - 0.5) / sd;
    // one-sided normal sf doubled (z >= 0 here up to the continuity shift)
    r.pvalue = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
    return r;
}

}  // namespace stats
LOGRATIO_NAMESPACE_END
