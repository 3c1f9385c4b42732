// Google Benchmark: measured floors behind the targets of issue 21 that the
// library does not meet (README, "Where the limits are"). Not library code:
// two experiments, each against the library's own kernel in the same binary
// on the same data (2^25 float32 tokens of synthetic.hpp, 80% mask), built
// for x86-64-v4 only (AVX-512 BW).
//
// 1. The panel's hot loop in mixed precision (float32 lanes, 16 tokens per
//    vector), three variants:
//      0  float32 everywhere except the sums of l_T and l_E: no exactness
//         test, no exact sum of delta -- an upper bound, not SPEC-safe;
//      1  + delta's exactness per lane (TwoSum error = 0) and the sum of
//         delta in float64 -- the exact-safe design before its repairs
//         (inexact lanes only counted);
//      2  as 1, a batch with an inexact lane through the float64 step.
//    Against accumulate_panel and the read roofline (roofline.hpp).
// 3. The correction's short cut in float32 lanes, weights and mask written,
//    against correct() and the traffic roofline (with plain and with
//    non-temporal stores), at full size and over 2^16 tokens held in L2:
//      0, 1  as in 1 (not SPEC-safe);
//      2     float32 tail of k3, float64 k3 / e / weight and sums, batches
//            with an inexact delta repaired by a float64 series;
//      3     2 with non-temporal stores;  4  2 with an all-float32 weight;
//      5     no repair: TwoSum's error rebuilds the float64 delta;
//      6     5 with e by the library's float64 series (verl-exact weights).
//    Results and the error bounds: bench/FLOORS.md, the correction.
// 2. The fused quantiles' per-token classification: the library's collector
//    (quantile_collector: staging + scalar histogram loop) against a SIMD
//    classifier (16-bit bucket keys, 32 per vector; a 6-step branch-free
//    search of up to 63 bucket bounds from the plan; a gap histogram by
//    positional popcount; inside tokens by compression), both over the same
//    deltas held in L2. Reports ns per token.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include <logratio/logratio.hpp>
#include <logratio/detail/token_terms_f32.hpp>
#include <logratio/panel/panel_quantiles.hpp>

#include "roofline.hpp"
#include "synthetic.hpp"
#include "token_options.hpp"

#if defined(__AVX512BW__)
namespace {

constexpr std::size_t row = 1024;
const bench::tokens& data() { return bench::synthetic(std::size_t(1) << 25); }

// ---------------------------------------------------------------- 1 ----
inline __m512d lo_pd(__m512 x) { return _mm512_cvtps_pd(_mm512_castps512_ps256(x)); }
inline __m512d hi_pd(__m512 x) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
}
inline __m512 abs_ps(__m512 x) { return _mm512_abs_ps(x); }

inline void flush(__m512d& D, __m512 f) { D = _mm512_add_pd(D, _mm512_add_pd(lo_pd(f), hi_pd(f))); }

/// float32 partial sums of 8 batches per lane, then flushed to float64.
struct f32_sums {
    __m512 abs = _mm512_setzero_ps(), k3 = abs, tv = abs, e2 = abs, ed = abs, dk2 = abs, ek2 = abs;
};
/// What both float32 loops keep: the float64 sums of l_T, l_E and (variants
/// >= 1) delta, the guard's max, delta's extremes, the inexact batches.
struct common_sums {
    __m512d t0 = _mm512_setzero_pd(), t1 = t0, r0 = t0, r1 = t0, d0 = t0, d1 = t0;
    __m512 mn = _mm512_set1_ps(INFINITY), mx = _mm512_set1_ps(-INFINITY), top = _mm512_set1_ps(-INFINITY);
    std::uint64_t inexact = 0;
};
struct mixed_state : common_sums {
    __m512d abs = _mm512_setzero_pd(), k3 = abs, tv = abs, e2 = abs, ed = abs, dk2 = abs, ek2 = abs, fallback = abs;
    std::uint64_t above[4] = {};
};
struct batch16 {
    __m512 t, r, d;  // d = t - r rounded to float32, 0 on masked-out lanes
    __mmask16 k;     // masked in
    bool inexact;    // a masked-in lane whose d is not exact (variants >= 1)
};

