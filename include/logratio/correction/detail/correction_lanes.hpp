#pragma once
// Lane helpers of the correction kernel: the output buffers, stores of a
// batch's lanes as weights or 0/1 mask bytes, lane counters, and lanes per
// rejection statistic.
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../stats/registry.hpp"
#include "../../detail/batches.hpp"
#include "../../detail/simd.hpp"
#include "../../detail/widen.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// Output buffers of the correction (either may be null: not written).
/// Both have view.size() entries in the view's layout.
template <class W>
struct correction_outputs {
    W* weights = nullptr;
    std::uint8_t* mask = nullptr;
};

/// Stores lanes [0, n) of a batch into dst, converting to W (a full batch
/// with one vector store on AVX2/AVX-512).
template <class V, class W>
LOGRATIO_ALWAYS_INLINE inline void store_lanes(const V& x, W* dst, std::size_t n) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        (void)n;
        *dst = static_cast<W>(x);
    } else {
#if LOGRATIO_X86
        if constexpr ((is_avx512<typename V::arch_type> || is_avx2<typename V::arch_type>) &&
                      (std::is_same<W, float>::value || std::is_same<W, double>::value)) {
            if (n == ops::size) return store_narrow<typename V::arch_type>(dst, x);
        }
#endif
        alignas(64) double t[ops::size];
        x.store_aligned(t);
        for (std::size_t k = 0; k < n; ++k) dst[k] = static_cast<W>(t[k]);
    }
}

/// Stores lanes [0, n) of a mask as bytes 0/1.
template <class V>
LOGRATIO_ALWAYS_INLINE inline void store_mask_lanes(const typename simd_ops<V>::mask& m, std::uint8_t* dst,
                                                    std::size_t n) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        (void)n;
        *dst = m ? 1 : 0;
    } else {
#if LOGRATIO_X86
        if constexpr (is_avx512<typename V::arch_type> || is_avx2<typename V::arch_type>) {
            if (n == ops::size) return store_mask_bytes<typename V::arch_type>(dst, m);
        }
#endif
        store_lanes<V, std::uint8_t>(ops::select(m, ops::splat(1.0), ops::splat(0.0)), dst, n);
    }
}

/// Lane counters: a mask's true lanes added as 1.0 per lane (exact below
/// 2^53 per lane), summed once at the end -- cheaper than a popcount per
/// mask on the vector-heavy phase 2.
template <class V>
LOGRATIO_ALWAYS_INLINE inline void tally(V& c, const typename simd_ops<V>::mask& m) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        c += m ? 1.0 : 0.0;
    } else {
#if LOGRATIO_X86
        if constexpr (is_avx512<typename V::arch_type>) {
            c = V(_mm512_mask_add_pd(c, m, c, _mm512_set1_pd(1.0)));
            return;
        }
#endif
        c = c + ops::select(m, ops::splat(1.0), ops::splat(0.0));
    }
}
template <class V>
inline std::uint64_t tally_total(const V& c) noexcept {
    return static_cast<std::uint64_t>(simd_ops<V>::sum(c));
}

/// Lanes per rejection statistic, indexed by its id (stats/registry.hpp).
/// Filled without a loop, and indexed only by constants in the kernel
/// (for_each_rs_stat): a sequence's lanes then stay in registers.
template <class V>
using stat_lanes = std::array<V, rs_stat_count>;

template <class V, std::size_t... J>
stat_lanes<V> splat_stat_lanes(double x, std::index_sequence<J...>) noexcept {
    return {{((void)J, simd_ops<V>::splat(x))...}};
}
template <class V>
stat_lanes<V> splat_stat_lanes(double x) noexcept {
    return splat_stat_lanes<V>(x, std::make_index_sequence<rs_stat_count>{});
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
