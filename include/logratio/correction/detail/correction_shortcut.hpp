#pragma once
// The correction kernel's short cut for token-level modes: every token
// statistic is monotone in delta on each side of 0, so all thresholds
// together keep delta inside one interval [A, B] (inside_interval, narrowed
// by a margin: correction_plan.hpp). A batch whose deltas all lie inside needs no clamp, no
// threshold count and no rejection -- its terms are the same numbers the
// full step (correction_kernel.hpp) would add -- and runs a step of half the
// operations (inside_batch; inside_run reads whole batches straight from
// memory on AVX2/AVX-512).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "../correction_options.hpp"
#include "../../core/view.hpp"
#include "correction_lanes.hpp"
#include "correction_plan.hpp"
#include "../../detail/batches.hpp"
#include "../../detail/token_terms.hpp"
#include "../../detail/simd.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// Do all lanes of d lie inside [lo, hi]? (NaN lanes do not.)
template <class V>
LOGRATIO_ALWAYS_INLINE inline bool all_inside(const V& d, const V& lo, const V& hi) noexcept {
    return simd_ops<V>::all((d >= lo) & (d <= hi));
}

/// The short cut's sums over one sequence (merged into the full step's
/// accumulators after the sequence, where the sums it leaves out are
/// derived: with IS, sum em = sum (w - 1) = c, sum t = c + n, chi2 terms
/// (w - 1)^2 + 2 (w - 1), the kept count n, and the extremes of t those of
/// w = 1 + expm1(delta), monotone in delta). Per rejection statistic (by
/// id): the sum of x (own lanes only: rs_stats::lanes), its minimum (not for
/// x = -dc) and the sum of x^2.
template <class V>
struct inside_sums {
    using ops = simd_ops<V>;
    static constexpr double inf = std::numeric_limits<double>::infinity();
    std::uint64_t n = 0;
    V top = ops::splat(-inf), t = ops::splat(0.0), r = ops::splat(0.0), d = ops::splat(0.0), k3 = ops::splat(0.0);
    V chi2 = ops::splat(0.0), dmin = ops::splat(inf), dmax = ops::splat(-inf);
    stat_lanes<V> x = splat_stat_lanes<V>(0.0), min = splat_stat_lanes<V>(inf), sq = splat_stat_lanes<V>(0.0);
    V c = ops::splat(0.0), c2 = ops::splat(0.0);
};

/// One token rejection statistic S (id J) in the short cut's step: dc =
/// delta inside the interval, so x is never clamped; Own = false compiles
/// out the statistics with their own lanes (their sums need registers).
template <bool Own, class V, std::size_t J, class S>
LOGRATIO_ALWAYS_INLINE inline void inside_stat(inside_sums<V>& s, rs_index<J>, S, const V& d, const V& em,
                                               const typename simd_ops<V>::mask& on, const inside_plan& p) noexcept {
    using ops = simd_ops<V>;
    constexpr rs_stats::lanes from = S::sums;
    if constexpr (from == rs_stats::lanes::own && !Own) return;
    if (!p.stat[J]) return;
    const V x = S::value(d, em);
    if constexpr (from == rs_stats::lanes::own) s.x[J] = s.x[J] + x;
    if constexpr (from == rs_stats::lanes::minus_dc) {
        s.sq[J] = ops::mul_add(d, d, s.sq[J]);  // x^2 = delta^2
    } else {
        s.min[J] = ops::min_where(s.min[J], on, x);
        s.sq[J] = ops::mul_add(x, x, s.sq[J]);
    }
}

/// The short cut's step for one batch whose deltas all lie inside the
/// interval (so dc = delta, no threshold acts and keep = on): the terms the
/// full step adds (or what they are derived from), the weights (t = w = rho
/// on masked-in lanes, 0 elsewhere) and the mask (= on).
template <class V, class W, bool Own = true>
LOGRATIO_ALWAYS_INLINE inline void inside_batch(inside_sums<V>& s, const V& t, const V& r, const V& d,
                                                const typename simd_ops<V>::mask& on, const inside_plan& p,
                                                W* wdst, std::uint8_t* mdst, std::size_t lanes) noexcept {
    using ops = simd_ops<V>;
    const V zero = ops::splat(0.0), one = ops::splat(1.0);
    s.top = ops::max(s.top, ops::max(t, r));
    s.n += ops::count(on);
    s.t = s.t + t;
    s.r = s.r + r;
    s.d = s.d + d;
    // without the exp reduction when every lane's |delta| is small (the
    // same bits: simd.hpp, expm1_small_bound)
    const V em = ratio_minus_one(d, needs_reduction(ops::abs(d)));
    const V k3 = k3_term(em, d);  // >= 0 (em >= d for the kernel's expm1): the full step's max(k3, 0) is a no-op
    s.k3 = s.k3 + k3;
    s.dmin = ops::min_where(s.dmin, on, d);
    s.dmax = ops::max_where(s.dmax, on, d);
    for_each_rs_stat([&](auto j, auto st) LOGRATIO_ALWAYS_INLINE { inside_stat<Own>(s, j, st, d, em, on, p); });
    if (p.is) {  // token level: t = w
        const V w = em + one;
        const V wc = w - one;
        s.c = s.c + wc;
        s.c2 = ops::mul_add(wc, wc, s.c2);
        if (wdst) store_lanes<V, W>(ops::select(on, w, zero), wdst, lanes);
    } else {
        s.chi2 = ops::mul_add(em, em + V(2.0), s.chi2);
    }
    if (mdst) store_mask_lanes<V>(on, mdst, lanes);
}

#if LOGRATIO_X86
/// The short cut over the whole batches [i, end) of a view read directly
/// from memory (AVX2/AVX-512), as long as they lie inside: returns where it
/// stopped (end, or the first batch with a delta outside). Its own function
/// so that its sums stay in registers.
template <class V, class W, bool Own, class T, class M>
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
std::uint64_t inside_run(const paired_view<T, M>& v, std::uint64_t i, std::uint64_t end, W* wout,
                         std::uint8_t* mout, const inside_plan& p, inside_sums<V>& sums) noexcept {
    using ops = simd_ops<V>;
    using A = typename V::arch_type;
    constexpr std::size_t L = ops::size;
    const T* tp = v.train();
    const T* rp = v.rollout();
    const M* mp = v.mask();
    const V zero = ops::splat(0.0), lo = ops::splat(p.lo), hi = ops::splat(p.hi);
    const auto all_on = ops::splat(1.0) != zero;
    inside_sums<V> s = sums;
    auto load = [&](std::uint64_t k, V& t, V& r, V& d) LOGRATIO_ALWAYS_INLINE {
        const auto on = mp ? widen_mask<A>(mp + k) : all_on;
        t = ops::select(on, widen<A>(tp + k), zero);
        r = ops::select(on, widen<A>(rp + k), zero);
        d = t - r;
        return on;
    };
    auto step = [&](std::uint64_t k, const V& t, const V& r, const V& d, const typename ops::mask& on)
                    LOGRATIO_ALWAYS_INLINE {
        inside_batch<V, W, Own>(s, t, r, d, on, p, wout ? wout + k : nullptr, mout ? mout + k : nullptr, L);
    };
    for (const std::uint64_t i0 = i; i < end; i += L) {
        prefetch_ahead(tp, rp, mp, i, i0);
        V t, r, d;
        const auto on = load(i, t, r, d);
        if (!all_inside(d, lo, hi)) break;
        step(i, t, r, d, on);
    }
    sums = s;
    return i;
}
#endif

}  // namespace detail
LOGRATIO_NAMESPACE_END