/// One batch's loads and the common sums (TwoSum(t, -r): its error is 0 iff
/// d is exact).
template <int Var>
inline batch16 load_batch(const float* tp, const float* rp, const std::uint8_t* mp, common_sums& S) {
    batch16 b{_mm512_loadu_ps(tp), _mm512_loadu_ps(rp), _mm512_setzero_ps(), 0, false};
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mp));
    b.k = _mm_test_epi8_mask(m, m);
    S.t0 = _mm512_mask_add_pd(S.t0, static_cast<__mmask8>(b.k), S.t0, lo_pd(b.t));
    S.t1 = _mm512_mask_add_pd(S.t1, static_cast<__mmask8>(b.k >> 8), S.t1, hi_pd(b.t));
    S.r0 = _mm512_mask_add_pd(S.r0, static_cast<__mmask8>(b.k), S.r0, lo_pd(b.r));
    S.r1 = _mm512_mask_add_pd(S.r1, static_cast<__mmask8>(b.k >> 8), S.r1, hi_pd(b.r));
    S.top = _mm512_max_ps(S.top, _mm512_maskz_max_ps(b.k, b.t, b.r));
    b.d = _mm512_maskz_sub_ps(b.k, b.t, b.r);
    if constexpr (Var >= 1) {
        S.d0 = _mm512_add_pd(S.d0, lo_pd(b.d));
        S.d1 = _mm512_add_pd(S.d1, hi_pd(b.d));
        const __m512 bb = _mm512_sub_ps(b.d, b.t);
        const __m512 err = _mm512_sub_ps(_mm512_sub_ps(b.t, _mm512_sub_ps(b.d, bb)), _mm512_add_ps(b.r, bb));
        b.inexact = _mm512_mask_cmp_ps_mask(b.k, err, _mm512_setzero_ps(), _CMP_NEQ_UQ) != 0;
        S.inexact += b.inexact;
    }
    S.mn = _mm512_mask_min_ps(S.mn, b.k, S.mn, b.d);
    S.mx = _mm512_mask_max_ps(S.mx, b.k, S.mx, b.d);
    return b;
}

/// batch(i) over every 16-token batch of d with the kernels' software
/// prefetch, end_block() after every 8 batches (the float32 sums' flush).
template <class B, class E>
inline void for_each_batch16(const bench::tokens& d, B&& batch, E&& end_block, std::size_t n = 0) {
    if (n == 0) n = d.train.size();  // (n: a multiple of 128 tokens)
    for (std::size_t i = 0; i < n;) {
        for (int b = 0; b < 8; ++b, i += 16) {
            _mm_prefetch(reinterpret_cast<const char*>(d.train.data() + i + 2048), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(d.rollout.data() + i + 2048), _MM_HINT_T0);
            if (i % 64 == 0) _mm_prefetch(reinterpret_cast<const char*>(d.mask.data() + i + 2048), _MM_HINT_T0);
            batch(i);
        }
        end_block();
    }
}

/// The float64 step's work on one 16-token batch (two 8-lane degree-12
/// expm1 series and sums): the cost variant 2 pays per inexact batch.
__attribute__((noinline)) void double_step(const float* t, const float* r, __m512d& s) {
    for (int h = 0; h < 2; ++h) {
        const __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(t + 8 * h)),
                                        _mm512_cvtps_pd(_mm256_loadu_ps(r + 8 * h)));
        __m512d p = _mm512_set1_pd(1.0 / 479001600);
        for (int j = 11; j >= 1; --j) p = _mm512_fmadd_pd(p, d, _mm512_set1_pd(1.0 / j));
        s = _mm512_add_pd(_mm512_fmadd_pd(d, d, _mm512_mul_pd(p, d)), _mm512_add_pd(s, _mm512_abs_pd(d)));
    }
}

/// k3 = expm1(d) - d = d^2 (1/2 + d/6 + ... + d^7/9!) in float32 (Estrin).
inline __m512 k3_ps(__m512 d) {
    const __m512 d2 = _mm512_mul_ps(d, d), d4 = _mm512_mul_ps(d2, d2);
    auto c = [](double x) { return _mm512_set1_ps(static_cast<float>(x)); };
    const __m512 q0 = _mm512_fmadd_ps(d, c(1.0 / 6), c(0.5)), q1 = _mm512_fmadd_ps(d, c(1.0 / 120), c(1.0 / 24));
    const __m512 q2 = _mm512_fmadd_ps(d, c(1.0 / 5040), c(1.0 / 720));
    const __m512 q3 = _mm512_fmadd_ps(d, c(1.0 / 362880), c(1.0 / 40320));
    const __m512 p = _mm512_fmadd_ps(d4, _mm512_fmadd_ps(d2, q3, q2), _mm512_fmadd_ps(d2, q1, q0));
    return _mm512_mul_ps(d2, p);
}

template <int Var>
inline void mixed_batch(const float* tp, const float* rp, const std::uint8_t* mp, mixed_state& S, f32_sums& F) {
    const batch16 b = load_batch<Var>(tp, rp, mp, S);
    const __m512 d = b.d, ad = abs_ps(d);
    const __mmask16 k = b.k;
    if constexpr (Var == 2)
        if (b.inexact) double_step(tp, rp, S.fallback);
    const float thr[4] = {1e-3f, 1e-2f, 1e-1f, 1.0f};
    for (int j = 0; j < 4; ++j)
        S.above[j] += static_cast<unsigned>(__builtin_popcount(_mm512_cmp_ps_mask(ad, _mm512_set1_ps(thr[j]), _CMP_GT_OQ)));
    const __m512 k3 = k3_ps(d), e = _mm512_add_ps(d, k3);
    F.abs = _mm512_add_ps(F.abs, ad);
    F.k3 = _mm512_add_ps(F.k3, k3);
    F.tv = _mm512_add_ps(F.tv, abs_ps(e));
    F.e2 = _mm512_fmadd_ps(e, e, F.e2);
    F.ed = _mm512_fmadd_ps(e, d, F.ed);
    const __m512 dk = _mm512_sub_ps(d, _mm512_set1_ps(1e-3f)), ek = _mm512_sub_ps(e, _mm512_set1_ps(1.0005e-3f));
    F.dk2 = _mm512_mask3_fmadd_ps(dk, dk, F.dk2, k);
    F.ek2 = _mm512_mask3_fmadd_ps(ek, ek, F.ek2, k);
}

