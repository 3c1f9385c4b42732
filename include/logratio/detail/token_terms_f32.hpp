#pragma once
// The float32 sibling of token_terms.hpp: the per-token terms of a 16-lane
// float32 batch (AVX-512 BW/VL; float32, bfloat16 and float16 inputs, which
// widen to float exactly), for the kernels' float32-lane loops (the panel's:
// panel/detail/panel_f32.hpp). Same names, same meaning as token_terms.hpp,
// for lanes where
//   |d| <= f32_small_delta (1/2): e = expm1(d) needs no exp reduction and
//   no clamp (|d| < clamp_log_ratio), so dc = d.
//
// Error analysis (u = 2^-24, float32's unit roundoff; U = 2^-53, double's):
// * d: the float32 difference dh = fl32(l_T - l_E), exact on the lanes
//   exact_delta_lanes() names (the large majority of tokens; widened, dh is
//   then the float64 kernel's delta bit for bit); the others are the
//   kernels' repair lanes, run in float64 from their two inputs.
// * k3 = e - d = d^2 p(d), p(d) = 1/2 + d q(d), q(d) = sum_{i=0..6} d^i/(i+3)!
//   (the series of expm1(d) - d, >= 0): truncation after d^8/10! is below
//   2.2e-9 relative at |d| = 1/2 -- below u.
//   - k3_tail_f32: q(dh) in float32 by Estrin: <= 2u relative on q in
//     [0.13, 0.21] (every coefficient and d^i term positive for d > 0, a
//     q' dh-relative change of u|d| q'/q <= u/8 for the input's rounding).
//   - k3_f32(d, q): fl32(d^2 (1/2 + d q)): d^2's rounding (u), p's (u,
//     p in [0.41, 0.61]), the product's (u): |k3_f32 - k3| <= 4u k3.
//   - in double (shifted_ratio_minus_one) from the exact double d and the
//     float32 q: d^2 p with p = 1/2 + d q: q's relative error reaches p
//     scaled by |d q| / p <= 0.1 / 0.41. For d < 0 the tail's terms
//     alternate in sign, so q's error is 2u + u/8 relative to q(|d|), up to
//     1.3 q(d) at d = -1/2: |k3_64 - k3| <= (1.25 |d| u + 2^-50) k3 (the
//     1.0 |d| u stated before is exceeded by up to 7%: measured worst
//     1.065 |d| u, tests/test_correction_f32.cpp). Not enough for a
//     correctly rounded float32 weight fl32(1 + d + k3_64): its error, ~u
//     d^2 / 2 relative to e, misrounds ~1.6e-4 of log-uniform deltas
//     (bench/FLOORS.md, the correction).
//     For the sums where k3 cancels (kl_k3 as sum e - sum d, chi2 = 2 E[e] +
//     E[e^2]) this double k3 is the one to sum: a float32 k3's 4u gave a
//     1.04e-6 relative error of chi2 on the SIMD tests' data.
// * e = d + k3: the float32 e = fl32(d + k3_f32) is within u + 4u k3/|e|
//   <= 2.2u (k3/|e| <= 0.3 for |d| <= 1/2; e and d share a sign) of e: for
//   |e| (tv); in double, d + k3_64.
#include <cstdint>

#include "simd.hpp"

#if LOGRATIO_X86 && defined(__AVX512BW__) && defined(__AVX512VL__)
#define LOGRATIO_TOKEN_TERMS_F32 1
#else
#define LOGRATIO_TOKEN_TERMS_F32 0
#endif

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

#if LOGRATIO_TOKEN_TERMS_F32
/// The largest |d| of the float32 terms (no exp reduction, no clamp).
constexpr float f32_small_delta = 0.5f;

/// The lanes of `lanes` whose dh = fl32(t - r) is exact: fl32(t - dh) == r
/// and fl32(dh + r) == t. If dh is exact both differences are exact. If not,
/// the one whose larger operand is the larger of |t|, |r| is exact (Dekker's
/// Fast2Sum: for |a| >= |b|, fl(fl(a + b) - a) is exact) and equals the
/// other input only if the rounding error of dh is 0: it fails. NaN/Inf
/// inputs fail too. Two operations and two compares where TwoSum takes six
/// and one.
inline __mmask16 exact_delta_lanes(__m512 t, __m512 r, __m512 dh, __mmask16 lanes) noexcept {
    const __mmask16 a = _mm512_mask_cmp_ps_mask(lanes, _mm512_sub_ps(t, dh), r, _CMP_EQ_OQ);
    return _mm512_mask_cmp_ps_mask(a, _mm512_add_ps(dh, r), t, _CMP_EQ_OQ);
}

/// q(d) = (p(d) - 1/2) / d = sum_{i=0..6} d^i / (i+3)! for |d| <= 1/2, in
/// float32 (Estrin's scheme: a short dependency chain).
inline __m512 k3_tail_f32(__m512 d) noexcept {
    const auto c = [](double x) { return _mm512_set1_ps(static_cast<float>(x)); };
    const __m512 d2 = _mm512_mul_ps(d, d), d4 = _mm512_mul_ps(d2, d2);
    const __m512 q0 = _mm512_fmadd_ps(d, c(1.0 / 24), c(1.0 / 6)), q1 = _mm512_fmadd_ps(d, c(1.0 / 720), c(1.0 / 120));
    const __m512 q2 = _mm512_fmadd_ps(d, c(1.0 / 40320), c(1.0 / 5040));
    return _mm512_fmadd_ps(d4, _mm512_fmadd_ps(d2, c(1.0 / 362880), q2), _mm512_fmadd_ps(d2, q1, q0));
}

/// The k3 term e - d = d^2 (1/2 + d q) in float32 (|err| <= 6u k3).
inline __m512 k3_f32(__m512 d, __m512 q) noexcept {
    return _mm512_mul_ps(_mm512_mul_ps(d, d), _mm512_fmadd_ps(d, q, _mm512_set1_ps(0.5f)));
}

/// e - K_e = (d - K_e) + d^2 (1/2 + d q) in double, from the exact double d,
/// the float32 tail q widened and dke = d - K_e: the k3 part's error is
/// (|d| u + 2^-50) k3, then one rounding of the sum (d^2 exact before it
/// rounds once, the fma rounds once).
inline __m512d shifted_ratio_minus_one(__m512d d, __m512d q, __m512d dke) noexcept {
    return _mm512_fmadd_pd(_mm512_mul_pd(d, d), _mm512_fmadd_pd(d, q, _mm512_set1_pd(0.5)), dke);
}
#endif

}  // namespace detail
LOGRATIO_NAMESPACE_END
