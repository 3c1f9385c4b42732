#pragma once
// Exact per-token divergences from the two runtimes' full logits.
//
// For a row of trainer logits z and rollout logits y over the vocabulary
// (after dividing by the temperature), pi = softmax(z), mu = softmax(y):
//
//   train_entropy      H(pi) = log S_z - sum p_i a_i / S_z
//   rollout_entropy    H(mu) = log S_y - sum q_i b_i / S_y
//   kl_train_rollout   KL(pi||mu) = sum p_i (a_i - b_i) / S_z - log S_z + log S_y
//   kl_rollout_train   KL(mu||pi) = sum q_i (b_i - a_i) / S_y + log S_z - log S_y
//   tv                 1/2 sum |p_i / S_z - q_i / S_y|
//   train_logprob      log pi(tok) = a_tok - log S_z;  rollout_logprob likewise
//   argmax_match       argmax z == argmax y (first maximum)
//   sampled_prob_gap   pi(tok) - mu(tok)
//
// with a_i = z_i - r_z, b_i = y_i - r_y for references r_z <= max z,
// r_y <= max y (every value above is invariant to them), p_i = exp(a_i),
// q_i = exp(b_i), S_z = sum p_i, S_y = sum q_i -- all in float64 lanes, so
// no overflow for any logit size. Two passes over a row:
//   1. the maxima, argmaxes and sums together (an online log-sum-exp: the
//      references follow the running maxima, the sums rescaled when they
//      move; online_sums below), storing each p_i and q_i in a row buffer
//      (16 bytes per pair, reused row to row; 2.4 MB at V = 151,936);
//   2. the TV from the stored p_i, q_i (it needs the final S_z and S_y).
// (The kernel before gave the maxima their own pass and recomputed both
// exps in the TV pass: four exps per pair and three reads, now two and one.)
//
// Error analysis (u = 2^-53). p_i, q_i: float64 exps of relative error
// <= 2u (AVX-512: exp_nonpos_fast; elsewhere simd_ops::exp_nonpos; the
// one-lane path std::exp), the arguments a_i, b_i exact to one rounding.
// The sums are of positive terms (S) or of the float64 products the
// previous kernel formed (E, K), so entropies and log-probs keep the
// previous kernel's accuracy; each rescale adds a few roundings to the
// entries summed before it, which weigh e^-slack (e^-8) or less by the next
// one. KL = K_z / S_z - log S_z + log S_y and TV = 1/2 sum |p_i/S_z -
// q_i/S_y| are the previous kernel's float64 formulas of the same values:
// rows equal up to a constant give a_i = b_i, p_i = q_i bit for bit and
// KL = TV = 0 exactly; nearly identical rows keep KL to ~1e-14 absolute
// (tests: 1e-13 at KL ~ 6e-10). No float32 exps: KL and TV of nearly
// identical rows need log S_z - log S_y to ~1e-13, and independent float32
// roundings of p_i and q_i (6e-8 each) give ~1e-8 there. Forming each
// q_i - p_i as e^max(a,b) * expm1(-|a - b|) keeps it accurate, but the KL
// then needs expm1(t) - t per pair too, and with the float64 differences,
// the conversions and float64 sums that is about as many operations as the
// two float64 exps (a float64-reduced, float32-polynomial exp measured
// 0.48 ns against 0.74 per value on AVX-512; the table exp 8 operations
// fewer than the table-free one).
// -inf logits (masked vocabulary entries) have probability 0: an entry
// that is -inf in both rows is left out; one that is -inf only in y makes
// KL(pi||mu) = +inf (and -inf only in z makes KL(mu||pi) = +inf).
// NaN and +inf logits, rows that are all -inf, token ids out of range and
// shape mismatches are errors naming the tensor, row and column.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "../detail/xsimd.hpp"

#include "../detail/parallel.hpp"
#include "../detail/simd.hpp"
#include "../detail/widen.hpp"
#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/moments.hpp"
#include "../quantiles/quantiles.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// A non-owning [rows, cols] matrix of logits (float, double, bfloat16,
/// float16), rows `row_stride` elements apart (>= cols).
template <class T>
struct logits_view {
    static_assert(is_logprob_type<T>::value, "logits must be float, double, bfloat16 or float16");
    const T* data = nullptr;
    std::uint64_t rows = 0, cols = 0, row_stride = 0;

