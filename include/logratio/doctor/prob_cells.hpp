#pragma once
// The probability bins of a batch of tokens in SIMD: the joint-histogram
// cell of each (l_T, l_E) pair, one gather per side.
//
// Same bins as prob_bin() (breakdowns.hpp: bin b holds e[b+1] < m <= e[b],
// m = −l rounded to float), from a second, packed table: for each 2^16-wide
// cell of m's float encoding (the top 16 bits: sign, exponent, 7 mantissa
// bits) one uint32 = bin of the cell's smallest m << 16 | the low 16 bits of
// the one edge inside the cell (0xFFFF when none). As m and the edge share
// their top 16 bits, "m > edge" is "m's low 16 bits > the edge's low 16
// bits": one gather and integer lane operations, no second lookup.
// Cells below 2^-23 (bin 63: e[63] ≈ 1.9e-7 sits above them) and from 16
// upwards (bin 0: e[1] ≈ 15.5) hold no edge, so m's cell index is clamped
// into [2^-23, 16]: 3,457 entries, 13.5 KiB (the byte table of prob_bin
// is 32 KiB and indexed per token by scalar code).
//
// The cell of a token is je * 64 + jt (rollout bin major, so that cell >> 8
// is the rollout-probability bucket), or unusable_cell (4096, bucket 16: the
// scatter's dummy slot) for a token that is not usable.
#include <cstdint>
#include <cstring>
#include <vector>

