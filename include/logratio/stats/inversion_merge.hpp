#pragma once
// The inversions of a sequence of integer keys, visited by a bottom-up merge
// sort: counted (weighted), sampled and listed by the slope selection
// (slope_selection.hpp). Each inversion -- an earlier item with a larger key
// than a later one -- is met exactly once, at the merge where the two items
// meet: when a right-run item is taken while left-run items remain, its
// inversions are those remaining items, a contiguous range. So a count is a
// sum over those ranges, the pair with a given index in that order is found
// in O(1) (O(log n) with weights), and a listing costs O(n log n + pairs).
// Integer keys compared inline: no comparator callback, no Fenwick tree's
// scattered accesses (the previous counting, two Fenwick trees per band and
// one per sample, was a third of the selection's time at n = 10^5).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// An item of the merge: its key and the point it stands for.
struct merge_item {
    std::uint32_t key, point;
};

/// Merge-sorts `items` by key (stable: equal keys are no inversion), calling
/// f(cur, i, mid, later, pw) for each item `later` taken from a right run
/// while cur[i..mid) of its left run remain: `later`'s inversions are
/// exactly those. pw: when `w` is given, pw[k] = the weight of cur[0..k) at
/// this level (w indexed by point); otherwise empty (every weight 1).
/// The merges are branchless (which run an item comes from is a coin toss
/// for the predictor); the events are recorded and f called after each level.
template <class F>
void for_each_inversion_range(std::vector<merge_item> items, const std::vector<std::uint64_t>* w, const F& f) {
    struct event {
        std::uint32_t i, mid;
        merge_item later;
    };
    const std::size_t n = items.size();
    // reused per thread (a run's dozen merges allocate nothing once warm);
    // f never merges again, so no call nests in another's buffers
    thread_local std::vector<merge_item> tmp;
    thread_local std::vector<event> ev;
    thread_local std::vector<std::uint64_t> pw;
    tmp.resize(n);
    ev.resize(n);
    pw.clear();  // (empty: every weight 1, to f)
    for (std::size_t width = 1; width < n; width *= 2) {
        if (w) {
            pw.resize(n + 1);
            pw[0] = 0;
            for (std::size_t k = 0; k < n; ++k) pw[k + 1] = pw[k] + (*w)[items[k].point];
        }
        std::size_t e = 0;
        for (std::size_t lo = 0; lo < n; lo += 2 * width) {
            const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
            std::size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                const merge_item b = items[j];
                const std::size_t right = b.key < items[i].key, mask = ~right + 1;  // masks: g++ made ?: a branch
                ev[e] = {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(mid), b};
                e += right;
                tmp[o++] = items[i ^ ((i ^ j) & mask)];
                i += 1 - right;
                j += right;
            }
            while (i < mid) tmp[o++] = items[i++];
            while (j < hi) tmp[o++] = items[j++];
        }
        for (std::size_t k = 0; k < e; ++k) f(items, ev[k].i, ev[k].mid, ev[k].later, pw);
        items.swap(tmp);
    }
}

/// The weighted number of inversions (pairs weigh w[a]·w[b]; w null: 1).
inline std::uint64_t inversion_count(std::vector<merge_item> items, const std::vector<std::uint64_t>* w) {
    std::uint64_t total = 0;
    for_each_inversion_range(std::move(items), w,
                             [&](const std::vector<merge_item>&, std::size_t i, std::size_t mid, const merge_item& later,
                                 const std::vector<std::uint64_t>& pw) {
                                 total += pw.empty() ? mid - i : (*w)[later.point] * (pw[mid] - pw[i]);
                             });
    return total;
}