    logits_view() = default;
    logits_view(const T* d, std::uint64_t r, std::uint64_t c, std::uint64_t stride = 0)
        : data(d), rows(r), cols(c), row_stride(stride ? stride : c) {
        if (row_stride < cols)
            throw shape_error(detail::concat("logits view: row stride ", row_stride, " is below the row length ", cols));
        if (rows && cols && d == nullptr) throw shape_error("logits view: null data for a non-empty view");
    }
    const T* row(std::uint64_t i) const noexcept { return data + i * row_stride; }
};

/// Per-row results.
struct logits_row {
    double train_entropy = 0, rollout_entropy = 0, kl_train_rollout = 0, kl_rollout_train = 0, tv = 0;
    double train_logprob = 0, rollout_logprob = 0, sampled_prob_gap = 0;
    bool argmax_match = false;
    std::uint64_t train_argmax = 0, rollout_argmax = 0;
};

struct logits_options {
    double temperature = 1.0;  ///< logits are divided by it (as samplers do)
};

namespace detail {

constexpr std::size_t logits_block = 512;

// the rare paths stay out of the hot loops
#if defined(__GNUC__) || defined(__clang__)
#define LOGRATIO_LOGITS_NOINLINE __attribute__((noinline))
#else
#define LOGRATIO_LOGITS_NOINLINE
#endif

/// L lanes at p (64-byte aligned for the SIMD types).
template <class V>
V load_pq(const double* p) noexcept {
    if constexpr (std::is_same<V, double>::value) return *p;
    else return V::load_aligned(p);
}

template <class V, class T>
struct row_loader {
    using ops = simd_ops<V>;
    static constexpr std::size_t L = ops::size;
    static constexpr bool direct = [] {
        if constexpr (L == 1) return false;
        else return direct_load<typename V::arch_type, T, std::uint8_t>;
    }();
    alignas(64) double buf[L];