#include "../detail/batches.hpp"
#include "../detail/widen.hpp"
#include "breakdowns.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {
namespace detail {

constexpr std::uint32_t unusable_cell = prob_axis::bins * prob_axis::bins;

/// The packed table (see the header comment).
struct prob_cells {
    static constexpr std::int32_t lo = (127 - 23) << 7;  ///< cell of m = 2^-23
    static constexpr std::int32_t hi = (127 + 4) << 7;   ///< cell of m = 16
    std::vector<std::uint32_t> entry;
    explicit prob_cells(const prob_lut& t) : entry(static_cast<std::size_t>(hi - lo + 1)) {
        for (std::int32_t c = lo; c <= hi; ++c) {
            const int b = t.cell[static_cast<std::size_t>(c)];
            std::uint32_t eb;
            std::memcpy(&eb, &t.edge[static_cast<std::size_t>(b)], 4);
            const std::uint32_t low = (eb >> 16) == static_cast<std::uint32_t>(c) ? (eb & 0xFFFFu) : 0xFFFFu;
            entry[static_cast<std::size_t>(c - lo)] = static_cast<std::uint32_t>(b) << 16 | low;
        }
    }
    /// The bin of m >= +0 (float, not NaN): the scalar form of the lanes below.
    int bin(float m) const noexcept {
        std::uint32_t bits;
        std::memcpy(&bits, &m, 4);
        std::int32_t c = static_cast<std::int32_t>(bits >> 16);
        c = c < lo ? lo : (c > hi ? hi : c);
        const std::uint32_t e = entry[static_cast<std::size_t>(c - lo)];
        return static_cast<int>(e >> 16) - ((bits & 0xFFFFu) > (e & 0xFFFFu) ? 1 : 0);
    }
    /// The cell of one token with log-probs t, r (<= 0 or a tolerated tiny positive).
    std::uint32_t cell(double t, double r, bool use) const noexcept {
        if (!use) return unusable_cell;
        auto m = [](double l) { return -l > 0.0 ? static_cast<float>(-l) : 0.0f; };
        return static_cast<std::uint32_t>(bin(m(r)) * prob_axis::bins + bin(m(t)));
    }
};

inline const prob_cells& the_prob_cells() {
    static const prob_cells t(the_prob_lut());
    return t;
}

#if LOGRATIO_X86
#if defined(__AVX512F__)
/// The bins of 16 values m >= +0 (AVX-512) without a table in memory. The
/// logit x = −log(expm1(m)) is over-estimated by less than 0.5:
///   m <= 1: x' = −ln m − m/2 + 0.05, with ln m from the float encoding
///           (Mitchell: log2(1+f) ≈ f, centred: error within ±0.03); the
///           dropped terms of −ln(expm1(m)/m) are −m²/24 + m⁴/2880 − ...,
///           in [−0.042, 0]: x' − x in [0.02, 0.13]
///   m > 1:  x' = 0.46 − m      (x + m = −ln(1 − e^−m) lies in (0, 0.459]:
///           x' − x in [0.001, 0.46))
/// so b0 = floor(2x' + 32), clamped to [0, 63], is the bin or the one above
/// it, and one comparison with the float edge e[b0] (a 64-entry table held
/// in registers: two permutes and a blend) gives exactly prob_bin()'s bin.
/// Measured faster than one 8-lane gather per side on Zen 4.
struct prob_edges16 {
    __m512 e[4];  ///< e[0..63] as 4 x 16 floats
    explicit prob_edges16(const prob_lut& t) {
        alignas(64) float f[64];
        for (int j = 0; j < 64; ++j) f[j] = t.edge[static_cast<std::size_t>(j)];
        for (int q = 0; q < 4; ++q) e[q] = _mm512_load_ps(&f[16 * q]);
    }
    /// e[j] for the indices j in [0, 64)
    LOGRATIO_ALWAYS_INLINE __m512 at(__m512i j) const noexcept {
        const __m512 a = _mm512_permutex2var_ps(e[0], j, e[1]);  // j & 31 selects among 32
        const __m512 b = _mm512_permutex2var_ps(e[2], j, e[3]);
        return _mm512_mask_blend_ps(_mm512_test_epi32_mask(j, _mm512_set1_epi32(32)), a, b);
    }
};

LOGRATIO_ALWAYS_INLINE inline __m512i bins16(const prob_edges16& pe, __m512 m) noexcept {
    constexpr float ln2 = 0.693147180559945f;
    // −ln m + 0.05 ≈ −(bits − (127 + 0.0430)·2^23)·ln2/2^23 + 0.05
    const __m512 neg_lnm = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_castps_si512(m)), _mm512_set1_ps(-ln2 / 8388608.0f),
                                           _mm512_set1_ps((127.0f + 0.0430f) * ln2 + 0.05f));
    const __m512 small = _mm512_fmadd_ps(m, _mm512_set1_ps(-0.5f), neg_lnm);
    const __m512 large = _mm512_sub_ps(_mm512_set1_ps(0.46f), m);
    const __m512 x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m, _mm512_set1_ps(1.0f), _CMP_GT_OQ), small, large);
    __m512 bf = _mm512_fmadd_ps(x, _mm512_set1_ps(2.0f), _mm512_set1_ps(32.0f));
    bf = _mm512_min_ps(_mm512_max_ps(bf, _mm512_setzero_ps()), _mm512_set1_ps(63.0f));
    const __m512i b = _mm512_cvttps_epi32(bf);  // >= 0: truncation is floor
    const __mmask16 down = _mm512_cmp_ps_mask(m, pe.at(b), _CMP_GT_OQ);  // m > e[b0]: bin b0 − 1
    return _mm512_mask_sub_epi32(b, down, b, _mm512_set1_epi32(1));
}

inline const prob_edges16& the_prob_edges16() {
    static const prob_edges16 t(the_prob_lut());
    return t;
}
#endif