template <int Var>
__attribute__((noinline)) mixed_state mixed_panel(const bench::tokens& d) {
    mixed_state S;
    f32_sums F;
    for_each_batch16(
        d, [&](std::size_t i) { mixed_batch<Var>(d.train.data() + i, d.rollout.data() + i, d.mask.data() + i, S, F); },
        [&] {
            flush(S.abs, F.abs), flush(S.k3, F.k3), flush(S.tv, F.tv), flush(S.e2, F.e2);
            flush(S.ed, F.ed), flush(S.dk2, F.dk2), flush(S.ek2, F.ek2);
            F = f32_sums{};
        });
    return S;
}

template <int Var>
void mixed_hot_loop(benchmark::State& st) {
    const auto& d = data();
    mixed_state S;
    for (auto _ : st) {
        S = mixed_panel<Var>(d);
        benchmark::DoNotOptimize(S);
    }
    st.counters["inexact_batch_share"] = static_cast<double>(S.inexact) / static_cast<double>(d.train.size() / 16);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size() * 9));
}
BENCHMARK_TEMPLATE(mixed_hot_loop, 0)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_hot_loop, 1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_hot_loop, 2)->UseRealTime()->Unit(benchmark::kMillisecond);

void panel_library(benchmark::State& st) {
    const auto& d = data();
    auto v = logratio::padded(d.train, d.rollout, d.mask, d.train.size() / row, row);
    for (auto _ : st) {
        auto acc = logratio::accumulate_panel(v, {}, 1);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size() * 9));
}
BENCHMARK(panel_library)->UseRealTime()->Unit(benchmark::kMillisecond);

/// The library's panel over the first 2^16 tokens (held in L2): compute
/// only, the figure the float32 loop was tuned on (ns per token).
void panel_library_l2(benchmark::State& st) {
    const auto& d = data();
    constexpr std::size_t n = std::size_t(1) << 16;
    auto v = logratio::paired_view<float, std::uint8_t>::padded(d.train.data(), d.rollout.data(), d.mask.data(),
                                                                 n / row, row);
    for (auto _ : st) {
        auto acc = logratio::accumulate_panel(v, {}, 1);
        benchmark::DoNotOptimize(acc);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}
BENCHMARK(panel_library_l2)->UseRealTime()->Unit(benchmark::kMicrosecond);

void read_roofline(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) benchmark::DoNotOptimize(bench::read_tokens(d, 0, d.train.size()));
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size() * 9));
}
BENCHMARK(read_roofline)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------- 3 ----
// The correction's short cut (token TIS C = 2, token_k1 band, token_k3
// rejection: every token inside the interval, so no clamp, count or
// rejection acts) in float32 lanes, weights and mask written; variants as
// in 1 (0: no exactness; 1: + exact delta test and float64 sum of delta).
struct correction_state : common_sums {
    __m512d k3 = _mm512_setzero_pd(), d2 = k3, k32 = k3, e2 = k3;
    __m512 k3min = _mm512_set1_ps(INFINITY);
    __m512d sd[2] = {k3, k3}, se[2] = {k3, k3}, fallback = k3;  ///< variants >= 2: sums of delta, w - 1, repairs
    std::uint64_t outside = 0;
};
struct correction_f32 {
    __m512 k3 = _mm512_setzero_ps(), d2 = k3, k32 = k3, e2 = k3;
};

template <int Var>
inline void correction_batch(const float* tp, const float* rp, const std::uint8_t* mp, float* w, std::uint8_t* mo,
                             correction_state& S, correction_f32& F) {
    const batch16 b = load_batch<Var>(tp, rp, mp, S);
    const __m512 d = b.d;
    const __mmask16 k = b.k;
    // the short cut's interval (k1 band log 0.5 .. log 2, k3 <= 0.01: |delta| <~ 0.14)
    const __mmask16 in = _mm512_cmp_ps_mask(d, _mm512_set1_ps(-0.14f), _CMP_GE_OQ) &
                         _mm512_cmp_ps_mask(d, _mm512_set1_ps(0.14f), _CMP_LE_OQ);
    S.outside += in != 0xffff;
    const __m512 k3 = k3_ps(d), e = _mm512_add_ps(d, k3);
    F.k3 = _mm512_add_ps(F.k3, k3);
    F.d2 = _mm512_fmadd_ps(d, d, F.d2);                   // k1's sum of squares
    S.k3min = _mm512_mask_min_ps(S.k3min, k, S.k3min, k3);  // k3's minimum and sum of squares
    F.k32 = _mm512_fmadd_ps(k3, k3, F.k32);
    F.e2 = _mm512_fmadd_ps(e, e, F.e2);  // sum (w - 1)^2
    _mm512_storeu_ps(w, _mm512_maskz_add_ps(k, e, _mm512_set1_ps(1.0f)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mo), _mm_and_si128(_mm_movm_epi8(k), _mm_set1_epi8(1)));
}

