#pragma once
// Several order statistics of one array at once (a multiselect): the
// middle rank first, then each side within its part. Used for the listed
// slopes of short runs (regression.hpp) and for the sample brackets of the
// slope selection's clusters (slope_selection_impl.hpp); and one order
// statistic by a radix select (the slope selection's listed bands).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../core/version.hpp"
#include "radix_order.hpp"

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

inline double kth_smallest_of_keys(std::vector<std::uint64_t>& keys, std::size_t m, std::uint64_t lo, std::uint64_t hi,
                                   std::size_t k);

/// The k-th smallest (0-based, k < v.size()) of v, no NaN and no zero in v
/// (there -0 and +0 would be told apart, a sort does not): the value
/// std::nth_element puts at v[k], by a radix select of the order-keeping
/// bits (radix_order.hpp), 11 bits a pass from the highest bit where the
/// candidates differ, each pass keeping those of the bucket holding rank k.
/// A pass is a histogram and a compaction, branch-predictable (few are
/// kept): ~3.5x faster than nth_element's partitions on 5·10^5 slopes.
inline double kth_smallest(const std::vector<double>& v, std::size_t k) {
    // (not kept per thread: a listed band may be up to 128n slopes)
    std::vector<std::uint64_t> keys(v.size());
    std::uint64_t lo = ~std::uint64_t(0), hi = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        keys[i] = ordered_bits(v[i]);
        lo = std::min(lo, keys[i]);
        hi = std::max(hi, keys[i]);
    }
    return kth_smallest_of_keys(keys, v.size(), lo, hi, k);
}

/// Sets v[k] to the k-th smallest of v for each k in `ranks` (< v.size()),
/// v without NaN and zeros (kth_smallest's condition): the values a sort
/// puts there, each by a radix select from one key array. v's other
/// positions then hold some of its values, no longer all of them: for
/// callers that read only those ranks (the sample brackets,
/// slope_selection_impl.hpp; ~3x faster than select_order_statistics'
/// partitions on their 10^5-4·10^5 sample slopes).
inline void set_order_statistics(std::vector<double>& v, const std::vector<std::uint64_t>& ranks) {
    if (v.empty() || ranks.empty()) return;
    thread_local std::vector<std::uint64_t> base, keys;  // reused per thread: 16 bytes a sample slope (4n at most)
    base.resize(v.size());
    std::uint64_t lo = ~std::uint64_t(0), hi = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        base[i] = ordered_bits(v[i]);
        lo = std::min(lo, base[i]);
        hi = std::max(hi, base[i]);
    }
    std::vector<double> at;
    for (const std::uint64_t r : ranks) {
        keys.assign(base.begin(), base.end());
        at.push_back(kth_smallest_of_keys(keys, v.size(), lo, hi, static_cast<std::size_t>(r)));
    }
    for (std::size_t q = 0; q < ranks.size(); ++q) v[static_cast<std::size_t>(ranks[q])] = at[q];
}

/// kth_smallest on keys[0..m) (ordered_bits, destroyed), lo and hi their least and largest.
inline double kth_smallest_of_keys(std::vector<std::uint64_t>& keys, std::size_t m, std::uint64_t lo, std::uint64_t hi,
                                   std::size_t k) {
    constexpr int bits = 11;
    constexpr std::uint64_t digits = std::uint64_t(1) << bits;
    std::vector<std::uint32_t> count(digits);
    // the candidates share every bit above the highest where lo and hi differ
    while (lo != hi) {
        const int shift = std::max(0, 63 - __builtin_clzll(lo ^ hi) - (bits - 1));
        std::fill(count.begin(), count.end(), 0u);
        for (std::size_t i = 0; i < m; ++i) ++count[(keys[i] >> shift) & (digits - 1)];
        std::uint64_t b = 0;
        for (; k >= count[b]; ++b) k -= count[b];
        std::size_t kept = 0;
        lo = ~std::uint64_t(0);
        hi = 0;
        for (std::size_t i = 0; i < m; ++i) {
            const std::uint64_t key = keys[i];
            if (((key >> shift) & (digits - 1)) != b) continue;
            keys[kept++] = key;
            lo = std::min(lo, key);
            hi = std::max(hi, key);
        }
        m = kept;
    }
    const std::uint64_t bitsv = (lo >> 63) ? lo & ~(std::uint64_t(1) << 63) : ~lo;
    double out;
    std::memcpy(&out, &bitsv, sizeof out);
    return out;
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
