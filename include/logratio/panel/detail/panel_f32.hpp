#pragma once
// The panel's float32-lane hot loop (AVX-512 BW/VL; float32, bfloat16 and
// float16 inputs): 16 tokens per vector instead of the float64 kernel's 8,
// for every token whose delta is exact in float32 and small; the other
// tokens ("repair lanes") go, 8 at a time, through the float64 step of
// panel_kernel.hpp from their two float32 inputs. Both feed the same
// float64 lane sums (panel_lanes), so reduce_panel_lanes and finish() are
// those of the float64 kernel. The per-token terms and their error bounds
// are ../../detail/token_terms_f32.hpp's (the float32 sibling of
// token_terms.hpp).
//
// Which tokens take the float32 lanes. A masked-in token whose
//   (a) d = fl32(l_T - l_E) is exact (exact_delta_lanes: both back-
//       differences reproduce the inputs; NaN/Inf fail), and
//   (b) |d| <= f32_small_delta (0.5): k3 needs no exp reduction and no
//       clamp (|delta| < 20).
// Every value the float32 lanes see is then exactly the float64 kernel's
// delta (widening a float32 is exact), so delta's sum, extremes, threshold
// counts and location are exact inputs; only the divergence terms below
// are float32 arithmetic. A token failing (a) or (b) -- inexact, large,
// NaN/Inf, which the float64 step also validates and omits -- is
// compressed into a pending buffer (only in a batch that has one) and run
// through the float64 step when 8 are pending and at each sequence's end.
// On the benchmarks' data (train = rollout + N(0, 0.02)) 9% of 16-token
// batches hold one such token, ~0.8% of tokens.
//
// What is accumulated in what precision (u = 2^-24, float32's unit roundoff;
// the float64 roundings, ~1e-16, are those of the float64 kernel), per
// float32 token with d exact and |d| <= 1/2:
//   in float64 lanes, from the exact d and l_E widened to double:
//     sum d, sum l_E (sum l_T = sum l_E + sum d: exact identity for exact d),
//     sum (d - K)^2 (exact products: 24-bit significands),
//     sum (e - K_e) and sum (e - K_e)^2 with e - K_e = (d - K_e) + k3, k3 in
//       double from the float32 tail q (shifted_ratio_minus_one: error
//       <= (|d| u + 2^-50) k3) -- sum e cancels where E[e] ~ 0, and chi2 =
//       2E[e] + E[e^2] can be 50x smaller than E[k3] (a 4u float32 k3
//       measured 1.04e-6 relative error of chi2 on the SIMD tests' data);
//     and, once per sequence (fold_f32_sums), sum k3 = sum (e - K_e) -
//       (sum d - n K_e) and sum d^2 = sum (d - K)^2 + K (2 sum d - n K):
//       two vectors fewer in the loop, bounds there;
//   in float32, flushed into the float64 lanes every f32_flush_batches
//   (8) batches and at each sequence's end, so each lane adds at most 8
//   terms (error <= 7u of the partial sum, every term of one sign):
//     |d|  (exact terms), |e| = |fl32(d + k3)| (<= 2.2u, k3 to 4u:
//     token_terms_f32.hpp), d k3 (>= 0; <= 5u: the fma rounds once).
// Bounds of the panel's values from these sums (relative, per sum, the
// float32 partial sums' 7u added): kl_k3 = sum k3 / N: |d| u <= u/2 (and
// the fold's 2^-53 terms); delta_abs_mean: 7u = 4.2e-7; tv: 9.2u = 5.5e-7;
// kl_reverse = sum d + sum d^2 + sum d k3, the last <= |d|/2 <= 1/4 of
// sum d^2: 12u/4 = 1.8e-7 of sum e d; ratio_mean/chi2 (sum e = sum d + sum
// k3): an error of chi2 of <= 2u E[|d| k3] (<= u/2 relative where chi2 ~
// E[d^2] ~ 2E[k3]; times E[|d| k3] / |chi2| where 2E[e] and E[e^2]
// cancel); ratio_std: the k3 in each (e - K_e) term is off by <= |d| u k3
// <= u d^2 / 4, an error of sum (e - mean)^2 of at most u/2 sum |e - mean|
// d^2 (relative <= u max|d| next to a variance ~ d^2, uncorrelated rounding
// errors cancelling further). Every bound is below SPEC's 1e-6 (16.8u).
// (8 batches per flush measured 4% faster than 4, whose bounds are 7u.)
#include <cmath>
#include <cstdint>

#include "../../core/view.hpp"
#include "../../detail/batches.hpp"
#include "../../detail/token_terms_f32.hpp"
#include "../../detail/widen.hpp"
#include "panel_lanes.hpp"

#define LOGRATIO_PANEL_F32 LOGRATIO_TOKEN_TERMS_F32

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