/// The inversions of two key sequences of one length (weights 1), counted
/// together: two independent branchless merges in one loop, so that the
/// latency of one overlaps the other's (the count is latency bound).
inline std::pair<std::uint64_t, std::uint64_t> inversion_counts(std::vector<std::uint32_t> a,
                                                                std::vector<std::uint32_t> b) {
    const std::size_t n = a.size();
    a.push_back(0);  // a readable slot past the end (its value never decides: j < hi does)
    b.push_back(0);
    thread_local std::vector<std::uint32_t> ta, tb;  // reused per thread
    ta.resize(n + 1);
    tb.resize(n + 1);
    std::uint64_t ca = 0, cb = 0;
    for (std::size_t width = 1; width < n; width *= 2) {
        for (std::size_t lo = 0; lo < n; lo += 2 * width) {
            const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
            std::size_t ia = lo, ja = mid, ib = lo, jb = mid;
            for (std::size_t o = lo; o < hi; ++o) {
                // masks, not ?: (g++ made those branches)
                const std::size_t ra = (ja < hi) & ((ia >= mid) | (a[ja] < a[ia]));
                const std::size_t rb = (jb < hi) & ((ib >= mid) | (b[jb] < b[ib]));
                const std::size_t ma = ~ra + 1, mb = ~rb + 1;  // all ones when taken from the right
                ta[o] = a[ia ^ ((ia ^ ja) & ma)];
                tb[o] = b[ib ^ ((ib ^ jb) & mb)];
                ca += (mid - ia) & ma;
                cb += (mid - ib) & mb;
                ia += 1 - ra;
                ja += ra;
                ib += 1 - rb;
                jb += rb;
            }
        }
        a.swap(ta);
        b.swap(tb);
    }
    return {ca, cb};
}

/// Calls f(earlier point, later point) for the inversions at the sorted
/// indices `targets` (< the count) of the order an unweighted walk meets them
/// in: walk(items, g) calls g(items so far, lo, hi, later item) with the range
/// [lo, hi) of earlier items `later` is inverted with (the insertion and the
/// radix-split walks; inversions_at below is the merge's, with weights).
template <class Walk, class F>
void unweighted_inversions_at(const Walk& walk, std::vector<merge_item> items,
                              const std::vector<std::uint64_t>& targets, const F& f) {
    std::uint64_t before = 0;  // inversions met before the current range
    std::size_t next = 0;
    walk(std::move(items), [&](const std::vector<merge_item>& cur, std::size_t lo, std::size_t hi,
                               const merge_item& later) {
        const std::uint64_t range = hi - lo;
        for (; next < targets.size() && targets[next] - before < range; ++next)
            f(cur[lo + static_cast<std::size_t>(targets[next] - before)].point, later.point);
        before += range;
    });
}

/// Calls f(earlier point, later point) for the inversions at the sorted
/// indices `targets` (< the weighted count; an index counts each copy of a
/// weighted pair) of the order for_each_inversion_range meets them in.
template <class F>
void inversions_at(std::vector<merge_item> items, const std::vector<std::uint64_t>* w,
                   const std::vector<std::uint64_t>& targets, const F& f) {
    std::uint64_t before = 0;  // inversions met before the current range
    std::size_t next = 0;
    for_each_inversion_range(std::move(items), w,
                             [&](const std::vector<merge_item>& cur, std::size_t i, std::size_t mid,
                                 const merge_item& later, const std::vector<std::uint64_t>& pw) {
                                 const std::uint64_t wl = pw.empty() ? 1 : (*w)[later.point];
                                 const std::uint64_t range = pw.empty() ? mid - i : wl * (pw[mid] - pw[i]);
                                 for (; next < targets.size() && targets[next] - before < range; ++next) {
                                     const std::uint64_t off = (targets[next] - before) / wl;
                                     const std::size_t k =
                                         pw.empty() ? i + static_cast<std::size_t>(off)
                                                    : static_cast<std::size_t>(
                                                          std::upper_bound(pw.begin() + static_cast<std::ptrdiff_t>(i),
                                                                           pw.begin() + static_cast<std::ptrdiff_t>(mid),
                                                                           pw[i] + off) -
                                                          pw.begin()) - 1;
                                     f(cur[k].point, later.point);
                                 }
                                 before += range;
                             });
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