/// Variant 2, the SPEC-safe design (bench/FLOORS.md, correction section):
/// float32 lanes only where their result is exact or feeds a float64 sum
/// with a proven bound --
///  * dh = fl32(t - r), exact on the lanes exact_delta_lanes() passes (two
///    back differences; detail/token_terms_f32.hpp), where it equals the
///    float64 kernel's delta bit for bit;
///  * the short cut's interval test on dh against the float32 thresholds
///    rounded inwards (A up, B down): for a float dh, dh >= A_up <=> dh >= A
///    and dh <= B_down <=> dh <= B exactly, so the decision is the float64
///    one; a batch with an inexact or outside lane goes to the library's
///    full float64 step (here counted, not run: the data has none outside);
///  * the tail q(dh) = (expm1(d) - d - d^2/2) / d^3 in float32 (<= 2u + u/8
///    relative, token_terms_f32.hpp), then in float64 k3 = d^2 (1/2 + d q),
///    e = d + k3 (fma), w = 1 + e: e's relative error <= (|d| 2^-24 ... )
///    see FLOORS.md -- below 2^-50 + 2^-26 |d|^2 / 2, so fl32(w) is the
///    correctly rounded float32 exp(d) except within that of a rounding
///    midpoint; every sum (k3, k3^2, d^2, w - 1, (w - 1)^2, d, l_T, l_E) in
///    float64.
template <bool Stream, bool F32Weight = false>
inline void correction_batch_safe(const float* tp, const float* rp, const std::uint8_t* mp, float* w,
                                  std::uint8_t* mo, correction_state& S, const __m512 lo, const __m512 hi) {
    const batch16 b = load_batch<0>(tp, rp, mp, S);  // common sums (l_T, l_E in float64), dh
    const __m512 d = b.d;
    const __mmask16 k = b.k;
    const __mmask16 exact = logratio::detail::exact_delta_lanes(b.t, b.r, d, k);
    const __mmask16 in = _mm512_mask_cmp_ps_mask(exact, d, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(d, hi, _CMP_LE_OQ);
    S.outside += in != k;
    if (in != k) double_step(tp, rp, S.fallback);  // the repair: 16 lanes of the float64 series
    const __m512 q = logratio::detail::k3_tail_f32(d);
    __m512d wh[2] = {};
    for (int h = 0; h < 2; ++h) {
        const __m512d dd = h ? hi_pd(d) : lo_pd(d), qq = h ? hi_pd(q) : lo_pd(q);
        const __m512d d2 = _mm512_mul_pd(dd, dd);
        const __m512d k3 = _mm512_mul_pd(d2, _mm512_fmadd_pd(dd, qq, _mm512_set1_pd(0.5)));
        const __m512d e = _mm512_add_pd(dd, k3);
        S.sd[h] = _mm512_add_pd(S.sd[h], dd);  // sum of delta (exact lanes: the float64 deltas)
        S.d2 = _mm512_add_pd(S.d2, d2);  // k1's sum of squares
        S.k3 = _mm512_add_pd(S.k3, k3);
        S.k32 = _mm512_fmadd_pd(k3, k3, S.k32);
        S.e2 = _mm512_fmadd_pd(e, e, S.e2);  // sum (w - 1)^2
        S.se[h] = _mm512_add_pd(S.se[h], e);  // sum (w - 1)
        if constexpr (!F32Weight) wh[h] = _mm512_add_pd(e, _mm512_set1_pd(1.0));
    }
    // (k3's minimum: from delta's extremes at the end, as the library's short cut derives it)
    __m512 wf;
    if constexpr (F32Weight) {  // w = fl32(1 + fl32(d + fl32(d^2 p))): <= 2.36u relative (FLOORS.md), not rounded once
        const __m512 k3 = logratio::detail::k3_f32(d, q);
        wf = _mm512_add_ps(_mm512_add_ps(d, k3), _mm512_set1_ps(1.0f));
    } else {  // w = fl32(1 + e) from the float64 e
        wf = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(wh[0])), _mm512_cvtpd_ps(wh[1]), 1);
    }
    const __m128i m01 = _mm_and_si128(_mm_movm_epi8(k), _mm_set1_epi8(1));
    if constexpr (Stream) {  // non-temporal: no read for ownership of the output lines (w, mo aligned)
        _mm512_stream_ps(w, _mm512_maskz_mov_ps(k, wf));
        _mm_stream_si128(reinterpret_cast<__m128i*>(mo), m01);
    } else {
        _mm512_storeu_ps(w, _mm512_maskz_mov_ps(k, wf));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(mo), m01);
    }
}

