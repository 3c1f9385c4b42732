#pragma once
// The inversions of a permutation of 0..n), counted and visited by a
// most-significant-bit-first radix split instead of a merge sort: the fast
// path of the slope selection's counts, samples and listings
// (slope_selection.hpp; its keys -- a band's b-ranks, the points' indices in
// (x, y) order -- are permutations). The merge (inversion_merge.hpp) stays
// for weighted points and as the reference the tests hold this one to.
//
// An inversion (an earlier key larger than a later one) is decided at the
// highest bit where the two keys differ. Pass b (from the top bit down)
// stably splits each group of keys that agree above bit b into its 0s and
// then its 1s; the inversions decided at bit b are exactly the pairs (an
// earlier 1, a later 0) of one group. Because the keys are a permutation,
// a group's place after the passes above b is known without a histogram:
// the keys whose bits above b are g occupy positions [g·2^(b+1), (g+1)·2^(b+1))
// (the values themselves), its 0s the first 2^b of those. So a pass is one
// sequential read and two sequential write streams per group, with one
// running count (the 1s seen in the group) as its only loop-carried
// dependency -- where a merge's next comparison waits on the previous one's
// index update (the count there was latency bound, ~2 ns an item and
// level at n = 10^5). Each 0 meets its inversions as one contiguous range:
// the 1s before it in its group, written at the start of the group's upper
// half, so a listing costs O(n log n + pairs) as the merge's did.
//
// The counts are those of the randomized slope selection of Matousek (1991)
// in the form of Dillencourt, Mount & Netanyahu (1992), where a band's pairs
// are the inversions of one order in another, counted by a merge sort as in
// Knight's (1966) Kendall count; here the same inversions by the ranks' bits
// (the radix-sort view of that count: each pair met at the merge level --
// here the bit -- where it is decided).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "../core/version.hpp"
#include "inversion_merge.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// The number of bits a key of a permutation of n needs (0 for n <= 1).
inline int permutation_bits(std::size_t n) {
    int b = 0;
    while ((std::size_t(1) << b) < n) ++b;
    return b;
}

/// The inversions of a permutation of 0..n) (not checked: the callers' keys
/// are permutations by construction; anything else writes out of place).
inline std::uint64_t permutation_inversions(std::vector<std::uint32_t> a) {
    const std::size_t n = a.size();
    thread_local std::vector<std::uint32_t> t;  // reused per thread
    t.resize(n);
    std::uint64_t total = 0;
    for (int b = permutation_bits(n) - 1; b >= 0; --b) {
        const std::size_t half = std::size_t(1) << b, gmask = 2 * half - 1;
        std::size_t ones = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t v = a[i];
            ones &= std::size_t(0) - ((i & gmask) != 0);  // a new group: no 1s seen yet
            const std::size_t bit = (v >> b) & 1, zero = bit - 1;  // zero: all ones for a 0
            total += ones & zero;
            const std::size_t up = (i & ~gmask) + half + ones, down = i - ones;
            t[(down & zero) | (up & ~zero)] = v;
            ones += bit;
        }
        a.swap(t);
    }
    return total;
}

/// Calls f(cur, lo, hi, later) for each item `later` with inversions: they
/// are cur[lo..hi) (earlier items with larger keys), `cur` the items after
/// the pass that met them; each inversion is met once. The keys of `items`
/// are a permutation of 0..n). The events are recorded during a pass and f
/// called after it (f must not call this again: the buffers are per thread).
template <class F>
void for_each_permutation_inversion_range(std::vector<merge_item> items, const F& f) {
    struct event {
        std::uint32_t lo, hi;
        merge_item later;
    };
    const std::size_t n = items.size();
    thread_local std::vector<merge_item> tmp;
    thread_local std::vector<event> ev;
    tmp.resize(n);
    ev.resize(n);
    for (int b = permutation_bits(n) - 1; b >= 0; --b) {
        const std::size_t half = std::size_t(1) << b, gmask = 2 * half - 1;
        std::size_t ones = 0, e = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const merge_item v = items[i];
            ones &= std::size_t(0) - ((i & gmask) != 0);
            const std::size_t bit = (v.key >> b) & 1, zero = bit - 1;
            const std::size_t up = (i & ~gmask) + half;
            ev[e] = {static_cast<std::uint32_t>(up), static_cast<std::uint32_t>(up + ones), v};
            e += (ones != 0) & (bit == 0);
            tmp[((i - ones) & zero) | ((up + ones) & ~zero)] = v;
            ones += bit;
        }
        items.swap(tmp);
        for (std::size_t k = 0; k < e; ++k) f(items, ev[k].lo, ev[k].hi, ev[k].later);
    }
}

/// Calls f(earlier point, later point) for the inversions at the sorted
/// indices `targets` (< the count) of the order
/// for_each_permutation_inversion_range meets them in.
template <class F>
void permutation_inversions_at(std::vector<merge_item> items, const std::vector<std::uint64_t>& targets, const F& f) {
    unweighted_inversions_at(
        [](std::vector<merge_item> it, const auto& g) { for_each_permutation_inversion_range(std::move(it), g); },
        std::move(items), targets, f);
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