    /// Lanes [i, i+L) of p (entries past n read as -inf), divided by the temperature.
    LOGRATIO_ALWAYS_INLINE V load(const T* p, std::uint64_t i, std::uint64_t n, double temperature,
                                  bool scale) noexcept {
        V x;
        if constexpr (direct) {
            if (i + L <= n) {
                x = widen<typename V::arch_type>(p + i);
                return scale ? V(x / ops::splat(temperature)) : x;
            }
        }
        if constexpr (L == 1) {
            x = to_double(p[i]);
#if LOGRATIO_X86
        } else if constexpr (L == 2) {
            // two lanes (SSE2): from registers -- two scalar stores read back
            // as one vector would stall on store forwarding
            constexpr double ninf = -std::numeric_limits<double>::infinity();
            x = V(_mm_set_pd(i + 1 < n ? to_double(p[i + 1]) : ninf, to_double(p[i])));
#endif
        } else {
            for (std::size_t k = 0; k < L; ++k)
                buf[k] = i + k < n ? to_double(p[i + k]) : -std::numeric_limits<double>::infinity();
            x = V::load_aligned(buf);
        }
        return scale ? V(x / ops::splat(temperature)) : x;
    }
};

template <class T>
[[noreturn]] void throw_bad_logit(const T* p, std::uint64_t n, const char* name, std::uint64_t row, double t) {
    for (std::uint64_t j = 0; j < n; ++j) {
        const double x = to_double(p[j]) / t;
        if (std::isnan(x) || x == std::numeric_limits<double>::infinity())
            throw value_error(concat(name, ": ", std::isnan(x) ? "NaN" : "+inf", " logit at row ", row, ", column ", j),
                              name, row, j, x);
    }
    throw value_error(concat(name, ": row ", row, " has no finite logit (every entry is -inf)"), name, row, 0,
                      -std::numeric_limits<double>::infinity());
}

#if defined(__AVX512F__)
/// 2^(j/16), j = 0..15, correctly rounded.
alignas(64) inline constexpr double exp2_sixteenths[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
#endif

/// exp(x) for x <= 0 (-inf included; 0 below -708, as simd_ops::exp_nonpos).
/// AVX-512: x = (16 m + j) ln2/16 + r, |r| <= ln2/32, exp(x) = 2^m 2^(j/16)
/// e^r with 2^(j/16) from a 16-entry table (one two-register permute) and
/// e^r - 1 by its Taylor series to degree 7 (truncation < 2e-18 relative;
/// the table entries are correctly rounded): 8 polynomial operations where
/// the table-free form needs 15 for |r| <= ln2/2. The two exps per pair of
/// the sums pass are most of the kernel's time. Elsewhere simd_ops's.
template <class V>
LOGRATIO_ALWAYS_INLINE inline V exp_nonpos_fast(const V& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (simd_ops<V>::size == 8) {
        const __m512d shifter = _mm512_set1_pd(6755399441055744.0);  // 1.5 * 2^52: k in the low bits
        const __m512d xc = _mm512_max_pd(x, _mm512_set1_pd(-709.0));   // -inf: k in range
        const __m512d kd = _mm512_fmadd_pd(xc, _mm512_set1_pd(23.083120654223414), shifter);  // 16 / ln2
        const __m512d k = _mm512_sub_pd(kd, shifter);
        // ln2/16 in two parts (the first times k exact for |k| < 2^20)
        __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(6.93147180369123816490e-01 / 16), xc);
        r = _mm512_fnmadd_pd(k, _mm512_set1_pd(1.90821492927058770002e-10 / 16), r);
        const __m512i ki = _mm512_sub_epi64(_mm512_castpd_si512(kd), _mm512_castpd_si512(shifter));
        const __m512d t = _mm512_permutex2var_pd(_mm512_load_pd(exp2_sixteenths), ki, _mm512_load_pd(exp2_sixteenths + 8));
        const __m512d scale = _mm512_castsi512_pd(
            _mm512_add_epi64(_mm512_castpd_si512(t), _mm512_slli_epi64(_mm512_srai_epi64(ki, 4), 52)));
        const __m512d r2 = _mm512_mul_pd(r, r);
        const __m512d q0 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 6.0), _mm512_set1_pd(0.5));
        const __m512d q1 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 120.0), _mm512_set1_pd(1.0 / 24.0));
        const __m512d q2 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 5040.0), _mm512_set1_pd(1.0 / 720.0));
        const __m512d em = _mm512_fmadd_pd(r2, _mm512_fmadd_pd(r2, _mm512_fmadd_pd(r2, q2, q1), q0), r);  // e^r - 1
        const __m512d e = _mm512_fmadd_pd(scale, em, scale);
        return V(_mm512_maskz_mov_pd(_mm512_cmp_pd_mask(x, _mm512_set1_pd(-708.0), _CMP_GE_OQ), e));
    }
#endif
    return simd_ops<V>::exp_nonpos(x);
}

/// Pass 1's state. The row maxima mz, my (and their first columns) are
/// exact running maxima; the sums are per lane, relative to one reference
/// per row, rz <= mz and ry <= my:
///   Sz = sum p, Ez = sum p a, Kz = sum p (a - b)   (p = exp(a), a = z - rz)
///   Sy = sum q, Ey = sum q b, Ky = sum q (b - a)   (q = exp(b), b = y - ry)
/// Every result below is invariant to the references (entropy = log S -
/// E / S, KL = K / S - log S_z + log S_y, log-prob = a - log S), so a
/// reference only has to keep p, q in range: it moves to the maximum when
/// the maximum passes it by more than `slack` (p, q <= e^slack; no
/// overflow below e^709). Moving rz by dz and ry by dy lowers every a by
/// dz and b by dy:
///   S' = e^-dz S,  E' = e^-dz (E - dz S),  Kz' = e^-dz (Kz - (dz - dy) S)
/// (scalar factors). This replaces the separate pass for the maxima (one
/// read of both rows fewer). The maxima grow rarely (O(log n) times in a
/// row of random logits): a branch; the references move at most once per
/// `slack` of growth, so an entry's sums pass through at most a few
/// rescales while it still weighs anything (each rescale: a few roundings
/// of 1e-16; after k of them the entry weighs e^-(k-1) slack or less).
template <class V>
struct online_sums {
    using ops = simd_ops<V>;
    static constexpr std::size_t L = ops::size;
    /// The references before the first finite logit (an all -inf start
    /// gives a = -inf, p = 0, never the NaN of -inf - -inf). The maxima
    /// start at -inf, so that any finite logit, -DBL_MAX included, raises
    /// them and sets its column as the argmax.
    static constexpr double none = -std::numeric_limits<double>::max();
    static constexpr double slack = 8.0;
    struct segment {
        std::uint64_t begin;  ///< first column under these references
        double rz, ry;
    };
    V Sz = ops::splat(0.0), Sy = Sz, Ez = Sz, Ey = Sz, Kz = Sz, Ky = Sz;
    double mz = -std::numeric_limits<double>::infinity(), my = mz, rz = none, ry = none;
    std::uint64_t jz = 0, jy = 0;              ///< first column of each maximum
    std::vector<segment>* segments = nullptr;  ///< where the references moved (the TV pass rescales by them)