/// Variant 5, the SPEC-safe design without a repair branch: TwoSum's
/// error r_d of dh = fl32(t - r) is exact, so fl64(dh + r_d) is the float64
/// kernel's delta bit for bit on every lane; the tail q(dh) keeps its bound
/// on inexact lanes (dh within u |d| of d: u/8 relative on q); the interval
/// test on dh against thresholds one float ulp inside the float64 interval
/// (a lane inside by this test is inside by the float64 one; the few within
/// an ulp of a bound go to the full step, counted here).
/// Variant 6: as 5, with e = expm1(d) by the library's float64 series (no
/// reduction: |d| <= 0.34) instead of the float32 tail -- the weight then
/// fl32 of a float64-accurate e, as verl's bit-identical weights need.
template <bool Series = false>
inline void correction_batch_twosum(const float* tp, const float* rp, const std::uint8_t* mp, float* w,
                                    std::uint8_t* mo, correction_state& S, const __m512 lo, const __m512 hi) {
    const batch16 b = load_batch<0>(tp, rp, mp, S);
    const __m512 d = b.d;
    const __mmask16 k = b.k;
    const __m512 nr = _mm512_maskz_sub_ps(k, _mm512_setzero_ps(), b.r);  // -r (0 on masked-out lanes)
    const __m512 tk = _mm512_maskz_mov_ps(k, b.t);
    const __m512 bb = _mm512_sub_ps(d, tk);  // TwoSum(t, -r): err = (t - (d - bb)) + (-r - bb)
    const __m512 err = _mm512_add_ps(_mm512_sub_ps(tk, _mm512_sub_ps(d, bb)), _mm512_sub_ps(nr, bb));
    const __mmask16 in = _mm512_cmp_ps_mask(d, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(d, hi, _CMP_LE_OQ);
    S.outside += in != 0xffff;
    const __m512 q = Series ? d : logratio::detail::k3_tail_f32(d);
    __m512d wh[2];
    for (int h = 0; h < 2; ++h) {
        const __m512d dd = _mm512_add_pd(h ? hi_pd(d) : lo_pd(d), h ? hi_pd(err) : lo_pd(err));  // exact delta
        const __m512d d2 = _mm512_mul_pd(dd, dd);
        __m512d k3, e;
        if constexpr (Series) {
            using B = xsimd::batch<double, xsimd::avx512bw>;
            e = logratio::detail::simd_ops<B>::expm1_split(B(dd), false);
            k3 = _mm512_sub_pd(e, dd);
        } else {
            const __m512d qq = h ? hi_pd(q) : lo_pd(q);
            k3 = _mm512_mul_pd(d2, _mm512_fmadd_pd(dd, qq, _mm512_set1_pd(0.5)));
            e = _mm512_add_pd(dd, k3);
        }
        S.sd[h] = _mm512_add_pd(S.sd[h], dd);
        S.d2 = _mm512_add_pd(S.d2, d2);
        S.k3 = _mm512_add_pd(S.k3, k3);
        S.k32 = _mm512_fmadd_pd(k3, k3, S.k32);
        S.e2 = _mm512_fmadd_pd(e, e, S.e2);
        S.se[h] = _mm512_add_pd(S.se[h], e);
        wh[h] = _mm512_add_pd(e, _mm512_set1_pd(1.0));
    }
    const __m512 wf = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(wh[0])), _mm512_cvtpd_ps(wh[1]), 1);
    _mm512_storeu_ps(w, _mm512_maskz_mov_ps(k, wf));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mo), _mm_and_si128(_mm_movm_epi8(k), _mm_set1_epi8(1)));
}

template <int Var>
__attribute__((noinline)) correction_state mixed_correction_pass(const bench::tokens& d, float* w, std::uint8_t* mo,
                                                                  std::size_t n = 0) {
    correction_state S;
    correction_f32 F;
    // the short cut's interval of bench::token_options(), rounded inwards to float
    const __m512 lo = _mm512_set1_ps(std::nextafter(static_cast<float>(-0.14), 0.0f));
    const __m512 hi = _mm512_set1_ps(std::nextafter(static_cast<float>(0.14), 0.0f));
    // variant 5: one more float ulp inside (dh within half an ulp of the float64 delta)
    const __m512 lo5 = _mm512_set1_ps(std::nextafter(std::nextafter(static_cast<float>(-0.14), 0.0f), 0.0f));
    const __m512 hi5 = _mm512_set1_ps(std::nextafter(std::nextafter(static_cast<float>(0.14), 0.0f), 0.0f));
    for_each_batch16(
        d,
        [&](std::size_t i) {
            if constexpr (Var >= 5)
                correction_batch_twosum<Var == 6>(d.train.data() + i, d.rollout.data() + i, d.mask.data() + i, w + i, mo + i,
                                        S, lo5, hi5);
            else if constexpr (Var >= 2)
                correction_batch_safe<Var == 3, Var == 4>(d.train.data() + i, d.rollout.data() + i, d.mask.data() + i, w + i, mo + i, S,
                                      lo, hi);
            else
                correction_batch<Var>(d.train.data() + i, d.rollout.data() + i, d.mask.data() + i, w + i, mo + i, S,
                                      F);
        },
        [&] {
            if constexpr (Var < 2) {
                flush(S.k3, F.k3), flush(S.d2, F.d2), flush(S.k32, F.k32), flush(S.e2, F.e2);
                F = correction_f32{};
            }
        },
        n);
    return S;
}