#if LOGRATIO_PANEL_F32
/// Batches of 16 tokens a float32 partial sum adds before its flush.
constexpr int f32_flush_batches = 8;
/// How far ahead the loop prefetches (detail/batches.hpp's prefetch_ahead).
constexpr std::uint64_t f32_prefetch_tokens = 1024;

/// True for the lanes and types the float32 loop reads.
template <class V, class T, class M>
constexpr bool panel_f32_path = is_simd_batch<V>::template avx512<0> && direct_load16<T, M>;

inline __m512d lo_pd(__m512 x) noexcept { return _mm512_cvtps_pd(_mm512_castps512_ps256(x)); }
inline __m512d hi_pd(__m512 x) noexcept {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
}
/// the 16 lanes of x added into the 8 lanes of acc in float64
inline __m512d add_wide(__m512d acc, __m512 x) noexcept { return _mm512_add_pd(acc, _mm512_add_pd(lo_pd(x), hi_pd(x))); }

/// The largest float at or below x (x >= 0): for a float a, a > x <=> a > floor_float(x).
inline float floor_float(double x) noexcept {
    float f = static_cast<float>(x);
    if (static_cast<double>(f) > x) f = std::nextafter(f, -1.0f);
    return f;
}

/// The float32 loop's thresholds (each rounded down to a float: for a
/// float a, a > x <=> a > floor_float(x)).
struct f32_thresholds {
    __m512 thr[8];
    f32_thresholds(const double* thresholds, std::uint32_t n) {
        for (std::uint32_t k = 0; k < 8; ++k) thr[k] = _mm512_set1_ps(k < n ? floor_float(thresholds[k]) : 0.0f);
    }
};

/// One sequence's float32-lane sums: locals of f32_sequence (kept in
/// registers; accumulators in memory measured 1.6x slower on Zen 4),
/// folded into the range's lane sums and the row sums at its end. Fewer
/// live vectors than the terms (registers run out at 32, and spilled
/// accumulators cost more than the arithmetic saved): sum d^2 and sum k3
/// are derived at the fold from sums kept anyway (fold_f32_sums).
struct f32_sums {
    __m512d d = _mm512_setzero_pd(), r = d;    // sum delta, sum l_E
    __m512d dk2 = d, ek = d, ek2 = d;          // sum (d - K)^2, sum (e - K_e), sum (e - K_e)^2
    __m512d abs = d, tv = d, dk3 = d;          // flushed float32 sums
    __m512 fabs = _mm512_setzero_ps(), ftv = fabs, fdk3 = fabs;  // float32 partial sums
    __m512 mn = _mm512_set1_ps(INFINITY), mx = _mm512_set1_ps(-INFINITY), top = mx;
    // Counts of |delta| > threshold j in 16-bit fields (j % 4) of two
    // scalars (j / 4): per threshold and batch a compare into a mask and its
    // popcount, on the integer units the vector terms leave idle (8-bit
    // fields of vector counters took a masked vector add per threshold on
    // the FP/vector pipes the terms are bound by: measured slower); moved
    // into the range's counters every 8 flushes (64 batches: a field holds
    // at most 1024) and at the sequence's end.
    std::uint64_t above[2] = {0, 0};
    std::uint64_t n = 0;
    int batches = 0;  // since the last flush
    int flushes = 0;  // since the counts were last moved

    /// The counts of thresholds [0, nthr) added to counts[], zeroed.
    void move_counts(std::uint32_t nthr, std::uint64_t* counts) noexcept {
        for (std::uint32_t j = 0; j < nthr && j < 8; ++j) counts[j] += (above[j / 4] >> (16 * (j % 4))) & 0xffff;
        above[0] = above[1] = 0;
        flushes = 0;
    }
    void flush(std::uint32_t nthr, std::uint64_t* counts) noexcept {
        abs = add_wide(abs, fabs), tv = add_wide(tv, ftv), dk3 = add_wide(dk3, fdk3);
        fabs = ftv = fdk3 = _mm512_setzero_ps();
        batches = 0;
        if (++flushes == 8) move_counts(nthr, counts);
    }
};

/// Repair lanes waiting for the float64 step (at most 7 between batches).
struct f32_pending {
    alignas(64) float t[32] = {}, r[32] = {};
    unsigned n = 0;
    /// The float64 step over the first k pending lanes (k <= 8), the rest moved down.
    template <class V, class F>
    void run(unsigned k, F& step) {
        using mask_t = typename V::batch_bool_type;
        const __m512d tt = _mm512_cvtps_pd(_mm256_load_ps(t)), rr = _mm512_cvtps_pd(_mm256_load_ps(r));
        step(V(tt), V(rr), mask_t(static_cast<__mmask8>((1u << k) - 1)));
        n -= k;
        // lanes 8..31 down by 8 (k < 8 only at a sequence's end, n = 0 then);
        // past n stale values stay: the step's mask leaves them out
        _mm512_store_ps(t, _mm512_loadu_ps(t + 8));
        _mm256_store_ps(t + 16, _mm256_load_ps(t + 24));
        _mm512_store_ps(r, _mm512_loadu_ps(r + 8));
        _mm256_store_ps(r + 16, _mm256_load_ps(r + 24));
    }
};

