#pragma once
// Order statistics of the pairwise slopes (y_j - y_i) / (x_j - x_i), x_i < x_j,
// without forming the n²/2 slopes: the Theil-Sen median and Sen's interval
// (regression.hpp) in O(n log n) expected time and O(n) memory.
//
// The algorithm is the randomized slope selection of Matoušek (1991),
// "Randomized optimal algorithm for slope selection", Inform. Process. Lett.
// 39(4), in the form of Dillencourt, Mount & Netanyahu (1992), "A randomized
// algorithm for slope selection", Int. J. Comput. Geom. Appl. 2(1):
//  - For a threshold t, the points ordered by the key y - t·x (ties by x)
//    put the point of larger x first exactly for the pairs whose slope is
//    below t. So with a second threshold b >= a, the pairs whose slope lies
//    in [a, b] are the inversions of the b-order inside the a-order, and the
//    pairs below a the inversions of x inside the a-order: all three --
//    counted in O(n log n), sampled uniformly in O(n log n + m) and
//    enumerated in O(n log n + pairs) -- on integer ranks, which for single
//    points are permutations: by a most-significant-bit-first radix split
//    (inversion_split.hpp), a band narrowed to about the listing size (a few
//    pairs a point) by an insertion sort in O(n + pairs)
//    (inversion_insertion.hpp), weighted points by a merge sort
//    (inversion_merge.hpp, also the reference of the other two in the
//    tests); the orders by a radix sort of the rounded keys (radix_order.hpp)
//    with exact tie-breaks. The band of all pairs of one sign is sampled by
//    drawing point pairs and keeping those of its sign (sample_sign_band).
//  - Start with the band of all pairs. While the band holds more than
//    L = O(n) pairs: draw m = O(n) random pairs of the band, take the sample
//    slopes c·sqrt(m) ranks below and above where the wanted rank falls, and
//    make them the new band. A band of B pairs shrinks to O(B / sqrt(m)) with
//    high probability, so after O(1) rounds (two for n up to 10^5) it holds
//    O(n) pairs; those are enumerated and the wanted ranks picked from them
//    (a radix select of the slopes' bits, order_statistics.hpp).
//    Ranks far apart (the median and the ends of Sen's interval) are first
//    bracketed together by one sample, in one shared band that each then
//    narrows in one more round (slope_selection_impl.hpp, shared_band_of).
//    A band that missed a rank (probability falls as exp(-c²/2)) is retried
//    with a wider margin; the answer is always checked, never assumed.
//
// Bitwise the slopes of the O(n²) definition (theil_sen_reference): the
// orders use exact keys (exact_keys.hpp), i.e. exact slopes q, while the
// result must be a computed slope s = fl(fl(dy) / fl(dx)), |s - q| <= 3.01u|q|
// (u = 2^-53, three roundings, no underflow: the data's range is checked).
// A band of computed slopes [lo, hi] is therefore counted and enumerated as
// the exact band [a, b] widened by 2^-50 relative, which holds every pair
// whose s is in [lo, hi]; the pairs below a all have s < lo. The k-th slope
// is the (k - below)-th computed slope of the enumerated band whenever that
// value lies in [lo, hi] (checked). Signs are exact (fl keeps the sign of
// dy), so the slopes equal to 0 -- every pair tied in y -- are counted
// exactly at t = 0 and never enumerated.
//
// Worst case: a band that cannot shrink because O(n²) computed slopes lie
// within a few ulps of the answer (exactly linear data, y = c·x with c != 0)
// is enumerated in O(n log n + pairs) time into a histogram of its few
// distinct values, still O(n) memory.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "exact_keys.hpp"
#include "inversion_insertion.hpp"
#include "inversion_merge.hpp"
#include "inversion_split.hpp"
#include "pair_counts.hpp"
#include "radix_order.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// The points, distinct, ordered by (x, y), each with its multiplicity.
struct slope_data {
    std::vector<double> x, y;
    std::vector<std::uint64_t> w;      ///< copies of each point
    std::vector<std::uint32_t> xrank;  ///< dense rank of x
    std::uint64_t pairs = 0;           ///< pairs with different x: the slopes
    std::uint64_t negative = 0;        ///< slopes < 0 (pairs in opposite strict order)
    std::uint64_t nonpositive = 0;     ///< slopes <= 0 (and the pairs tied in y)
    double x_tie_sum = 0, y_tie_sum = 0;  ///< sums of k(k-1)(2k+5) over the tie groups (Sen's variance)
    bool exact_range = true;           ///< values in the range where the keys are exact
    kendall_counts counts;             ///< Knight's pair counts of the points (Kendall's tau too)
};