    static void rescale(V& S, V& E, V& K, double d, double cross) {
        const V f = ops::splat(std::exp(-d));
        // an infinite KL lane (a -inf entry on the other side) stays infinite
        const V k = f * (K - ops::splat(cross) * S);
        K = ops::select(K == ops::splat(std::numeric_limits<double>::infinity()), K, k);
        E = f * (E - ops::splat(d) * S);
        S = f * S;
    }
    /// Rare path: some lane of z or y at columns [i, i+L) exceeds its row's
    /// maximum. The first column holding the new maximum is the row's first
    /// maximum so far (every earlier column is below the old one).
    LOGRATIO_LOGITS_NOINLINE void raise(const V& z, const V& y, std::uint64_t i) {
        alignas(64) double tz[L], ty[L];
        store(z, tz);
        store(y, ty);
        for (std::size_t k = 0; k < L; ++k) {
            if (tz[k] > mz) mz = tz[k], jz = i + k;
            if (ty[k] > my) my = ty[k], jy = i + k;
        }
        if (mz - rz <= slack && my - ry <= slack) return;
        // from `none` the sums are exact zeros: nothing to rescale
        const double dz = rz == none ? 0.0 : mz - rz, dy = ry == none ? 0.0 : my - ry;
        rescale(Sz, Ez, Kz, dz, dz - dy);
        rescale(Sy, Ey, Ky, dy, dy - dz);
        rz = std::isinf(mz) ? none : mz;  // a row with no finite logit yet keeps its reference
        ry = std::isinf(my) ? none : my;
        segments->push_back({i, rz, ry});
    }
    /// The terms of columns with a -inf entry: a term whose probability is
    /// 0 is 0 (p a would be 0 * -inf); p > 0 against q = 0 gives +inf in Kz.
    LOGRATIO_LOGITS_NOINLINE void add_masked(const V& a, const V& b, const V& p, const V& q) {
        const V zero = ops::splat(0.0);
        const auto pp = p > zero, qp = q > zero;
        Sz = Sz + p;
        Sy = Sy + q;
        Ez = Ez + ops::select(pp, p * a, zero);
        Ey = Ey + ops::select(qp, q * b, zero);
        Kz = Kz + ops::select(pp, p * (a - b), zero);
        Ky = Ky + ops::select(qp, q * (b - a), zero);
    }
    static void store(const V& x, double* t) {
        if constexpr (L == 1) t[0] = x;
        else x.store_aligned(t);
    }
};

