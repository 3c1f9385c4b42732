#pragma once
// The one-pass panel kernel. Written once against simd_ops<V> and
// instantiated for V = xsimd::batch<double, Arch> (the SIMD path) and for
// V = double (the scalar reference path the SIMD path is tested against).
//
// Batches come from detail/batches.hpp (for_each_batch: widened straight
// from memory, or staged); each is validated, masked and reduced with double
// lanes. Per masked-in token the summed terms are (detail/token_terms.hpp
// defines delta, dc, e and e - dc, with their error analysis)
//
//   [masked in], l_T, l_E, delta, |delta|, (delta - K)^2,
//   e = expm1(dc), (e - K_e)^2, e - dc, e dc, |e|, [|delta| > thr_k]
//
// (counts by popcount of the lane masks) plus min/max of delta, and the
// per-sequence sums. K is the first masked-in delta of the range (a shift
// that keeps the variance free of cancellation), K_e = expm1(clamp(K)). A
// batch whose |delta| are all at most expm1_small_bound takes expm1 without
// the exp reduction (k = 0 there: the same bits) and without the clamp; on
// AVX-512 the masked terms are single zero-masked instructions. The terms
// are those of the scalar path either way. The formulas that turn the sums
// into SPEC's values: ../panel_accumulator.hpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../../detail/batches.hpp"
#include "../../detail/token_terms.hpp"
#include "../panel_accumulator.hpp"
#include "panel_f32.hpp"
#include "panel_lanes.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The first masked-in finite delta of tokens [b, e) into K; false if none.
template <class T, class M>
bool first_finite_delta(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, double& K) {
    for (std::uint64_t k = b; k < e; ++k) {
        const double dk = to_double(v.train()[k]) - to_double(v.rollout()[k]);
        if (v.counts(k) && std::isfinite(dk)) {
            K = dk;
            return true;
        }
    }
    return false;
}

/// The lane sums of a range reduced into acc (acc.tokens > 0): moments of
/// delta and rho - 1 about the shifts K and K_e, extremes, divergence sums.
template <class V>
void reduce_panel_lanes(panel_accumulator& acc, const panel_lanes<V>& s, double tot_d, double K, double Ke) {
    using ops = simd_ops<V>;
    const std::uint64_t N = acc.tokens;
    const double n = static_cast<double>(N);
    acc.delta.n = N;
    acc.delta.mean = tot_d / n;
    const double dk1 = tot_d - n * K;  // sum(delta - K)
    acc.delta.m2 = std::max(ops::sum(s.dk2) - dk1 * dk1 / n, 0.0);
    acc.delta.min = ops::hmin(s.dmin);
    acc.delta.max = ops::hmax(s.dmax);
    const double se = ops::sum(s.e);
    const double ek1 = se - n * Ke;  // sum(e - K_e)
    acc.ratio_m1.n = N;
    acc.ratio_m1.mean = se / n;
    acc.ratio_m1.m2 = std::max(ops::sum(s.ek2) - ek1 * ek1 / n, 0.0);
    // rho is monotone in delta: its extremes are those of delta, clamped.
    acc.ratio_m1.min = std::expm1(clamp_delta(acc.delta.min));
    acc.ratio_m1.max = std::expm1(clamp_delta(acc.delta.max));
    acc.sum_abs_delta = ops::sum(s.abs);
    acc.sum_k3 = ops::sum(s.k3);
    // sum dc = sum e - sum (e - dc): its rounding error, ~u sum |e|, is of
    // the order of the direct sum's of (1 + e) dc (terms ~ delta either way)
    acc.sum_reverse = (se - acc.sum_k3) + ops::sum(s.rev);
    acc.sum_tv = ops::sum(s.tv);
}