/// 64-byte aligned (variant 3's and the streaming roofline's stores).
template <class X>
struct aligned_array {
    std::unique_ptr<X[], void (*)(void*)> p;
    explicit aligned_array(std::size_t n)
        : p(static_cast<X*>(std::aligned_alloc(64, (n * sizeof(X) + 63) / 64 * 64)), std::free) {}
    X* data() { return p.get(); }
};
struct outputs {
    aligned_array<float> w;
    aligned_array<std::uint8_t> mask;
    explicit outputs(std::size_t n) : w(n), mask(n) {}
};
/// The outputs, written once before any timing (their pages faulted in).
outputs& out() {
    static outputs o = [] {
        outputs x(data().train.size());
        bench::move_tokens(data(), x.w.data(), x.mask.data(), 0, data().train.size());
        return x;
    }();
    return o;
}

template <int Var>
void mixed_correction(benchmark::State& st) {
    const auto& d = data();
    correction_state S;
    for (auto _ : st) {
        S = mixed_correction_pass<Var>(d, out().w.data(), out().mask.data());
        benchmark::DoNotOptimize(S);
        benchmark::ClobberMemory();
    }
    st.counters["inexact_batch_share"] = static_cast<double>(S.inexact) / static_cast<double>(d.train.size() / 16);
    st.counters["outside_batch_share"] = static_cast<double>(S.outside) / static_cast<double>(d.train.size() / 16);
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK_TEMPLATE(mixed_correction, 0)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 4)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 5)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(mixed_correction, 6)->UseRealTime()->Unit(benchmark::kMillisecond);

/// The same loops over the first 2^16 tokens (inputs and outputs held in
/// L2): compute only, the figure the loop's operations bound.
constexpr std::size_t l2_tokens = std::size_t(1) << 16;
template <int Var>
void mixed_correction_l2(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) {
        auto S = mixed_correction_pass<Var>(d, out().w.data(), out().mask.data(), l2_tokens);
        benchmark::DoNotOptimize(S);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * l2_tokens));
}
BENCHMARK_TEMPLATE(mixed_correction_l2, 0)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(mixed_correction_l2, 1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(mixed_correction_l2, 2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(mixed_correction_l2, 4)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(mixed_correction_l2, 5)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(mixed_correction_l2, 6)->UseRealTime()->Unit(benchmark::kMicrosecond);

void correction_library_l2(benchmark::State& st) {
    const auto& d = data();
    auto v = logratio::paired_view<float, std::uint8_t>::padded(d.train.data(), d.rollout.data(), d.mask.data(),
                                                                 l2_tokens / row, row);
    const auto o = bench::token_options();
    for (auto _ : st) {
        auto r = logratio::correct(v, o, out().w.data(), out().mask.data(), 1);
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * l2_tokens));
}
BENCHMARK(correction_library_l2)->UseRealTime()->Unit(benchmark::kMicrosecond);

void traffic_roofline_l2(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) {
        bench::move_tokens(d, out().w.data(), out().mask.data(), 0, l2_tokens);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * l2_tokens));
}
BENCHMARK(traffic_roofline_l2)->UseRealTime()->Unit(benchmark::kMicrosecond);