#if defined(__AVX2__)
/// The bins of 4 values m >= +0 held as floats (AVX2): one gather.
LOGRATIO_ALWAYS_INLINE inline __m128i bins4(const prob_cells& pc, __m128 m) {
    const __m128i bits = _mm_castps_si128(m);
    __m128i c = _mm_srli_epi32(bits, 16);
    c = _mm_sub_epi32(_mm_min_epi32(_mm_max_epi32(c, _mm_set1_epi32(prob_cells::lo)), _mm_set1_epi32(prob_cells::hi)),
                      _mm_set1_epi32(prob_cells::lo));
    const __m128i e = _mm_i32gather_epi32(reinterpret_cast<const int*>(pc.entry.data()), c, 4);
    const __m128i low16 = _mm_set1_epi32(0xFFFF);
    const __m128i above = _mm_cmpgt_epi32(_mm_and_si128(bits, low16), _mm_and_si128(e, low16));
    return _mm_add_epi32(_mm_srli_epi32(e, 16), above);
}
#endif
#endif

/// What store_cells reads, fetched once per sequence (a copy: the edges
/// stay in registers through the loop): the packed table, and on AVX-512
/// the edges.
template <class A, bool Wide = logratio::detail::is_avx512<A>>
struct cell_lookup {
    const prob_cells& pc = the_prob_cells();
};
#if defined(__AVX512F__)
template <class A>
struct cell_lookup<A, true> {
    const prob_cells& pc = the_prob_cells();
    const prob_edges16 pe = the_prob_edges16();
};
#endif

/// Writes the cells of a batch of tokens (log-probs t, r; use: 1.0 where
/// usable, else 0.0) to out: AVX-512 by bins16, AVX2 by one gather per
/// side (bins4), the scalar cell() otherwise. Equal to cell() lane for lane.
template <class A>
LOGRATIO_ALWAYS_INLINE inline void store_cells(const cell_lookup<A>& lk, const xsimd::batch<double, A>& t,
                                               const xsimd::batch<double, A>& r, const xsimd::batch<double, A>& use,
                                               std::uint32_t* out) noexcept {
    using B = xsimd::batch<double, A>;
#if LOGRATIO_X86 && defined(__AVX512F__)
    if constexpr (logratio::detail::is_avx512<A>) {
        // m = −l as float, +0 for l >= 0 (max returns its second operand on ±0); both sides in 16 lanes
        const B zero(0.0);
        const __m512 m = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(xsimd::max(-t, zero))),
                                            _mm512_cvtpd_ps(xsimd::max(-r, zero)), 1);
        const __m512i both = bins16(lk.pe, m);
        const __m256i c = _mm256_add_epi32(_mm256_slli_epi32(_mm512_extracti32x8_epi32(both, 1), 6),
                                           _mm512_castsi512_si256(both));
        const __m256i off = _mm256_cmpeq_epi32(_mm512_cvtpd_epi32(use), _mm256_setzero_si256());
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                            _mm256_blendv_epi8(c, _mm256_set1_epi32(static_cast<int>(unusable_cell)), off));
        return;
    }
#endif
#if LOGRATIO_X86 && defined(__AVX2__)
    if constexpr (logratio::detail::is_avx2<A>) {
        const B zero(0.0);
        const __m128i jt = bins4(lk.pc, _mm256_cvtpd_ps(xsimd::max(-t, zero)));
        const __m128i je = bins4(lk.pc, _mm256_cvtpd_ps(xsimd::max(-r, zero)));
        const __m128i c = _mm_add_epi32(_mm_slli_epi32(je, 6), jt);
        const __m128i off = _mm_cmpeq_epi32(_mm256_cvtpd_epi32(use), _mm_setzero_si128());
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                         _mm_blendv_epi8(c, _mm_set1_epi32(static_cast<int>(unusable_cell)), off));
        return;
    }
#endif
    alignas(64) double tl[B::size], rl[B::size], ul[B::size];
    t.store_aligned(tl);
    r.store_aligned(rl);
    use.store_aligned(ul);
    for (std::size_t j = 0; j < B::size; ++j) out[j] = lk.pc.cell(tl[j], rl[j], ul[j] != 0.0);
}

}  // namespace detail
}  // namespace doctor
LOGRATIO_NAMESPACE_END