inline slope_data slope_data_of(const double* x, const double* y, std::size_t n) {
    const std::vector<std::uint32_t> idx = xy_order(x, y, n);  // (shared with Knight's count below)
    slope_data d;
    // nonzero magnitudes in [2^-200, 2^200] keep every slope, threshold and
    // key product in the normal range (exact_keys.hpp's condition)
    auto in_range = [](double v) {
        const double a = std::fabs(v);
        return v == 0.0 || (a >= 0x1p-200 && a <= 0x1p200);
    };
    std::uint64_t before_group = 0, in_group = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const double xi = x[idx[k]], yi = y[idx[k]];
        d.exact_range = d.exact_range && in_range(xi) && in_range(yi);
        if (!d.x.empty() && d.x.back() == xi && d.y.back() == yi) {
            ++d.w.back();
        } else {
            const bool new_x = d.x.empty() || d.x.back() != xi;
            d.xrank.push_back(d.x.empty() ? 0 : d.xrank.back() + new_x);
            d.x.push_back(xi);
            d.y.push_back(yi);
            d.w.push_back(1);
            if (new_x) {
                before_group += in_group;
                in_group = 0;
            }
        }
        d.pairs += before_group;  // this copy pairs with every point of smaller x
        ++in_group;
    }
    // the sign of a computed slope is the sign of fl(dy), i.e. of dy: the
    // slopes below 0 are the discordant pairs, those at 0 the pairs tied in y
    // (x different): concordant + discordant + those = pairs
    const auto c = kendall_counts_in_order(x, y, idx);
    d.negative = c.dis;
    d.nonpositive = d.pairs - static_cast<std::uint64_t>(c.s) - c.dis;
    d.x_tie_sum = c.x1;
    d.y_tie_sum = c.y1;
    d.counts = c;
    return d;
}

/// The computed slope of points i and j (different x), as the O(n²)
/// definition computes it: (y of the larger x - the other y) / (x difference).
inline double pair_slope(const slope_data& d, std::uint32_t i, std::uint32_t j) {
    if (d.x[i] < d.x[j]) std::swap(i, j);
    return (d.y[i] - d.y[j]) / (d.x[i] - d.x[j]);
}

/// The points in the order of their keys y - t·x, ties by x (t = -inf: by
/// x then y; t = +inf: by x descending then y, the keys' limits); `keys`
/// gets the keys of a finite t. `near` (when given, for a finite t):
/// near[i] = 1 where the key at position i may equal the one before (their
/// rounded keys within the error bound), 0 where it is surely larger.
inline std::vector<std::uint32_t> key_order(const slope_data& d, double t, std::vector<exact_key>& keys,
                                            std::vector<std::uint8_t>* near = nullptr) {
    const std::size_t n = d.x.size();
    std::vector<std::uint32_t> o(n);
    keys.clear();
    if (t == -std::numeric_limits<double>::infinity()) {
        std::iota(o.begin(), o.end(), 0u);
        return o;
    }
    if (t == std::numeric_limits<double>::infinity()) {  // the groups of equal x last to first, y ascending in each
        std::size_t out = 0;
        for (std::size_t e = n; e > 0;) {
            std::size_t b = e - 1;
            while (b > 0 && d.xrank[b - 1] == d.xrank[e - 1]) --b;
            for (std::size_t i = b; i < e; ++i) o[out++] = static_cast<std::uint32_t>(i);
            e = b;
        }
        return o;
    }
    if (keys.size() != n) keys.resize(n);  // (a reused buffer: no zero fill of 40 bytes a point)
    double err = 0;
    thread_local std::vector<double> approx;
    approx.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = key_of(t, d.x[i], d.y[i]);
        approx[i] = keys[i].approx;
        err = std::max(err, keys[i].err);
    }
    // by the rounded keys first (radix_order.hpp); two keys whose order that
    // could get wrong are within 2·err of each other, and so is every key
    // between them: the runs of keys closer than that are sorted again, exactly
    radix_order(approx.data(), n, o);
    const auto exact_less = [&](std::uint32_t a, std::uint32_t b) {
        const int c = compare_keys(keys[a], keys[b]);
        return c < 0 || (c == 0 && d.x[a] < d.x[b]);
    };
    if (near) near->assign(n, 0);
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && !(approx[o[j]] - approx[o[j - 1]] > 2 * err)) ++j;
        if (j - i > 1) {
            std::sort(o.begin() + static_cast<std::ptrdiff_t>(i), o.begin() + static_cast<std::ptrdiff_t>(j), exact_less);
            if (near) std::fill(near->begin() + static_cast<std::ptrdiff_t>(i + 1), near->begin() + static_cast<std::ptrdiff_t>(j), 1);
        }
        i = j;
    }
    return o;
}