/// Where in sequence s the first masked-in token with |delta| == abs_max
/// is (same conversion and subtraction as the kernel, so equality is
/// exact; NaN -- omitted tokens -- never equals).
template <class T, class M>
void locate_abs_max(const paired_view<T, M>& v, std::uint64_t s, double abs_max, panel_accumulator& acc) {
    const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
    for (std::uint64_t i = b; i < e; ++i) {
        if (!v.counts(i)) continue;
        const double d = to_double(v.train()[i]) - to_double(v.rollout()[i]);
        if (std::fabs(d) == abs_max) {
            acc.abs_max_at = token_location{s, i - b};
            return;
        }
    }
}

/// What the panel kernel hands each batch's delta to besides its own sums:
/// nothing (this hook), or the exact-quantile collector of
/// panel/panel_quantiles.hpp. for_blocks(b, e, f) runs f over [b, e) in
/// pieces, so a hook can do its bookkeeping between pieces, outside the
/// vector loop (a call inside it would spill the accumulators).
struct no_quantile_hook {
    static constexpr bool active = false;
    template <class V>
    void add(const V&, const V&) noexcept {}
    template <class F>
    LOGRATIO_ALWAYS_INLINE void for_blocks(std::uint64_t b, std::uint64_t e, F&& f) {
        f(b, e);
    }
    /// Tokens [b, e) (one sequence) were summed: a hook may read them again while they are in L1.
    void after_sequence(std::uint64_t, std::uint64_t) noexcept {}
};

/// The panel over sequences [s0, s1) of v, with lanes V. NT is the number
/// of |delta| thresholds when known at compile time (the default 4: the
/// counters stay in registers), -1 for any number. Every batch's delta and
/// |delta| (0 on masked-out lanes) also go to `hook`.
template <class V, int NT, class T, class M, class Q = no_quantile_hook>
panel_accumulator accumulate_range_impl(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1,
                                        const panel_options& o, Q&& hook = Q{}) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    constexpr std::size_t L = ops::size;
    static_assert(chunk_tokens % L == 0, "chunk must hold whole batches");
    panel_accumulator acc(o);
    const std::uint32_t nthr = NT >= 0 ? static_cast<std::uint32_t>(NT) : acc.num_thresholds;
    chunk_buffers buf;
    const V zero = ops::splat(0.0);
    const V pinf = ops::splat(std::numeric_limits<double>::infinity());
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    V thr[panel_options::max_thresholds];
    std::uint64_t above[panel_options::max_thresholds] = {};
    for (std::uint32_t k = 0; k < panel_options::max_thresholds; ++k)
        thr[k] = ops::splat(k < nthr ? acc.thresholds[k] : 0.0);
    const bool omit = o.nonfinite == nonfinite_policy::omit;
    std::uint64_t n_omit = 0;
    bool have_shift = false;
    double K = 0.0, Ke = 0.0;
    V vK = zero, vKe = zero;

    panel_lanes<V> S;
    double tot_d = 0.0;
#if LOGRATIO_PANEL_F32
    const f32_thresholds f32(acc.thresholds.data(), nthr);  // the float32 loop's (panel_f32.hpp), where it runs
