#pragma once
// Pair counts of Kendall's tau over n points in O(n log n) (Knight 1966),
// with the O(n²) count they are tested against. Used by kendall_tau
// (rank_tests.hpp) and by the slope selection (slope_selection.hpp: the
// pairs of negative and of zero slope are exactly these counts).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/version.hpp"
#include "inversion_split.hpp"
#include "radix_order.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// The pair counts Kendall's tau-b needs.
struct kendall_counts {
    std::uint64_t dis = 0;   ///< discordant pairs (x and y in opposite strict order)
    std::int64_t s = 0;      ///< concordant - discordant
    /// Over the groups of tied x (y): the pairs, and the sums of
    /// k(k-1)(k-2) and k(k-1)(2k+5) of their sizes k, groups in value order.
    std::uint64_t xtie = 0, ytie = 0;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    void add_x_group(std::uint64_t k) { add_group(k, xtie, x0, x1); }
    void add_y_group(std::uint64_t k) { add_group(k, ytie, y0, y1); }

private:
    static void add_group(std::uint64_t k, std::uint64_t& pairs, double& t0, double& t1) {
        if (k < 2) return;
        const double d = static_cast<double>(k);
        pairs += k * (k - 1) / 2;
        t0 += d * (d - 1.0) * (d - 2.0);
        t1 += d * (d - 1.0) * (2.0 * d + 5.0);
    }
};

/// The sizes of the runs of equal values in sorted v, given to f.
template <class F>
void tie_runs(const std::vector<double>& v, const F& f) {
    for (std::size_t i = 0, j = 0; i < v.size(); i = j) {
        for (j = i + 1; j < v.size() && v[j] == v[i]; ++j) {}
        f(static_cast<std::uint64_t>(j - i));
    }
}

/// O(n²) pair count: the reference of kendall_counts_of (tests).
inline kendall_counts kendall_counts_reference(const double* x, const double* y, std::size_t n) {
    kendall_counts c;
    std::vector<double> sx(x, x + n), sy(y, y + n);
    std::sort(sx.begin(), sx.end());
    std::sort(sy.begin(), sy.end());
    tie_runs(sx, [&](std::uint64_t k) { c.add_x_group(k); });
    tie_runs(sy, [&](std::uint64_t k) { c.add_y_group(k); });
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            const int sx = (x[i] < x[j]) - (x[i] > x[j]), sy = (y[i] < y[j]) - (y[i] > y[j]);
            c.s += sx * sy;
            c.dis += (sx * sy < 0);
        }
    return c;
}

/// The indices 0..n) ordered by (x, y); O(n) when they already are (a
/// run's updates come in order: the common case skips the sort).
inline std::vector<std::uint32_t> xy_order(const double* x, const double* y, std::size_t n) {
    std::vector<std::uint32_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
    const auto less = [&](std::uint32_t a, std::uint32_t b) { return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]); };
    if (!std::is_sorted(idx.begin(), idx.end(), less)) std::sort(idx.begin(), idx.end(), less);
    return idx;
}

/// The exchanges of a bottom-up merge sort of a (ties keep their order),
/// a left sorted. With branches: a branchless merge (masks, as in
/// inversion_merge.hpp) measured slower here, 8.0 against 7.4 ms at n = 10^5.
inline std::uint64_t merge_exchanges(std::vector<double>& a) {
    const std::size_t n = a.size();
    std::vector<double> b(n);
    std::uint64_t dis = 0;
    for (std::size_t width = 1; width < n; width *= 2) {
        for (std::size_t lo = 0; lo < n; lo += 2 * width) {
            const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
            std::size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (a[j] < a[i]) {
                    dis += mid - i;
                    b[o++] = a[j++];
                } else {
                    b[o++] = a[i++];
                }
            }
            while (i < mid) b[o++] = a[i++];
            while (j < hi) b[o++] = a[j++];
        }
        std::swap(a, b);
    }
    return dis;
}

/// merge_exchanges by ranks: the y's (finite, -0 made +0: a tie, as the
/// merge sees it) ordered by a radix sort (ties by position: no exchange),
/// their ranks a permutation whose inversions are the exchanges, counted by
/// the radix split (inversion_split.hpp) -- about half the merge's time at
/// n = 10^5. Small or non-finite inputs take the merge.
inline std::uint64_t exchanges_by_ranks(std::vector<double>& a) {
    const std::size_t n = a.size();
    bool finite = n >= 512;
    for (double& v : a) {
        v += 0.0;
        finite = finite && std::isfinite(v);
    }
    if (!finite) return merge_exchanges(a);
    thread_local std::vector<std::uint32_t> order;
    radix_order(a.data(), n, order);
    std::vector<std::uint32_t> rank(n);
    std::vector<double> sorted(n);
    for (std::size_t r = 0; r < n; ++r) {
        rank[order[r]] = static_cast<std::uint32_t>(r);
        sorted[r] = a[order[r]];
    }
    a.swap(sorted);
    return permutation_inversions(std::move(rank));
}

/// Knight's (1966) O(n log n) count ("A computer method for calculating
/// Kendall's tau with ungrouped data", JASA 61): sort by (x, y); the pairs
/// tied in x, and in x and y together, are runs of that order; a merge sort
/// of the y's counts the exchanges, i.e. the pairs in strictly opposite
/// order (within an x tie the y's are sorted, so no exchange); the sorted
/// y's give the pairs tied in y. Then concordant - discordant =
/// all - tied x - tied y + tied both - 2·discordant. The (x, y) order is
/// given (xy_order).
inline kendall_counts kendall_counts_in_order(const double* x, const double* y, const std::vector<std::uint32_t>& idx) {
    const std::size_t n = idx.size();
    auto tied_pairs = [](std::size_t i, std::size_t j) {
        const std::uint64_t k = j - i;
        return k * (k - 1) / 2;
    };
    std::vector<double> a(n);
    kendall_counts c;
    std::uint64_t both = 0;
    for (std::size_t i = 0, j = 0; i < n; i = j) {
        for (j = i + 1; j < n && x[idx[j]] == x[idx[i]]; ++j) {}
        c.add_x_group(j - i);
        for (std::size_t p = i, q = i; p < j; p = q) {
            for (q = p + 1; q < j && y[idx[q]] == y[idx[p]]; ++q) {}
            both += tied_pairs(p, q);
        }
    }
    for (std::size_t i = 0; i < n; ++i) a[i] = y[idx[i]];
    const std::uint64_t dis = exchanges_by_ranks(a);  // a: the y's sorted
    tie_runs(a, [&](std::uint64_t k) { c.add_y_group(k); });
    const std::uint64_t tot = static_cast<std::uint64_t>(n) * (n - (n > 0)) / 2;
    c.dis = dis;
    c.s = static_cast<std::int64_t>(tot - c.xtie - c.ytie + both) - 2 * static_cast<std::int64_t>(dis);
    return c;
}

inline kendall_counts kendall_counts_of(const double* x, const double* y, std::size_t n) {
    return kendall_counts_in_order(x, y, xy_order(x, y, n));
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