/// The pairs whose exact slope is in [a, b] (a <= b), as inversions: the
/// a-order of the points, and each position's rank in the b-order.
struct slope_band {
    double a = 0, b = 0;
    std::vector<std::uint32_t> point;  ///< point at each position of the a-order
    std::vector<std::uint32_t> rank;   ///< b-rank of each position (ties: the later position first)
    std::uint64_t pairs = 0;           ///< pairs in the band (the inversions of the b-ranks)
    std::uint64_t below = 0;           ///< pairs with exact slope < a
    bool ordered = true;               ///< point and rank are filled (counted_band: not yet)
    std::uint64_t size() const { return pairs; }
};

/// The points of the a-order with the key `key` of each (the merge's items).
template <class Key>
std::vector<merge_item> items_of(const slope_band& s, const Key& key) {
    std::vector<merge_item> it(s.point.size());
    for (std::size_t p = 0; p < it.size(); ++p) it[p] = {key(p), s.point[p]};
    return it;
}

/// The weights of the points, or null when every point is single (no weights to carry).
inline const std::vector<std::uint64_t>* weights_of(const slope_data& d) {
    return std::all_of(d.w.begin(), d.w.end(), [](std::uint64_t w) { return w == 1; }) ? nullptr : &d.w;
}

/// Each position's rank in the b-order; a tie in the b-key puts the later
/// a-position first, so that every pair tied at b counts as inside. `near`:
/// key_order's (equal keys lie within one near run: the keys of the other
/// positions are not loaded, a random read of 40 bytes a point).
inline void b_ranks(const std::vector<std::uint32_t>& by_b, const std::vector<exact_key>& kb,
                    const std::vector<std::uint8_t>& near, const std::vector<std::uint32_t>& pos_of,
                    std::vector<std::uint32_t>& rank) {
    const std::size_t n = by_b.size();
    rank.assign(n, 0);
    std::vector<std::uint32_t> tied;
    for (std::size_t r = 0; r < n;) {
        std::size_t e = r + 1;
        if (!kb.empty())
            while (e < n && near[e] && compare_keys(kb[by_b[e]], kb[by_b[r]]) == 0) ++e;
        if (e == r + 1) {
            rank[pos_of[by_b[r]]] = static_cast<std::uint32_t>(r);
            ++r;
            continue;
        }
        tied.clear();
        for (std::size_t q = r; q < e; ++q) tied.push_back(pos_of[by_b[q]]);
        std::sort(tied.begin(), tied.end(), std::greater<std::uint32_t>());
        for (std::size_t q = r; q < e; ++q) rank[tied[q - r]] = static_cast<std::uint32_t>(q);
        r = e;
    }
}

/// The band [a, b]; `known`: its (below, pairs) when the caller knows them
/// (the bands of all negative or all positive slopes: Kendall's counts).
/// `few`: the caller expects at most about this many pairs (a band narrowed
/// to the listing size): they are counted by insertion, up to that many.
inline slope_band band_of(const slope_data& d, double a, double b,
                          const std::pair<std::uint64_t, std::uint64_t>* known = nullptr, std::uint64_t few = 0) {
    const std::size_t n = d.x.size();
    slope_band s;
    s.a = a;
    s.b = b;
    thread_local std::vector<exact_key> keys;  // reused per thread (4 MB at n = 10^5)
    thread_local std::vector<std::uint32_t> pos_of;
    s.point = key_order(d, a, keys);
    pos_of.resize(n);
    for (std::size_t p = 0; p < n; ++p) pos_of[s.point[p]] = static_cast<std::uint32_t>(p);
    thread_local std::vector<std::uint8_t> near;
    const auto by_b = key_order(d, b, keys, &near);
    b_ranks(by_b, keys, near, pos_of, s.rank);
    if (known) {
        std::tie(s.below, s.pairs) = *known;
        return s;
    }
    // the pairs below a: a larger x before a smaller one in the a-order
    // (equal x: no slope, and the merge keeps equal keys in order)
    if (const auto* w = weights_of(d)) {
        s.below = inversion_count(items_of(s, [&](std::size_t p) { return d.xrank[s.point[p]]; }), w);
        s.pairs = inversion_count(items_of(s, [&](std::size_t p) { return s.rank[p]; }), w);
        return s;
    }
    // single points: the keys are permutations (inversion_split.hpp). The
    // points' indices in (x, y) order stand for x: equal x come in y order
    // in every a-order (key y - a·x), so they make no inversion there either
    s.below = permutation_inversions(s.point);
    const auto counted = few ? inversions_by_insertion(s.rank, few) : std::nullopt;
    s.pairs = counted ? *counted : permutation_inversions(s.rank);
    return s;
}