/// One batch of 16 tokens (lanes `lanes` of them read) at i: the float32
/// terms of the header comment; repair lanes to the pending buffer.
template <class V, int NT, class T, class M, class F>
LOGRATIO_ALWAYS_INLINE inline void f32_batch(const paired_view<T, M>& v, std::uint64_t i, __mmask16 lanes, f32_sums& a,
                                             f32_pending& pend, const f32_thresholds& th, __m512d vK, __m512d vKe,
                                             std::uint32_t nthr, std::uint64_t* above, F& step) {
    const __m512 t = widen16(v.train() + i, lanes), r = widen16(v.rollout() + i, lanes);
    const __mmask16 k = v.mask() ? mask16(v.mask() + i, lanes) : lanes;
    const __m512 d = _mm512_sub_ps(t, r);
    const __m512 ad = _mm512_abs_ps(d);
    const __mmask16 ok =
        _mm512_mask_cmp_ps_mask(exact_delta_lanes(t, r, d, k), ad, _mm512_set1_ps(f32_small_delta), _CMP_LE_OQ);
    // Only a batch with repair lanes (9% on the benchmarks' data) compresses
    // them to the pending buffer: the branch, mispredicted on some of those,
    // measured 4% faster than compressing (nothing, mostly) in every batch
    // once the counters and the exactness test had been made cheaper; the
    // step's branch is taken once per 8 repair lanes.
    const __mmask16 rep = k & static_cast<__mmask16>(~ok);
    if (rep) {
        _mm512_storeu_ps(pend.t + pend.n, _mm512_maskz_compress_ps(rep, t));
        _mm512_storeu_ps(pend.r + pend.n, _mm512_maskz_compress_ps(rep, r));
        pend.n += static_cast<unsigned>(__builtin_popcount(rep));
        if (__builtin_expect(pend.n >= 8, 0)) {
            pend.template run<V>(8, step);
            if (pend.n >= 8) pend.template run<V>(8, step);  // at most 7 + 16 pending
        }
    }
    const __m512 d0 = _mm512_maskz_mov_ps(ok, d);  // 0 on the other lanes (k3's input)
    a.n += static_cast<unsigned>(__builtin_popcount(ok));
    a.top = _mm512_mask_max_ps(a.top, ok, a.top, _mm512_max_ps(t, r));
    a.mn = _mm512_mask_min_ps(a.mn, ok, a.mn, d);
    a.mx = _mm512_mask_max_ps(a.mx, ok, a.mx, d);
    const __m512d dl = lo_pd(d0), dh = hi_pd(d0);  // exact
    a.d = _mm512_add_pd(a.d, _mm512_add_pd(dl, dh));
    const __mmask8 ol = static_cast<__mmask8>(ok), oh = static_cast<__mmask8>(ok >> 8);
    a.r = _mm512_mask_add_pd(a.r, oh, a.r, hi_pd(r));
    a.r = _mm512_mask_add_pd(a.r, ol, a.r, lo_pd(r));
    const __m512d kl = _mm512_maskz_sub_pd(ol, dl, vK), kh = _mm512_maskz_sub_pd(oh, dh, vK);
    a.dk2 = _mm512_fmadd_pd(kh, kh, _mm512_fmadd_pd(kl, kl, a.dk2));
    const __m512 q = k3_tail_f32(d0);
    const __m512 k3 = k3_f32(d0, q);
    const __m512 e = _mm512_add_ps(d0, k3);
    // e - K_e in float64 (0 on the other lanes), summed and squared
    const __m512d el = shifted_ratio_minus_one(dl, lo_pd(q), _mm512_maskz_sub_pd(ol, dl, vKe));
    const __m512d eh = shifted_ratio_minus_one(dh, hi_pd(q), _mm512_maskz_sub_pd(oh, dh, vKe));
    a.ek = _mm512_add_pd(a.ek, _mm512_add_pd(el, eh));
    a.ek2 = _mm512_fmadd_pd(eh, eh, _mm512_fmadd_pd(el, el, a.ek2));
    a.fabs = _mm512_mask_add_ps(a.fabs, ok, a.fabs, ad);
    a.ftv = _mm512_add_ps(a.ftv, _mm512_abs_ps(e));
    a.fdk3 = _mm512_fmadd_ps(d0, k3, a.fdk3);
    const std::uint32_t n = NT >= 0 ? static_cast<std::uint32_t>(NT) : nthr;
    for (std::uint32_t j = 0; j < n && j < 8; ++j)
        a.above[j / 4] += static_cast<std::uint64_t>(__builtin_popcount(_mm512_mask_cmp_ps_mask(ok, ad, th.thr[j], _CMP_GT_OQ)))
                          << (16 * (j % 4));
    if (++a.batches == f32_flush_batches) a.flush(n, above);
}

