#pragma once
// The inversions of a key sequence with few of them, counted and visited by
// an insertion sort in O(n + inversions): the narrow bands of the slope
// selection (slope_selection.hpp). A band narrowed to about the listing
// limit (16n pairs) has a few inversions an item -- 5 at n = 10^5 --, where
// a merge sort or a radix split still pays its log2(n) passes over the n
// items. Inserting item j shifts exactly the earlier items with a larger key,
// which at that moment are one contiguous range of the sorted prefix: the
// same (range, later item) events the merge meets (inversion_merge.hpp).
// Equal keys are no inversion (the insertion stops at them). The bands are
// those of the randomized slope selection of Matousek (1991) in the form of
// Dillencourt, Mount & Netanyahu (1992), whose counts are Knight's (1966)
// merge-sort inversion count; the cost O(n + inversions) of counting them by
// insertion is the classic one (Knuth, TAOCP vol. 3, 5.2.1).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "../core/version.hpp"
#include "inversion_merge.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// The inversions of a, or none once they pass `budget` (the caller then
/// counts another way; the work spent is O(n + budget)).
inline std::optional<std::uint64_t> inversions_by_insertion(const std::vector<std::uint32_t>& a,
                                                            std::uint64_t budget) {
    thread_local std::vector<std::uint32_t> s;  // reused per thread
    s.assign(a.begin(), a.end());
    std::uint64_t total = 0;
    for (std::size_t j = 1; j < s.size(); ++j) {
        const std::uint32_t v = s[j];
        std::size_t p = j;
        for (; p > 0 && s[p - 1] > v; --p) s[p] = s[p - 1];
        s[p] = v;
        total += j - p;
        if (total > budget) return std::nullopt;
    }
    return total;
}

/// Calls f(cur, lo, hi, later) for each item `later` with inversions: they
/// are cur[lo..hi), the earlier items with larger keys (cur: the sorted
/// prefix at that moment; f must not keep references into it). Each
/// inversion is met once.
template <class F>
void for_each_inversion_by_insertion(std::vector<merge_item> items, const F& f) {
    for (std::size_t j = 1; j < items.size(); ++j) {
        const merge_item v = items[j];
        std::size_t p = j;
        while (p > 0 && items[p - 1].key > v.key) --p;
        if (p == j) continue;
        f(items, p, j, v);
        std::memmove(&items[p + 1], &items[p], (j - p) * sizeof(merge_item));
        items[p] = v;
    }
}

/// Calls f(earlier point, later point) for the inversions at the sorted
/// indices `targets` (< the count) of the order for_each_inversion_by_insertion
/// meets them in.
template <class F>
void inversions_by_insertion_at(std::vector<merge_item> items, const std::vector<std::uint64_t>& targets, const F& f) {
    unweighted_inversions_at(
        [](std::vector<merge_item> it, const auto& g) { for_each_inversion_by_insertion(std::move(it), g); },
        std::move(items), targets, f);
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