/// Pass 1: maxima, argmaxes and the sums, one read of both rows; stores p
/// and q (float64, as summed) for the TV pass, which then reads 16 bytes
/// per pair from L2/L3 instead of recomputing two exps.
template <class V, class T>
online_sums<V> logits_sums(const T* z, const T* y, std::uint64_t n, double temperature, double* pq,
                           std::vector<typename online_sums<V>::segment>& segments, V& poison) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    constexpr std::size_t L = ops::size;
    const bool scale = temperature != 1.0;
    row_loader<V, T> lz, ly;
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    online_sums<V> s;
    segments.clear();
    s.segments = &segments;
    V vmz = ops::splat(s.mz), vmy = vmz, vrz = ops::splat(s.rz), vry = vrz;
    for (std::uint64_t i = 0; i < n; i += L) {
        const V zi = lz.load(z, i, n, temperature, scale), yi = ly.load(y, i, n, temperature, scale);
        // a NaN never exceeds a maximum but poisons this running sum (-inf
        // entries alone leave it -inf); a +inf becomes the maximum
        poison = poison + (zi + yi);
        const mask_t up = (zi > vmz) | (yi > vmy);
        // rare: a new maximum, or a -inf entry (masked vocabulary; its
        // terms need the rule 0 * -inf = 0, and a lone one the +inf KL)
        const bool rare = !ops::none(up | (ops::min(zi, yi) == ninf));
        if (rare && !ops::none(up)) {
            s.raise(zi, yi, i);
            vmz = ops::splat(s.mz);
            vmy = ops::splat(s.my);
            vrz = ops::splat(s.rz);
            vry = ops::splat(s.ry);
        }
        const V a = zi - vrz, b = yi - vry;
        const V p = exp_nonpos_fast(a), q = exp_nonpos_fast(b);
        online_sums<V>::store(p, pq + 2 * i);
        online_sums<V>::store(q, pq + 2 * i + L);
        if (rare) {
            s.add_masked(a, b, p, q);
        } else {  // a, b finite: every product is a number
            const V x = a - b;
            s.Sz = s.Sz + p;
            s.Sy = s.Sy + q;
            s.Ez = s.Ez + p * a;
            s.Ey = s.Ey + q * b;
            s.Kz = s.Kz + p * x;
            s.Ky = s.Ky - q * x;
        }
    }
    return s;
}

/// Pass 2: TV = 1/2 sum |p_i / S_z - q_i / S_y| from the stored p and q,
/// the p and q of each stretch of columns under older references scaled
/// to the final ones by exp(reference - final reference) (the last
/// stretch by exactly 1). The same float64 arithmetic as recomputing p and
/// q would do: |p/S_z - q/S_y| of the same values.
template <class V>
double logits_tv(const double* pq, std::uint64_t n, const std::vector<typename online_sums<V>::segment>& segments,
                 double rz, double ry, double sz, double sy) {
    using ops = simd_ops<V>;
    constexpr std::size_t L = ops::size;
    V tv = ops::splat(0.0);
    for (std::size_t k = 0; k < segments.size(); ++k) {
        const std::uint64_t end = k + 1 < segments.size() ? segments[k + 1].begin : n;
        const V fz = ops::splat(std::exp(segments[k].rz - rz) / sz), fy = ops::splat(std::exp(segments[k].ry - ry) / sy);
        for (std::uint64_t i = segments[k].begin; i < end; i += L) {
            const V p = load_pq<V>(pq + 2 * i), q = load_pq<V>(pq + 2 * i + L);
            tv = tv + ops::abs(p * fz - q * fy);
        }
    }
    return 0.5 * ops::sum(tv);
}

