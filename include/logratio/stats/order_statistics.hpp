#pragma once
// Several order statistics of one array at once (a multiselect): the
// middle rank first, then each side within its part. Used for the listed
// slopes of short runs (regression.hpp) and for the sample brackets of the
// slope selection's clusters (slope_selection_impl.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// Places the order statistics of ranks r[0..nr) (sorted, distinct, in
/// [first, last)) of v[first, last), whose values are all those ranks': the
/// middle rank first, then each side within its part (a rank at an end of
/// its part by a min or max scan: the median's two halves).
inline void select_ranks_within(std::vector<double>& v, std::size_t first, std::size_t last, const std::uint64_t* r,
                                std::size_t nr) {
    if (nr == 0) return;
    const std::size_t mid = nr / 2, k = static_cast<std::size_t>(r[mid]);
    const auto b = v.begin();
    const auto at = b + static_cast<std::ptrdiff_t>(k);
    if (k == first)
        std::iter_swap(at, std::min_element(at, b + static_cast<std::ptrdiff_t>(last)));
    else if (k + 1 == last)
        std::iter_swap(at, std::max_element(b + static_cast<std::ptrdiff_t>(first), b + static_cast<std::ptrdiff_t>(last)));
    else
        std::nth_element(b + static_cast<std::ptrdiff_t>(first), at, b + static_cast<std::ptrdiff_t>(last));
    select_ranks_within(v, first, k, r, mid);
    select_ranks_within(v, k + 1, last, r + mid + 1, nr - mid - 1);
}

/// Puts the k-th smallest value of `v` at v[k] for every k in `ranks`
/// (indices >= v.size() are ignored), as a sort would.
inline void select_order_statistics(std::vector<double>& v, std::vector<std::uint64_t> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    while (!ranks.empty() && ranks.back() >= v.size()) ranks.pop_back();
    select_ranks_within(v, 0, v.size(), ranks.data(), ranks.size());
}
}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