#endif

    double best = -1.0;
    std::uint64_t best_seq = 0;

    for (std::uint64_t s = s0; s < s1; ++s) {
        const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
        std::uint64_t row_n = 0;
        V row_d = zero, row_t = zero, row_r = zero, row_min = pinf, row_max = ninf, row_top = ninf;
        // One batch of L tokens: the per-token terms of the header comment.
        auto step = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            if (omit) {  // leave out NaN/Inf (x - x == 0 fails for them), count them
                const auto finite = ((t0 - t0) == zero) & ((r0 - r0) == zero);
                n_omit += ops::count(on & !finite);
                on = on & finite;
            }
            const V t = ops::select(on, t0, zero);
            const V r = ops::select(on, r0, zero);
            // Validation without per-lane tests: a NaN/Inf makes the row
            // sums non-finite, a positive log-prob raises row_top.
            row_top = ops::max(row_top, ops::max(t, r));
            const V d = token_delta(t, r);  // 0 on masked-out lanes
            const V ad = ops::abs(d);
            row_n += ops::count(on);
            row_d = row_d + d;
            row_t = row_t + t;
            row_r = row_r + r;
            S.abs = S.abs + ad;
            const V dk = ops::sub_where(on, d, vK);
            S.dk2 = ops::mul_add(dk, dk, S.dk2);
            row_min = ops::min_where(row_min, on, d);  // the row's max |delta| too
            row_max = ops::max_where(row_max, on, d);
            // rho - 1 (0 on masked-out lanes): without the exp reduction when
            // every lane's |delta| is small (the same bits; most batches)
            const bool reduce = needs_reduction(ad);
            V dc = d;
            if (reduce) dc = clamped_delta(d);
            const V em = ratio_minus_one(dc, reduce);
            S.e = S.e + em;
            const V ek = ops::sub_where(on, em, vKe);
            S.ek2 = ops::mul_add(ek, ek, S.ek2);
            S.k3 = S.k3 + k3_term(em, dc);
            S.rev = ops::mul_add(em, dc, S.rev);  // sum (1 + e) dc = sum e dc + sum dc
            S.tv = S.tv + ops::abs(em);
            for (std::uint32_t k = 0; k < nthr; ++k) above[k] += ops::count(ad > thr[k]);
            if constexpr (std::decay_t<Q>::active) hook.template add<V>(d, ad);
        };
        if (!have_shift && first_finite_delta(v, b, e, K)) {
            // No token has contributed yet, so the shift can still be chosen.
            have_shift = true;
            Ke = std::expm1(clamp_delta(K));
            vK = ops::splat(K);
            vKe = ops::splat(Ke);
        }
#if LOGRATIO_PANEL_F32
        if constexpr (panel_f32_path<V, T, M> && !std::decay_t<Q>::active)
            f32_sequence<V, NT>(v, b, e, f32, S, vK, vKe, nthr, above, step, row_n, row_d, row_t, row_r, row_min,
                                row_max, row_top);
        else
#endif
            hook.for_blocks(b, e, [&](std::uint64_t bb, std::uint64_t ee)
                                LOGRATIO_ALWAYS_INLINE { for_each_batch<V>(v, bb, ee, buf, step); });
        hook.after_sequence(b, e);
        const double st = ops::sum(row_t), sr = ops::sum(row_r);
        guard_sequence(v, s, st, sr, row_top, o.nonfinite, o.positive_tolerance);
        if (row_n == 0) continue;
        const double rn = static_cast<double>(row_n);
        acc.tokens += row_n;
        const double sd = ops::sum(row_d);
        tot_d += sd;
        acc.sum_train += st;
        acc.sum_rollout += sr;
        acc.seq_log.add(sd);
        acc.seq_geo.add(sd / rn);
        acc.sum_train_ppl += std::exp(-st / rn);
        acc.sum_rollout_ppl += std::exp(-sr / rn);
        S.dmin = ops::min(S.dmin, row_min);
        S.dmax = ops::max(S.dmax, row_max);
        const double ra = std::max(-ops::hmin(row_min), ops::hmax(row_max));
        if (ra > best) {
            best = ra;
            best_seq = s;
        }
    }

    // Reduce the lanes into the accumulator of this range.
    acc.nonfinite_tokens = n_omit;
    if (acc.tokens == 0) return acc;
    reduce_panel_lanes(acc, S, tot_d, K, Ke);
    for (std::uint32_t k = 0; k < nthr; ++k) acc.above[k] = above[k];
    acc.abs_max = best;
    locate_abs_max(v, best_seq, best, acc);
    return acc;
}

template <class V, class T, class M, class Q = no_quantile_hook>
panel_accumulator accumulate_range(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1,
                                   const panel_options& o, Q&& hook = Q{}) {
    if (o.abs_delta_thresholds.size() == 4) return accumulate_range_impl<V, 4>(v, s0, s1, o, hook);
    return accumulate_range_impl<V, -1>(v, s0, s1, o, hook);
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