template <class V, class T>
logits_row logits_row_impl(const T* z, const T* y, std::uint64_t n, std::int64_t token, std::uint64_t row,
                           double temperature, double* pq,
                           std::vector<typename online_sums<V>::segment>& segments) {
    using ops = simd_ops<V>;
    V poison = ops::splat(0.0);
    const online_sums<V> s = logits_sums<V>(z, y, n, temperature, pq, segments, poison);
    const double sz = ops::sum(s.Sz), sy = ops::sum(s.Sy);
    // (sums of 0: every entry -inf)
    if (!std::isfinite(s.mz) || !std::isfinite(s.my) || sz == 0.0 || sy == 0.0 || std::isnan(ops::sum(poison))) {
        // slow check: which entry, if any, is NaN or +inf
        for (std::uint64_t j = 0; j < n; ++j) {
            const double a = to_double(z[j]) / temperature, b = to_double(y[j]) / temperature;
            if (std::isnan(a) || a == std::numeric_limits<double>::infinity())
                throw_bad_logit(z, n, "train_logits", row, temperature);
            if (std::isnan(b) || b == std::numeric_limits<double>::infinity())
                throw_bad_logit(y, n, "rollout_logits", row, temperature);
        }
        throw_bad_logit(sz == 0.0 ? z : y, n, sz == 0.0 ? "train_logits" : "rollout_logits", row, temperature);
    }
    logits_row r;
    r.train_argmax = s.jz;
    r.rollout_argmax = s.jy;
    r.argmax_match = r.train_argmax == r.rollout_argmax;
    const double lsz = std::log(sz), lsy = std::log(sy);
    r.train_entropy = lsz - ops::sum(s.Ez) / sz;
    r.rollout_entropy = lsy - ops::sum(s.Ey) / sy;
    // (a KL of a lone -inf row entry is +inf by the sums; clamp rounding below 0)
    r.kl_train_rollout = std::max(0.0, ops::sum(s.Kz) / sz - lsz + lsy);
    r.kl_rollout_train = std::max(0.0, ops::sum(s.Ky) / sy + lsz - lsy);
    r.tv = logits_tv<V>(pq, n, segments, s.rz, s.ry, sz, sy);
    if (token >= 0) {
        const auto t = static_cast<std::uint64_t>(token);
        const bool scale = temperature != 1.0;
        const double a = (scale ? to_double(z[t]) / temperature : to_double(z[t])) - s.rz;
        const double b = (scale ? to_double(y[t]) / temperature : to_double(y[t])) - s.ry;
        r.train_logprob = a - lsz;
        r.rollout_logprob = b - lsy;
        r.sampled_prob_gap = std::exp(r.train_logprob) - std::exp(r.rollout_logprob);
    }
    return r;
}

template <class V, class T, class I>
void logits_rows(const logits_view<T>& z, const logits_view<T>& y, const I* tokens, const logits_options& o,
                 logits_row* out, std::uint64_t r0, std::uint64_t r1) {
    constexpr std::size_t L = simd_ops<V>::size;
    if (r0 == r1) return;  // (no buffer: an allocation of 0 bytes may give null)
    // p and q of one row, L-lane blocks interleaved (reused row to row);
    // not zeroed (every entry is written before it is read): a call for
    // one row would otherwise pay a 16-byte store per column for nothing
    const std::size_t bytes = 2 * ((z.cols + L - 1) / L) * L * sizeof(double);
    const std::unique_ptr<double, void (*)(void*)> pq(static_cast<double*>(xsimd::aligned_malloc(bytes, 64)),
                                                      &xsimd::aligned_free);
    if (!pq) throw std::bad_alloc();
    std::vector<typename online_sums<V>::segment> segments;
    for (std::uint64_t i = r0; i < r1; ++i)
        out[i] = logits_row_impl<V>(z.row(i), y.row(i), z.cols, tokens ? static_cast<std::int64_t>(tokens[i]) : -1, i,
                                    o.temperature, pq.get(), segments);
}

template <class T, class I>
void check_logits(const logits_view<T>& z, const logits_view<T>& y, const I* tokens, const logits_options& o) {
    if (z.rows != y.rows || z.cols != y.cols)
        throw shape_error(concat("shape mismatch: train_logits is [", z.rows, ", ", z.cols, "], rollout_logits is [",
                                 y.rows, ", ", y.cols, "]"));
    if (z.cols == 0 && z.rows) throw shape_error("logits: the vocabulary is empty (0 columns)");
    if (!(o.temperature > 0.0) || !std::isfinite(o.temperature))
        throw argument_error(concat("temperature ", o.temperature, " must be a positive finite number"));
    if (tokens)
        for (std::uint64_t i = 0; i < z.rows; ++i) {
            const auto t = static_cast<std::int64_t>(tokens[i]);
            if (t < 0 || static_cast<std::uint64_t>(t) >= z.cols)
                throw value_error(concat("tokens: id ", t, " at row ", i, " is outside the vocabulary [0, ", z.cols, ")"),
                                  "tokens", i, 0, static_cast<double>(t));
        }
}

}  // namespace detail

