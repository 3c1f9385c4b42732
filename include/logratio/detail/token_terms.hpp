#pragma once
// The per-token terms every kernel derives from a batch, defined once: the
// panel (panel/detail/panel_kernel.hpp), the correction and its short cut
// (correction/detail/), the doctor's scan. For lanes V (double: the scalar
// reference path; an xsimd batch of doubles: the SIMD paths):
//
//   delta     d  = l_T - l_E = log rho                  token_delta
//   clamped   dc = clamp(d, -20, 20)                    clamped_delta   (core/limits.hpp: clamp_log_ratio)
//   ratio - 1 e  = expm1(dc) = rho_c - 1                ratio_minus_one
//   k3 term      = e - dc = rho_c - 1 - log rho_c >= 0  k3_term         (SPEC's kl_k3 is its mean)
//   and for |d| <= 1/16 the same k3 term by its series  k3_series       (the doctor's scan)
//
// The formulas that turn their sums into SPEC's values are the components'
// (panel/panel_accumulator.hpp, correction/correction_accumulator.hpp).
// Their float32 sibling, for 16-lane float32 batches whose delta is exact
// in float32 (the panel's AVX-512 hot loop): token_terms_f32.hpp.
//
// Error analysis (u = 2^-53, the unit roundoff of double):
// * d: l_T and l_E are widened to double exactly (float32, bf16, f16 and
//   float64 inputs alike), so d carries one rounding, |err| <= u |d|; it is
//   exact when the two log-probs are within a factor 2 (Sterbenz) and, for
//   32-bit or narrower inputs, whenever their exponents differ by at most 29
//   (the difference of two 24-bit significands fits in 53 bits).
// * dc: min/max, exact.
// * e: simd_ops' expm1 (detail/simd.hpp): exact reduction x = k ln2 + r for
//   k = 0 (|x| <= 0.34: r is x itself, so tiny x keep full relative
//   accuracy) and a degree-12 series (truncation < 2e-16 relative): a few u
//   relative, measured against std::expm1 in tests/test_simd.cpp. The scalar
//   path is std::expm1 (<= 1 ulp).
// * k3 term e - dc: e >= dc exactly, and the subtraction of the rounded e
//   costs |err| <= eps_e |e| + u k3 with eps_e the relative error of e. For
//   small d, k3 ~ d^2 / 2, so the term's relative error is ~ 2 eps_e / |d|:
//   at |d| = 1e-3 about 1e-12, and summed over tokens the error of kl_k3 is
//   at most eps_e sum|e| ~ eps_e sum|d|, next to kl_k3's own sum d^2 / 2 --
//   within SPEC's 1e-6 relative (1e-12 absolute below 1e-6) down to
//   |d| ~ 1e-9, where kl_k3 itself is below 1e-18. In float32 the same
//   subtraction loses every digit at |d| ~ 1e-3 (SPEC says so): the terms
//   are computed in double.
// * k3 series: d^2 (1/2! + d/3! + ... + d^5/7!), truncated after d^7: the
//   remainder is < 2 d^6 / 8! relative, < 3e-12 at |d| = 1/16 -- no
//   cancellation at all, so it is the k3 term of choice where a kernel can
//   afford a polynomial per token and needs no expm1 (the doctor's scan).
#include <cmath>

#include "../core/limits.hpp"
#include "simd.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// d = l_T - l_E (0 on lanes whose both inputs were zeroed by a mask).
template <class V>
inline V token_delta(const V& train, const V& rollout) noexcept {
    return train - rollout;
}

/// dc = clamp(d, -clamp_log_ratio, clamp_log_ratio).
template <class V>
inline V clamped_delta(const V& d) noexcept {
    using ops = simd_ops<V>;
    return ops::min(ops::max(d, ops::splat(-clamp_log_ratio)), ops::splat(clamp_log_ratio));
}

/// Whether a batch needs expm1's exp reduction (and the clamp): some lane's
/// |d| is above expm1_small_bound. Without it expm1_split skips both (the
/// same bits: detail/simd.hpp).
template <class V>
inline bool needs_reduction(const V& abs_delta) noexcept {
    using ops = simd_ops<V>;
    return !ops::all(abs_delta <= ops::splat(expm1_small_bound));
}

/// e = expm1(dc) = rho_c - 1 for dc within the clamp range; `reduce` false
/// only when needs_reduction() said so (then bit-identical, faster).
template <class V>
inline V ratio_minus_one(const V& dc, bool reduce = true) noexcept {
    return simd_ops<V>::expm1_split(dc, reduce);
}

/// The k3 term e - dc = rho_c - 1 - log rho_c (>= 0), from e = expm1(dc).
template <class V>
inline V k3_term(const V& e, const V& dc) noexcept {
    return e - dc;
}

/// The k3 term of d by its series, for |d| <= 1/16 (Estrin's scheme: a
/// short dependency chain). Works for double and xsimd batches alike.
template <class V>
inline V k3_series(const V& d) noexcept {
    const V d2 = d * d;
    return d2 * ((0.5 + d * (1.0 / 6)) + d2 * ((1.0 / 24 + d * (1.0 / 120)) + d2 * (1.0 / 720 + d * (1.0 / 5040))));
}

/// The k3 term of any d (clamped as the panel clamps): the series where
/// |d| <= 1/16, expm1 beyond.
inline double k3_term_of(double d) noexcept {
    if (std::fabs(d) <= 0.0625) return k3_series(d);
    const double c = clamp_delta(d);
    return k3_term(std::expm1(c), c);
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
