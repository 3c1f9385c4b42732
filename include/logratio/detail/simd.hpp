#pragma once
// The handful of lane operations the kernels use, for an xsimd batch of
// doubles and for plain double (the scalar reference path). Kernels are
// written once against simd_ops<V> and instantiated for both.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "xsimd.hpp"

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

template <class V>
struct simd_ops;

/// |x| at or below this: the exp reduction's k = round(x / ln2) is 0
/// (0.34 / ln2 = 0.4905 < 1/2), so expm1_small(x) == expm1(x) bit for bit.
constexpr double expm1_small_bound = 0.34;

/// Scalar reference path: one lane.
template <>
struct simd_ops<double> {
    using value = double;
    using mask = bool;
    static constexpr std::size_t size = 1;
    static double load(const double* p) noexcept { return *p; }
    static double splat(double x) noexcept { return x; }
    static double select(bool c, double a, double b) noexcept { return c ? a : b; }
    static double abs(double x) noexcept { return std::fabs(x); }
    static double min(double a, double b) noexcept { return std::min(a, b); }
    static double max(double a, double b) noexcept { return std::max(a, b); }
    static double mul_add(double a, double b, double c) noexcept { return a * b + c; }
    static double expm1(double x) noexcept { return std::expm1(x); }
    static double expm1_split(double x, bool) noexcept { return std::expm1(x); }  // one lane: no split
    static double sub_where(bool m, double a, double b) noexcept { return m ? a - b : 0.0; }
    static double exp(double x) noexcept { return std::exp(x); }
    static double exp_nonpos(double x) noexcept { return std::exp(x); }
    static double sum(double x) noexcept { return x; }
    static double hmin(double x) noexcept { return x; }
    static double hmax(double x) noexcept { return x; }
    static bool none(bool m) noexcept { return !m; }
    static bool all(bool m) noexcept { return m; }
    static double min_where(double acc, bool m, double x) noexcept { return m ? std::min(acc, x) : acc; }
    static double max_where(double acc, bool m, double x) noexcept { return m ? std::max(acc, x) : acc; }
    static std::uint64_t count(bool m) noexcept { return m ? 1u : 0u; }
    static unsigned bits(bool m) noexcept { return m ? 1u : 0u; }
};

/// SIMD path: an xsimd batch of doubles for architecture A.
template <class A>
struct simd_ops<xsimd::batch<double, A>> {
    using value = xsimd::batch<double, A>;
    using mask = typename value::batch_bool_type;
    static constexpr std::size_t size = value::size;
    static value load(const double* p) noexcept { return value::load_aligned(p); }
    static value splat(double x) noexcept { return value(x); }
    static value select(const mask& c, const value& a, const value& b) noexcept { return xsimd::select(c, a, b); }
    static value abs(const value& x) noexcept { return xsimd::abs(x); }
    static value min(const value& a, const value& b) noexcept { return xsimd::min(a, b); }
    static value max(const value& a, const value& b) noexcept { return xsimd::max(a, b); }
    /// a * b + c written as a product and a sum, as in the scalar path -- not
    /// a promised fused multiply-add (std::fma / xsimd::fma): the compiler
    /// may contract it at FMA levels; the terms it accumulates are checked
    /// against the scalar path within SPEC's tolerance.
    static value mul_add(const value& a, const value& b, const value& c) noexcept { return a * b + c; }
    static value expm1(const value& x) noexcept { return expm1_clamped(x); }
    /// expm1 in three steps, for kernels that skip the outer two when every
    /// lane is small: expm1(x) == expm1_rebuild(expm1_small(expm1_reduce(x,
    /// two_k)), two_k) bit for bit, and for |x| <= expm1_small_bound (where
    /// the reduction's k is 0) == expm1_small(x).
    static value expm1_reduce(const value& x, value& two_k) noexcept { return exp_reduce<false>(x, two_k); }
    static value expm1_small(const value& r) noexcept { return expm1_series<false>(r); }
    static value expm1_rebuild(const value& em_r, const value& two_k) noexcept {
        return two_k * em_r + (two_k - value(1.0));
    }
    /// expm1(x) (x within the clamp range) through the three steps, the outer
    /// two only when `reduce` -- the caller's "some lane's |x| is above
    /// expm1_small_bound" (the same bits either way; one copy of the
    /// polynomial for both cases).
    static value expm1_split(const value& x, bool reduce) noexcept {
        value two_k(0.0), r = x;
        if (reduce) r = expm1_reduce(x, two_k);
        value em = expm1_small(r);
        if (reduce) em = expm1_rebuild(em, two_k);  // a branch (a select would rebuild every batch)
        return em;
    }
    /// a - b on the lanes of m, 0 elsewhere (one zero-masked instruction on AVX-512)
    static value sub_where(const mask& m, const value& a, const value& b) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) return value(_mm512_maskz_sub_pd(m, a, b));