/// Every row of two [N, V] logit views; `tokens` (N ids, int32 or int64;
/// may be null: no selected-token values) picks the sampled token of each
/// row. Results go to out[0..N). Rows are split over `threads`.
template <class Arch = xsimd::default_arch, class T, class I>
void compare_logits(const logits_view<T>& train, const logits_view<T>& rollout, const I* tokens, logits_row* out,
                    const logits_options& o = {}, unsigned threads = 1) {
    static_assert(std::is_integral<I>::value, "token ids must be integers");
    detail::check_logits(train, rollout, tokens, o);
    const std::uint64_t N = train.rows;
    const unsigned parts = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, N)));
    detail::run_parts(parts, [&](unsigned k) {
        detail::logits_rows<xsimd::batch<double, Arch>>(train, rollout, tokens, o, out, N * k / parts,
                                                        N * (k + 1) / parts);
    });
}

/// Scalar reference path (one lane; std::exp).
template <class T, class I>
void compare_logits_scalar(const logits_view<T>& train, const logits_view<T>& rollout, const I* tokens,
                           logits_row* out, const logits_options& o = {}) {
    detail::check_logits(train, rollout, tokens, o);
    detail::logits_rows<double>(train, rollout, tokens, o, out, 0, train.rows);
}

/// A single logit matrix: entropy and selected-token log-prob of every row
/// (the same code with the matrix compared to itself; the KLs and TV are 0).
template <class Arch = xsimd::default_arch, class T, class I>
void compute_entropy(const logits_view<T>& logits, const I* tokens, logits_row* out, const logits_options& o = {},
                     unsigned threads = 1) {
    compare_logits<Arch>(logits, logits, tokens, out, o, threads);
}

/// One row: entropy and the selected token's log-prob of a single logit
/// row (the same code with the row compared to itself).
template <class Arch = xsimd::default_arch, class T>
logits_row logits_of_row(const T* logits, std::uint64_t vocab, std::int64_t token = -1, double temperature = 1.0) {
    logits_view<T> v(logits, 1, vocab);
    std::int64_t tok = token;
    logits_row r;
    compare_logits<Arch>(v, v, token >= 0 ? &tok : static_cast<const std::int64_t*>(nullptr), &r,
                         logits_options{temperature});
    return r;
}

/// Panel-style summary over rows; with no row every value is NaN (the
/// empty-input rule, core/error.hpp).
struct logits_summary {
    static constexpr double nan = undefined;
    std::uint64_t rows = 0;
    double train_entropy_mean = nan, train_entropy_max = nan, rollout_entropy_mean = nan, rollout_entropy_max = nan;
    double kl_train_rollout_mean = nan, kl_train_rollout_max = nan, kl_rollout_train_mean = nan,
           kl_rollout_train_max = nan;
    double tv_mean = nan, tv_max = nan, argmax_match_fraction = nan, sampled_prob_gap_mean = nan,
           sampled_prob_gap_abs_mean = nan;
    double kl_rollout_train_q50 = nan, kl_rollout_train_q90 = nan, kl_rollout_train_q99 = nan;
};

inline logits_summary summarize_logits(const logits_row* rows, std::uint64_t n) {
    logits_summary s;
    s.rows = n;
    if (n == 0) return s;
    moments he, hr, kt, kr, tv, gap;
    double abs_gap = 0;
    std::uint64_t match = 0;
    std::vector<double> kls(n);
    for (std::uint64_t i = 0; i < n; ++i) {
        const logits_row& r = rows[i];
        he.add(r.train_entropy);
        hr.add(r.rollout_entropy);
        kt.add(r.kl_train_rollout);
        kr.add(r.kl_rollout_train);
        tv.add(r.tv);
        gap.add(r.sampled_prob_gap);
        abs_gap += std::fabs(r.sampled_prob_gap);
        match += r.argmax_match;
        kls[i] = r.kl_rollout_train;
    }
    s.train_entropy_mean = he.mean;
    s.train_entropy_max = he.max;
    s.rollout_entropy_mean = hr.mean;
    s.rollout_entropy_max = hr.max;
    s.kl_train_rollout_mean = kt.mean;
    s.kl_train_rollout_max = kt.max;
    s.kl_rollout_train_mean = kr.mean;
    s.kl_rollout_train_max = kr.max;
    s.tv_mean = tv.mean;
    s.tv_max = tv.max;
    s.argmax_match_fraction = static_cast<double>(match) / static_cast<double>(n);
    s.sampled_prob_gap_mean = gap.mean;
    s.sampled_prob_gap_abs_mean = abs_gap / static_cast<double>(n);
    const std::vector<double> q = quantiles(kls.begin(), kls.end(), {0.5, 0.9, 0.99}, quantile_method::linear);
    s.kl_rollout_train_q50 = q[0];
    s.kl_rollout_train_q90 = q[1];
    s.kl_rollout_train_q99 = q[2];
    return s;
}

