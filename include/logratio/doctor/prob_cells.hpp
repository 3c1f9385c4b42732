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
/// The bins of 8 (AVX-512) or 4 (AVX2) values m >= +0 held as floats.
template <class I, class F>
inline I bins_of(const prob_cells& pc, F m);

#if defined(__AVX2__)
template <>
inline __m256i bins_of<__m256i, __m256>(const prob_cells& pc, __m256 m) {
    const __m256i bits = _mm256_castps_si256(m);
    __m256i c = _mm256_srli_epi32(bits, 16);
    c = _mm256_sub_epi32(_mm256_min_epi32(_mm256_max_epi32(c, _mm256_set1_epi32(prob_cells::lo)),
                                          _mm256_set1_epi32(prob_cells::hi)),
                         _mm256_set1_epi32(prob_cells::lo));
    const __m256i e = _mm256_i32gather_epi32(reinterpret_cast<const int*>(pc.entry.data()), c, 4);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    const __m256i above = _mm256_cmpgt_epi32(_mm256_and_si256(bits, low16), _mm256_and_si256(e, low16));
    return _mm256_add_epi32(_mm256_srli_epi32(e, 16), above);  // above: −1 where m > the cell's edge
}
template <>
inline __m128i bins_of<__m128i, __m128>(const prob_cells& pc, __m128 m) {
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

/// Writes the cells of the batch of slots at t, r, ok (doubles: the
/// scan's scratch) to out; SIMD where the build level has gathers (AVX2,
/// AVX-512), the scalar cell() otherwise. Equal to cell() lane for lane.
template <class A>
inline void store_cells(const prob_cells& pc, const double* t, const double* r,
                                               const double* ok, std::uint32_t* out) noexcept {
    using B = xsimd::batch<double, A>;
#if LOGRATIO_X86 && defined(__AVX2__)
    if constexpr (logratio::detail::is_avx512<A> || logratio::detail::is_avx2<A>) {
        const B zero(0.0);
        // m = −l as float, +0 for l >= 0 (max returns its second operand on ±0)
        const B mt = xsimd::max(-B::load_unaligned(t), zero), mr = xsimd::max(-B::load_unaligned(r), zero);
        const B okb = B::load_unaligned(ok);
        if constexpr (logratio::detail::is_avx512<A>) {
            const __m256i jt = bins_of<__m256i>(pc, _mm512_cvtpd_ps(mt));
            const __m256i je = bins_of<__m256i>(pc, _mm512_cvtpd_ps(mr));
            const __m256i c = _mm256_add_epi32(_mm256_slli_epi32(je, 6), jt);
            const __m256i off = _mm256_cmpeq_epi32(_mm512_cvtpd_epi32(okb), _mm256_setzero_si256());
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                                _mm256_blendv_epi8(c, _mm256_set1_epi32(static_cast<int>(unusable_cell)), off));
        } else {
            const __m128i jt = bins_of<__m128i>(pc, _mm256_cvtpd_ps(mt));
            const __m128i je = bins_of<__m128i>(pc, _mm256_cvtpd_ps(mr));
            const __m128i c = _mm_add_epi32(_mm_slli_epi32(je, 6), jt);
            const __m128i off = _mm_cmpeq_epi32(_mm256_cvtpd_epi32(okb), _mm_setzero_si128());
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                             _mm_blendv_epi8(c, _mm_set1_epi32(static_cast<int>(unusable_cell)), off));
        }
        return;
    }
#endif
    for (std::size_t j = 0; j < B::size; ++j) out[j] = pc.cell(t[j], r[j], ok[j] != 0.0);
}

}  // namespace detail
}  // namespace doctor
LOGRATIO_NAMESPACE_END