#endif
        return xsimd::select(m, a - b, value(0.0));
    }
    /// exp over the whole double range (xsimd's; -inf gives 0)
    static value exp(const value& x) noexcept { return xsimd::exp(x); }
    /// all lanes of a mask false?
    static bool none(const mask& m) noexcept { return !xsimd::any(m); }
    /// all lanes of a mask true?
    static bool all(const mask& m) noexcept { return xsimd::all(m); }
    /// min(acc, x) on the lanes of m, acc elsewhere (one masked instruction on AVX-512)
    static value min_where(const value& acc, const mask& m, const value& x) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) return value(_mm512_mask_min_pd(acc, m, acc, x));
#endif
        return xsimd::select(m, xsimd::min(acc, x), acc);
    }
    static value max_where(const value& acc, const mask& m, const value& x) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) return value(_mm512_mask_max_pd(acc, m, acc, x));
#endif
        return xsimd::select(m, xsimd::max(acc, x), acc);
    }
    /// the lanes of a mask as bits (lane j in bit j)
    static unsigned bits(const mask& m) noexcept {
        using reg = typename mask::register_type;
        const reg r = m;
#if defined(__x86_64__) || defined(__i386__)
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) {
            return static_cast<unsigned>(r) & ((1u << size) - 1);
        } else if constexpr (std::is_base_of<xsimd::avx, A>::value) {
            return static_cast<unsigned>(_mm256_movemask_pd(r));
        } else if constexpr (std::is_base_of<xsimd::sse2, A>::value) {
            return static_cast<unsigned>(_mm_movemask_pd(r));
        } else