/// Divergences when only the rollout engine's top-k log-probs of a row are
/// known (ids and log mu values) and the trainer's full row is: what can be
/// computed exactly is the divergence between the two distributions
/// coarse-grained to the k tokens plus one "rest" bucket (masses
/// 1 - sum_K mu and 1 - sum_K pi). By the log-sum inequality those KLs are
/// lower bounds of the full-vocabulary KLs; the TV is bracketed:
/// tv_low = 1/2 (sum_K |pi - mu| + |rest_pi - rest_mu|) <= TV <=
/// tv_high = 1/2 (sum_K |pi - mu| + rest_pi + rest_mu).
struct topk_divergence {
    double kl_train_rollout_lower = 0, kl_rollout_train_lower = 0;
    double tv_low = 0, tv_high = 0;
    double rollout_mass = 0, train_mass = 0;  ///< sum over the k tokens of mu and of pi
};

/// `train_logprobs`: the trainer's full row of log pi (V entries);
/// `ids`/`rollout_logprobs`: the k rollout tokens and their log mu.
template <class T, class I>
topk_divergence topk_divergences(const T* train_logprobs, std::uint64_t vocab, const I* ids, const double* rollout_logprobs,
                                 std::uint64_t k) {
    topk_divergence d;
    double kl_pm = 0, kl_mp = 0, l1 = 0, mu_k = 0, pi_k = 0;
    for (std::uint64_t j = 0; j < k; ++j) {
        const auto id = static_cast<std::int64_t>(ids[j]);
        if (id < 0 || static_cast<std::uint64_t>(id) >= vocab)
            throw value_error(detail::concat("top-k ids: id ", id, " at position ", j, " is outside [0, ", vocab, ")"),
                              "topk_ids", 0, j, static_cast<double>(id));
        const double lm = rollout_logprobs[j], lp = to_double(train_logprobs[id]);
        if (!(lm <= default_positive_tolerance) || std::isnan(lp) || lp > default_positive_tolerance)
            throw value_error(detail::concat("top-k: log-prob at position ", j, " is not a log-probability (", lm, ", ",
                                             lp, ")"),
                              "topk_logprobs", 0, j, lm);
        const double m = std::exp(lm), p = std::exp(lp);
        mu_k += m;
        pi_k += p;
        if (p > 0) kl_pm += p * (lp - lm);
        if (m > 0) kl_mp += m * (lm - lp);
        l1 += std::fabs(p - m);
    }
    const double rm = std::max(0.0, 1.0 - mu_k), rp = std::max(0.0, 1.0 - pi_k);
    auto term = [](double a, double b) {  // a log(a / b), 0 log 0 = 0
        if (a <= 0) return 0.0;
        if (b <= 0) return std::numeric_limits<double>::infinity();
        return a * std::log(a / b);
    };
    d.kl_train_rollout_lower = std::max(0.0, kl_pm + term(rp, rm));
    d.kl_rollout_train_lower = std::max(0.0, kl_mp + term(rm, rp));
    d.tv_low = 0.5 * (l1 + std::fabs(rp - rm));
    d.tv_high = 0.5 * (l1 + rp + rm);
    d.rollout_mass = mu_k;
    d.train_mass = pi_k;
    return d;
}

LOGRATIO_NAMESPACE_END