/// The band [a, b] of known counts (below, pairs) without its two orders:
/// the start bands of all negative or all positive slopes, whose counts are
/// Kendall's and whose sample is mostly drawn without them
/// (sample_sign_band). Their orders at t = -tiny and +tiny sort the points
/// by y with every tie of y broken exactly (the costliest orders of a
/// search on data rounded to a few digits: ~15% of the run analysis at
/// n = 10^5, perf), so they are made only where a step lists or samples
/// the band itself (ordered_band).
inline slope_band counted_band(double a, double b, std::pair<std::uint64_t, std::uint64_t> counts) {
    slope_band s;
    s.a = a;
    s.b = b;
    std::tie(s.below, s.pairs) = counts;
    s.ordered = false;
    return s;
}

/// `s` with its orders: itself, or (a counted_band) the band made into `cache`.
inline const slope_band& ordered_band(const slope_data& d, const slope_band& s, slope_band& cache) {
    if (s.ordered) return s;
    const std::pair<std::uint64_t, std::uint64_t> known{s.below, s.pairs};
    cache = band_of(d, s.a, s.b, &known);
    return cache;
}

/// Whether the band's pairs are few enough (<= 256 an item) for an insertion
/// sort to meet them faster than log2(n) passes over the items would.
inline bool few_inversions(const slope_band& s) { return s.pairs <= 256 * std::uint64_t(s.rank.size()); }

/// splitmix64: a small deterministic generator (results must not depend
/// on a seed, and they do not: the sample only guides the search).
struct splitmix {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) {  // uniform in [0, n): the high word of next() * n
        const std::uint64_t a = next(), a1 = a >> 32, a0 = a & 0xFFFFFFFFu, n1 = n >> 32, n0 = n & 0xFFFFFFFFu;
        const std::uint64_t mid = (a0 * n0 >> 32) + (a1 * n0 & 0xFFFFFFFFu) + (a0 * n1 & 0xFFFFFFFFu);
        return a1 * n1 + (a1 * n0 >> 32) + (a0 * n1 >> 32) + (mid >> 32);
    }
};

/// m slopes of pairs drawn from the band by stratified sampling (one
/// uniform draw in each m-th of the band's pairs, in the order the merge
/// meets them: the targets come sorted, and a stratified sample's quantiles
/// vary less than an i.i.d. one's).
inline std::vector<double> sample_band(const slope_data& d, const slope_band& band, std::size_t m, splitmix& rng) {
    slope_band cache;
    const slope_band& s = ordered_band(d, band, cache);
    const std::uint64_t size = s.size();
    m = static_cast<std::size_t>(std::min<std::uint64_t>(m, size));
    std::vector<std::uint64_t> targets(m);
    const std::uint64_t whole = m ? size / m : 0, part = m ? size % m : 0;
    const auto stratum = [&](std::size_t k) {  // floor(k * size / m) without overflow (k <= m <= 2^24)
        return k * whole + k * part / m;
    };
    for (std::size_t k = 0; k < m; ++k) targets[k] = stratum(k) + rng.below(stratum(k + 1) - stratum(k));
    std::vector<double> out;
    out.reserve(m);
    const auto add = [&](std::uint32_t earlier, std::uint32_t later) { out.push_back(pair_slope(d, earlier, later)); };
    auto items = items_of(s, [&](std::size_t p) { return s.rank[p]; });
    if (const auto* w = weights_of(d)) inversions_at(std::move(items), w, targets, add);
    else if (few_inversions(s)) inversions_by_insertion_at(std::move(items), targets, add);
    else permutation_inversions_at(std::move(items), targets, add);
    return out;
}