void correction_library(benchmark::State& st) {
    const auto& d = data();
    auto v = logratio::padded(d.train, d.rollout, d.mask, d.train.size() / row, row);
    const auto o = bench::token_options();
    for (auto _ : st) {
        auto r = logratio::correct(v, o, out().w.data(), out().mask.data(), 1);
        benchmark::DoNotOptimize(r);
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK(correction_library)->UseRealTime()->Unit(benchmark::kMillisecond);

void traffic_roofline(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) {
        bench::move_tokens(d, out().w.data(), out().mask.data(), 0, d.train.size());
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK(traffic_roofline)->UseRealTime()->Unit(benchmark::kMillisecond);

/// The same traffic with non-temporal stores of the outputs (no read for
/// ownership: 14 bytes/token move instead of 19).
void traffic_roofline_stream(benchmark::State& st) {
    const auto& d = data();
    float* w = out().w.data();
    std::uint8_t* mo = out().mask.data();
    for (auto _ : st) {
        for (std::size_t i = 0; i < d.train.size(); i += 16) {
            const __m512 t = _mm512_loadu_ps(d.train.data() + i), r = _mm512_loadu_ps(d.rollout.data() + i);
            const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d.mask.data() + i));
            _mm512_stream_ps(w + i, _mm512_sub_ps(t, r));
            _mm_stream_si128(reinterpret_cast<__m128i*>(mo + i), _mm_min_epu8(m, _mm_set1_epi8(1)));
        }
        _mm_sfence();
        benchmark::ClobberMemory();
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK(traffic_roofline_stream)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------- 2 ----
constexpr std::size_t block = 1024;  // tokens per staged block (the collector's)
constexpr std::size_t ring = 16;     // blocks of deltas cycled through (128 KiB: L2)

/// Masked-in deltas of the first ring * block tokens (masked-out: +0, as the kernel hands them).
std::vector<double> ring_deltas(const bench::tokens& d) {
    std::vector<double> out(ring * block);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = d.mask[i] ? static_cast<double>(d.train[i]) - static_cast<double>(d.rollout[i]) : 0.0;
    return out;
}

/// Sorted bounds of the plan's flagged runs in ordered 16-bit bucket keys:
/// interval idx = #(bounds <= key), odd = a flagged run (gathered), even a
/// gap (counted); the buckets of -0 and +0 are gaps of their own (an empty
/// run between two adjacent gaps keeps the parity).
std::vector<std::uint16_t> interval_bounds(const std::pmr::vector<std::uint8_t>& flag) {
    std::vector<std::uint16_t> b;
    for (std::uint32_t k = 1; k < flag.size(); ++k) {
        const bool cut = k == 0x7fff || k == 0x8000 || k == 0x8001;
        if (flag[k] != flag[k - 1]) b.push_back(static_cast<std::uint16_t>(k));
        else if (cut && !flag[k]) b.insert(b.end(), 2, static_cast<std::uint16_t>(k));
    }
    if (flag[0]) b.insert(b.begin(), 0);
    return b;
}

/// Per-bit counts of 32-bit one-hot vectors (Harley-Seal carry-save adders
/// over 16 vectors, then a positional count of the carry-out).
struct gap_counter {
    __m512i ones = _mm512_setzero_si512(), twos = ones, fours = ones, eights = ones, in[16];
    int queued = 0;
    std::uint64_t count[32] = {};
    static void csa(__m512i& h, __m512i& l, __m512i a, __m512i b, __m512i c) {
        l = _mm512_ternarylogic_epi32(a, b, c, 0x96);
        h = _mm512_ternarylogic_epi32(a, b, c, 0xe8);
    }
    void add(__m512i v) {
        in[queued++] = v;
        if (queued < 16) return;
        queued = 0;
        __m512i ta, tb, fa, fb, ea, eb, sixteens;
        csa(ta, ones, ones, in[0], in[1]), csa(tb, ones, ones, in[2], in[3]), csa(fa, twos, twos, ta, tb);
        csa(ta, ones, ones, in[4], in[5]), csa(tb, ones, ones, in[6], in[7]), csa(fb, twos, twos, ta, tb);
        csa(ea, fours, fours, fa, fb);
        csa(ta, ones, ones, in[8], in[9]), csa(tb, ones, ones, in[10], in[11]), csa(fa, twos, twos, ta, tb);
        csa(ta, ones, ones, in[12], in[13]), csa(tb, ones, ones, in[14], in[15]), csa(fb, twos, twos, ta, tb);
        csa(eb, fours, fours, fa, fb);
        csa(sixteens, eights, eights, ea, eb);
        for (int p = 0; p < 32; ++p)
            count[p] += 16u * static_cast<unsigned>(__builtin_popcount(
                                  _mm512_test_epi32_mask(sixteens, _mm512_set1_epi32(static_cast<int>(1u << p)))));
    }
};

struct interval_classifier {
    __m512i lo[6], hi[6];  // step s's table: bounds[i + step - 1] (0xffff past the end)
    explicit interval_classifier(const std::vector<std::uint16_t>& bounds) {
        const int steps[6] = {32, 16, 8, 4, 2, 1};
        for (int s = 0; s < 6; ++s) {
            alignas(64) std::uint16_t t[64];
            for (int i = 0; i < 64; ++i) {
                const std::size_t j = static_cast<std::size_t>(i + steps[s] - 1);
                t[i] = j < bounds.size() ? bounds[j] : 0xffff;
            }
            lo[s] = _mm512_load_si512(t);
            hi[s] = _mm512_load_si512(t + 32);
        }
    }
    /// Ordered 16-bit keys (delta_buckets) of 32 deltas.
    static __m512i keys(const double* x) {
        const __m512d scale = _mm512_set1_pd(logratio::detail::delta_buckets::scale);
        __m256 f[4];
        for (int q = 0; q < 4; ++q) f[q] = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_loadu_pd(x + 8 * q), scale));
        const __m512i z0 = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(f[0]), f[1], 1));
        const __m512i z1 = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(f[2]), f[3], 1));
        alignas(64) std::uint16_t odd[32];
        for (int i = 0; i < 32; ++i) odd[i] = static_cast<std::uint16_t>(2 * i + 1);
        const __m512i raw = _mm512_permutex2var_epi16(z0, _mm512_load_si512(odd), z1);
        const __m512i sign = _mm512_srai_epi16(raw, 15);  // raw ^ 0xffff (negative), raw ^ 0x8000 (positive)
        return _mm512_ternarylogic_epi32(raw, sign, _mm512_set1_epi16(static_cast<short>(0x8000)), 0x1e);
    }
    /// Gap counts of n deltas into g; the in-block positions of the inside
    /// ones into pos; returns how many.
    std::size_t classify(const double* x, std::size_t n, gap_counter& g, std::uint32_t* pos) const {
        const int steps[6] = {32, 16, 8, 4, 2, 1};
        std::size_t np = 0;
        for (std::size_t i = 0; i < n; i += 32) {
            const __m512i k = keys(x + i);
            __m512i idx = _mm512_setzero_si512();
            for (int s = 0; s < 6; ++s) {
                const __m512i b = _mm512_permutex2var_epi16(lo[s], idx, hi[s]);
                idx = _mm512_mask_add_epi16(idx, _mm512_cmp_epu16_mask(k, b, _MM_CMPINT_NLT), idx,
                                            _mm512_set1_epi16(static_cast<short>(steps[s])));
            }
            const __mmask32 in = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(1));
            const __m512i gap = _mm512_srli_epi16(idx, 1);
            const __m512i g0 = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(gap));
            const __m512i g1 = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(gap, 1));
            g.add(_mm512_sllv_epi32(_mm512_set1_epi32(1), g0));
            g.add(_mm512_sllv_epi32(_mm512_set1_epi32(1), g1));
            const __m512i at = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i)),
                                                _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
            _mm512_storeu_si512(pos + np, _mm512_maskz_compress_epi32(static_cast<__mmask16>(in), at));
            np += static_cast<unsigned>(__builtin_popcount(in & 0xffffu));
            _mm512_storeu_si512(pos + np, _mm512_maskz_compress_epi32(static_cast<__mmask16>(in >> 16),
                                                                      _mm512_add_epi32(at, _mm512_set1_epi32(16))));
            np += static_cast<unsigned>(__builtin_popcount(in >> 16));
        }
        return np;
    }
};