#endif
        {
            (void)r;
            alignas(64) bool b[size];
            m.store_aligned(b);
            unsigned c = 0;
            for (std::size_t i = 0; i < size; ++i) c |= (b[i] ? 1u : 0u) << i;
            return c;
        }
    }
    /// number of true lanes (a scalar popcount: keeps counting off the vector ports)
    static std::uint64_t count(const mask& m) noexcept {
        if constexpr (size == 2) {
            // two lanes: no popcnt instruction needed (the SSE2 baseline may lack it)
            static constexpr std::uint8_t ones[4] = {0, 1, 1, 2};
            return ones[bits(m) & 3];
        } else {
#if defined(__GNUC__) || defined(__clang__)
            return static_cast<std::uint64_t>(__builtin_popcount(bits(m)));
#else
            std::uint64_t c = 0;
            for (unsigned b = bits(m); b; b &= b - 1) ++c;
            return c;
#endif
        }
    }

    /// expm1(r) for |r| <= ln2/2 by its Taylor series to degree 12
    /// (truncation < 2e-16 relative): r + r^2 p(r). Fused: the
    /// multiply-adds as single FMAs; unfused: every product rounded, the
    /// arithmetic of the scalar path.
    template <bool Fused>
    static value expm1_series(const value& r) noexcept {
        const auto madd = [](const value& a, const value& b, const value& c) {
            if constexpr (Fused) return xsimd::fma(a, b, c);
            else return value(a * b + c);
        };
        // p(r) = sum_{i=0..10} r^i / (i+2)! by Estrin's scheme: dependency
        // depth 5 instead of Horner's 11 (the kernels were bound by this
        // chain's latency, not by the number of operations)
        const value r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
        const value q0 = madd(r, value(1.0 / 6.0), value(0.5));
        const value q1 = madd(r, value(1.0 / 120.0), value(1.0 / 24.0));
        const value q2 = madd(r, value(1.0 / 5040.0), value(1.0 / 720.0));
        const value q3 = madd(r, value(1.0 / 362880.0), value(1.0 / 40320.0));
        const value q4 = madd(r, value(1.0 / 39916800.0), value(1.0 / 3628800.0));
        const value s0 = madd(r2, q1, q0);
        const value s1 = madd(r2, q3, q2);
        const value s2 = madd(r2, value(1.0 / 479001600.0), q4);
        const value p = madd(r8, s2, madd(r4, s1, s0));
        return madd(r2, p, r);
    }

    /// The reduction of the exps below, without a division or an integer
    /// conversion: x = k ln2 + r with |r| <= ln2/2 (|x| <= 709); returns r
    /// and sets two_k = 2^k from the exponent bits. For |x| < 0.3466 (k = 0)
    /// r is x exactly.
    template <bool Fused>
    static value exp_reduce(const value& x, value& two_k) noexcept {
        using ubatch = xsimd::batch<std::uint64_t, A>;
        const auto madd = [](const value& a, const value& b, const value& c) {
            if constexpr (Fused) return xsimd::fma(a, b, c);
            else return value(a * b + c);
        };
        const value shifter(6755399441055744.0);  // 1.5 * 2^52: rounds to integer, k in the low bits
        const value kd_shifted = madd(x, value(1.4426950408889634), shifter);
        const value k = kd_shifted - shifter;
        const value r = madd(k, value(-1.90821492927058770002e-10), madd(k, value(-6.93147180369123816490e-01), x));
        const ubatch bits = xsimd::bitwise_cast<ubatch>(kd_shifted);
        two_k = xsimd::bitwise_cast<value>((bits << 52) + ubatch(std::uint64_t(1023) << 52));
        return r;
    }
    /// expm1(r) of the reduced argument, and 2^k (exp_reduce)
    template <bool Fused>
    static value expm1_reduced(const value& x, value& two_k) noexcept {
        return expm1_series<Fused>(exp_reduce<Fused>(x, two_k));
    }

    /// expm1(x) for |x| <= 20 (the kernels' clamp range), unfused (the
    /// panel and correction kernels see the scalar path's per-token terms):
    /// expm1(x) = 2^k expm1(r) + (2^k - 1), exact for k = 0 so tiny x keep
    /// full relative accuracy. Measured against std::expm1 in the tests.
    static value expm1_clamped(const value& x) noexcept {
        value two_k;
        const value em_r = expm1_reduced<false>(x, two_k);
        return expm1_rebuild(em_r, two_k);
    }
    /// exp(x) for x <= 0 (-inf included), fused (xsimd's exp divides and
    /// converts to integers; that dominated the logits kernel). Below -708
    /// the result is 0 (exp there is subnormal: < 1e-307 next to the row
    /// maximum's exp(0) = 1). Measured against std::exp in the tests.
    static value exp_nonpos(const value& x) noexcept {
        value two_k;
        const value e_r = expm1_reduced<true>(xsimd::max(x, value(-709.0)), two_k) + value(1.0);  // -inf: k in range
        return xsimd::select(x < value(-708.0), value(0.0), two_k * e_r);
    }
    static double sum(const value& x) noexcept { return xsimd::hadd(x); }
    static double hmin(const value& x) noexcept {
        alignas(A::alignment()) double t[size];
        x.store_aligned(t);
        double r = t[0];
        for (std::size_t i = 1; i < size; ++i) r = std::min(r, t[i]);
        return r;
    }
    static double hmax(const value& x) noexcept {
        alignas(A::alignment()) double t[size];
        x.store_aligned(t);
        double r = t[0];
        for (std::size_t i = 1; i < size; ++i) r = std::max(r, t[i]);
        return r;
    }
};

}  // namespace detail
LOGRATIO_NAMESPACE_END