/// A double in lane 0 of a vector of doubles, 0 in the others.
inline __m512d in_lane0(double x) noexcept { return _mm512_maskz_mov_pd(1, _mm512_set1_pd(x)); }

/// The float32 lanes' sums of one sequence into the range's lane sums S and
/// the row sums. Two sums are derived here, once per sequence (lane 0):
///   sum k3  = sum (e - K_e) - (sum d - n K_e)      (e = d + k3)
///   sum d^2 = sum (d - K)^2 + K (2 sum d - n K)
/// Their rounding errors, ~2^-53 (|sum d| + n |K_e|) and ~2^-53 (sum (d - K)^2
/// + 2 |K sum d| + n K^2), are below 1e-12 of the sums themselves unless the
/// shift K is far from every delta but the first, and even then (K is the
/// range's first delta, so its own k3 and d^2 are in the sums) below 2^-53
/// times the tokens, i.e. within SPEC's 1e-6 up to 10^9 tokens.
template <class V>
LOGRATIO_ALWAYS_INLINE inline void fold_f32_sums(f32_sums& a, panel_lanes<V>& S, double K, double Ke,
                                                 std::uint64_t& row_n, V& row_d, V& row_t, V& row_r, V& row_min,
                                                 V& row_max, V& row_top) {
    const double n = static_cast<double>(a.n), sd = _mm512_reduce_add_pd(a.d);
    const double sk3 = _mm512_reduce_add_pd(a.ek) - (sd - n * Ke);
    const double sd2 = _mm512_reduce_add_pd(a.dk2) + K * (2.0 * sd - n * K);
    S.abs = S.abs + V(a.abs);
    S.k3 = S.k3 + V(in_lane0(sk3));
    S.e = S.e + V(_mm512_add_pd(a.d, in_lane0(sk3)));  // sum e = sum d + sum k3
    S.tv = S.tv + V(a.tv);
    S.rev = S.rev + V(_mm512_add_pd(in_lane0(sd2), a.dk3));  // sum e d = sum d^2 + sum d k3
    S.dk2 = S.dk2 + V(a.dk2);
    S.ek2 = S.ek2 + V(a.ek2);
    row_n += a.n;
    row_d = row_d + V(a.d);
    row_r = row_r + V(a.r);
    row_t = row_t + V(_mm512_add_pd(a.r, a.d));  // sum l_T = sum l_E + sum delta (delta exact)
    row_min = xsimd::min(row_min, V(static_cast<double>(_mm512_reduce_min_ps(a.mn))));
    row_max = xsimd::max(row_max, V(static_cast<double>(_mm512_reduce_max_ps(a.mx))));
    row_top = xsimd::max(row_top, V(static_cast<double>(_mm512_reduce_max_ps(a.top))));
}

/// Tokens [b, e) of one sequence through the float32 loop, the pending
/// repair lanes through `step` (which adds to the same sums) at its end.
template <class V, int NT, class T, class M, class F>
LOGRATIO_ALWAYS_INLINE inline void f32_sequence(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e,
                                                const f32_thresholds& th, panel_lanes<V>& S, const V& vK,
                                                const V& vKe, std::uint32_t nthr, std::uint64_t* above, F& step,
                                                std::uint64_t& row_n, V& row_d, V& row_t, V& row_r, V& row_min,
                                                V& row_max, V& row_top) {
    f32_sums a;
    f32_pending pend;
    const __m512d K = vK, Ke = vKe;
    std::uint64_t i = b;
    for (; i + 16 <= e; i += 16) {
        prefetch_ahead<f32_prefetch_tokens>(v.train(), v.rollout(), v.mask(), i, b);
        f32_batch<V, NT>(v, i, 0xffff, a, pend, th, K, Ke, nthr, above, step);
    }
    if (i < e) f32_batch<V, NT>(v, i, static_cast<__mmask16>((1u << (e - i)) - 1), a, pend, th, K, Ke, nthr, above, step);
    if (pend.n) pend.template run<V>(pend.n, step);
    const std::uint32_t n = NT >= 0 ? static_cast<std::uint32_t>(NT) : nthr;
    a.flush(n, above);
    a.move_counts(n, above);
    fold_f32_sums(a, S, _mm512_cvtsd_f64(K), _mm512_cvtsd_f64(Ke), row_n, row_d, row_t, row_r, row_min, row_max,
                  row_top);
}
#endif

}  // namespace detail
LOGRATIO_NAMESPACE_END
