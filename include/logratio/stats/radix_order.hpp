#pragma once
// The order of n doubles (finite) by value, ties by index: an LSD radix sort
// of their bits, 11 bits a pass, passes whose digit is the same for every
// value skipped. The slope selection (slope_selection.hpp) sorts the points
// by their rounded keys several times per search; a comparison sort of
// (double, index) pairs was a quarter of its time at n = 10^5 (perf), the
// radix passes over 12-byte records are a few times cheaper. Small inputs
// take std::sort (a radix pass's 2048 counters would dominate).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// A double's bits as an unsigned integer of the same order (-0 before +0:
/// the callers only need some order of equal values, their ties are
/// re-sorted exactly).
inline std::uint64_t ordered_bits(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return (b >> 63) ? ~b : b | (std::uint64_t(1) << 63);
}

/// Reused buffers of radix_order (one per thread: no allocation per call once warm).
struct radix_buffers {
    struct item {
        std::uint64_t key;
        std::uint32_t index;
    };
    std::vector<item> a, b;
};

/// order[i] = the index of the i-th smallest of v[0..n) (ties: smaller
/// index first, as a sort of (value, index) pairs gives).
inline void radix_order(const double* v, std::size_t n, std::vector<std::uint32_t>& order) {
    order.resize(n);
    if (n < 512) {
        for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
        std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
            return v[x] < v[y] || (!(v[y] < v[x]) && x < y);
        });
        return;
    }
    thread_local radix_buffers buf;
    auto& a = buf.a;
    auto& b = buf.b;
    a.resize(n);
    b.resize(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = {ordered_bits(v[i]), static_cast<std::uint32_t>(i)};
    constexpr int bits = 11, passes = 6;  // 66 >= 64 bits
    constexpr std::size_t buckets = std::size_t(1) << bits;
    std::vector<std::uint32_t> count(buckets * passes, 0);
    for (std::size_t i = 0; i < n; ++i)
        for (int p = 0; p < passes; ++p) ++count[p * buckets + ((a[i].key >> (p * bits)) & (buckets - 1))];
    for (int p = 0; p < passes; ++p) {
        std::uint32_t* c = &count[p * buckets];
        const std::uint64_t digit0 = (a[0].key >> (p * bits)) & (buckets - 1);
        if (c[digit0] == n) continue;  // every value has this digit: the pass keeps the order
        std::uint32_t sum = 0;
        for (std::size_t k = 0; k < buckets; ++k) {
            const std::uint32_t here = c[k];
            c[k] = sum;
            sum += here;
        }
        for (std::size_t i = 0; i < n; ++i) b[c[(a[i].key >> (p * bits)) & (buckets - 1)]++] = a[i];
        a.swap(b);
    }
    for (std::size_t i = 0; i < n; ++i) order[i] = a[i].index;
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