void classify_simd(benchmark::State& st) {
    const auto& d = data();
    auto v = logratio::padded(d.train, d.rollout, d.mask, d.train.size() / row, row);
    const auto plan = logratio::detail::plan_panel_quantiles(v);
    const std::vector<std::uint16_t> bounds = interval_bounds(plan.flag);
    if (bounds.size() > 63) return st.SkipWithError("more than 63 bounds");
    const interval_classifier c(bounds);
    const std::vector<double> x = ring_deltas(d);
    std::vector<double> cand(d.train.size());
    std::vector<std::uint32_t> pos(block + 32);
    std::size_t kept = 0;
    for (auto _ : st) {
        gap_counter g;
        kept = 0;
        for (std::size_t b = 0; b < d.train.size(); b += block) {
            const double* blk = x.data() + (b / block % ring) * block;
            const std::size_t np = c.classify(blk, block, g, pos.data());
            for (std::size_t q = 0; q < np; ++q) cand[kept++] = blk[pos[q]];
        }
        benchmark::DoNotOptimize(g.count);
    }
    st.counters["bounds"] = static_cast<double>(bounds.size());
    st.counters["kept_share"] = static_cast<double>(kept) / static_cast<double>(d.train.size());
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK(classify_simd)->UseRealTime()->Unit(benchmark::kMillisecond);

void collector_scalar(benchmark::State& st) {
    namespace D = logratio::detail;
    using V = xsimd::batch<double, xsimd::avx512bw>;
    const auto& d = data();
    auto v = logratio::padded(d.train, d.rollout, d.mask, d.train.size() / row, row);
    const auto plan = D::plan_panel_quantiles(v);
    const std::vector<double> x = ring_deltas(d);
    logratio::quantile_workspace ws;
    ws.fused.resize(1);
    for (auto _ : st) {
        auto col = std::make_unique<D::quantile_collector<V::size>>(plan, ws.fused[0], d.train.size() / 8,
                                                                    std::pmr::get_default_resource());
        for (std::size_t b = 0; b < d.train.size(); b += block) {
            const double* blk = x.data() + (b / block % ring) * block;
            for (std::size_t i = 0; i < block; i += V::size) {
                const V dv = V::load_unaligned(blk + i);
                col->add(dv, xsimd::abs(dv));
            }
            col->flush();
        }
        benchmark::DoNotOptimize(col->used);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * d.train.size()));
}
BENCHMARK(collector_scalar)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
#endif

BENCHMARK_MAIN();