/// m slopes of pairs drawn uniformly (independently) from a band of all the
/// pairs of one sign (`positive`, else negative), by drawing two points and
/// keeping the pair when its slope has that sign: no pass over the points.
/// None when points carry weights, or the band holds under a quarter of the
/// n² ordered draws (too many would be rejected): sample_band then.
inline std::optional<std::vector<double>> sample_sign_band(const slope_data& d, const slope_band& s, bool positive,
                                                           std::size_t m, splitmix& rng) {
    const std::uint64_t n = d.x.size();
    if (weights_of(d) || s.size() < n * n / 8) return std::nullopt;  // (pairs = half the ordered draws)
    std::vector<double> out;
    out.reserve(m);
    while (out.size() < m) {
        const auto i = static_cast<std::uint32_t>(rng.below(n)), j = static_cast<std::uint32_t>(rng.below(n));
        if (d.x[i] == d.x[j]) continue;  // (i == j too): no slope
        const double v = pair_slope(d, i, j);
        if (positive ? v > 0 : v < 0) out.push_back(v);
    }
    return out;
}

/// for_each_band_pair of a band of single points with few pairs
/// (few_inversions): an insertion sort of the points by b-rank, carrying
/// their x and y, so each inserted point's pairs are the points it passes,
/// read where they lie (inversion_insertion.hpp; no scattered loads). The
/// quotient is for_each_band_pair's (the earlier point first, + 0.0).
template <class F>
void for_each_few_band_pair(const slope_data& d, const slope_band& s, const F& f) {
    struct ranked_point {
        std::uint32_t rank;
        double x, y;
    };
    thread_local std::vector<ranked_point> v;  // reused per thread
    v.resize(s.point.size());
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = {s.rank[p], d.x[s.point[p]], d.y[s.point[p]]};
    for (std::size_t j = 1; j < v.size(); ++j) {
        const ranked_point b = v[j];
        std::size_t p = j;
        for (; p > 0 && v[p - 1].rank > b.rank; --p) {
            const ranked_point& a = v[p - 1];
            f((a.y - b.y) / (a.x - b.x) + 0.0, std::uint64_t(1));
            v[p] = a;
        }
        v[p] = b;
    }
}

/// Calls f(slope, copies) for every pair of distinct points in the band: a
/// merge sort of the positions by b-rank, each merge listing the earlier
/// positions of higher rank that a later one passes.
template <class F>
void for_each_band_pair(const slope_data& d, const slope_band& s, const F& f) {
    const auto* w = weights_of(d);
    if (!w && few_inversions(s)) return for_each_few_band_pair(d, s, f);
    // each point's x and y side by side: one cache line a pair, not two
    // (the points of a merge's range are scattered); the quotient is
    // pair_slope's: fl(y_i - y_j) = -fl(y_j - y_i), so either order of the
    // pair gives the same bits, but for a zero: 0 / -dx is -0, and + 0.0
    // makes it pair_slope's +0 (and changes no other value)
    struct xy {
        double x, y;
    };
    thread_local std::vector<xy> pts;
    pts.resize(d.x.size());
    for (std::size_t p = 0; p < pts.size(); ++p) pts[p] = {d.x[p], d.y[p]};
    const auto visit = [&](const std::vector<merge_item>& cur, std::size_t i, std::size_t mid, const merge_item& later) {
        const xy b = pts[later.point];
        for (std::size_t k = i; k < mid; ++k) {
            const xy a = pts[cur[k].point];
            f((a.y - b.y) / (a.x - b.x) + 0.0, w ? d.w[cur[k].point] * d.w[later.point] : 1);
        }
    };
    auto items = items_of(s, [&](std::size_t p) { return s.rank[p]; });
    if (!w) return for_each_permutation_inversion_range(std::move(items), visit);  // (inversion_split.hpp)
    for_each_inversion_range(std::move(items), w,
                             [&](const std::vector<merge_item>& cur, std::size_t i, std::size_t mid,
                                 const merge_item& later, const std::vector<std::uint64_t>&) { visit(cur, i, mid, later); });
}

/// The smallest threshold a such that every pair whose computed slope is
/// >= lo has exact slope >= a, and every pair with exact slope < a has a
/// computed slope < lo (|s - q| <= 3.01u|q|; signs exact).
inline double widen_down(double lo) {
    if (lo == 0.0 || std::isinf(lo)) return lo;
    return lo - std::fabs(lo) * 0x1p-50;
}
inline double widen_up(double hi) {
    if (hi == 0.0 || std::isinf(hi)) return hi;
    return hi + std::fabs(hi) * 0x1p-50;
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END

#include "slope_selection_impl.hpp"
