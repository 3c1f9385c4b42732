#pragma once
// Direct loads of one batch of doubles from the storage types (float32,
// float64, bfloat16, float16) and of one batch_bool from a byte or float
// mask, on AVX2 and AVX-512: the kernel then reads its inputs straight from
// memory instead of staging them. Where `direct_load<A, T, M>` is false
// (SSE2, other mask types) the kernel stages through its chunk buffers.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "xsimd.hpp"

#include "../core/dtype.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LOGRATIO_X86 1
#else
#define LOGRATIO_X86 0
#endif

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

template <class A>
constexpr bool is_avx512 = LOGRATIO_X86 && std::is_base_of<xsimd::avx512f, A>::value;
template <class A>
constexpr bool is_avx2 = LOGRATIO_X86 && std::is_base_of<xsimd::avx2, A>::value && !is_avx512<A>;

template <class A, class T, class M>
constexpr bool direct_load =
    (is_avx512<A> || is_avx2<A>) &&
    (std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, bfloat16>::value ||
     std::is_same<T, float16>::value) &&
    (std::is_same<M, std::uint8_t>::value || std::is_same<M, bool>::value || std::is_same<M, float>::value);

#if LOGRATIO_X86
template <class A, class T>
xsimd::batch<double, A> widen(const T* p) noexcept {
    using B = xsimd::batch<double, A>;
    if constexpr (is_avx512<A>) {
        if constexpr (std::is_same<T, double>::value) return B(_mm512_loadu_pd(p));
        else if constexpr (std::is_same<T, float>::value) return B(_mm512_cvtps_pd(_mm256_loadu_ps(p)));
        else if constexpr (std::is_same<T, bfloat16>::value) {
            const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            return B(_mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))));
        } else {
            const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            return B(_mm512_cvtps_pd(_mm256_cvtph_ps(h)));
        }
    } else {
        if constexpr (std::is_same<T, double>::value) return B(_mm256_loadu_pd(p));
        else if constexpr (std::is_same<T, float>::value) return B(_mm256_cvtps_pd(_mm_loadu_ps(p)));
        else if constexpr (std::is_same<T, bfloat16>::value) {
            const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
            return B(_mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(h), 16))));
        } else {
            const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
            return B(_mm256_cvtps_pd(_mm_cvtph_ps(h)));
        }
    }
}

template <class A, class M>
typename xsimd::batch<double, A>::batch_bool_type widen_mask(const M* p) noexcept {
    using B = xsimd::batch<double, A>;
    if constexpr (std::is_same<M, float>::value) {
        // mask_on: m != 0 with NaN counting (unordered); xsimd's != is ordered on AVX
        if constexpr (is_avx512<A>)
            return typename B::batch_bool_type(_mm512_cmp_pd_mask(widen<A>(p), _mm512_setzero_pd(), _CMP_NEQ_UQ));
        else
            return typename B::batch_bool_type(_mm256_cmp_pd(widen<A>(p), _mm256_setzero_pd(), _CMP_NEQ_UQ));
    } else if constexpr (is_avx512<A>) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));  // 8 bytes
        const __m512i w = _mm512_cvtepu8_epi64(b);
        return typename B::batch_bool_type(_mm512_test_epi64_mask(w, w));
    } else {
        std::int32_t four;
        std::memcpy(&four, p, 4);
        const __m256i w = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
        const __m256i zero = _mm256_cmpeq_epi64(w, _mm256_setzero_si256());
        return typename B::batch_bool_type(_mm256_castsi256_pd(_mm256_xor_si256(zero, _mm256_set1_epi64x(-1))));
    }
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
/// The storage types widen16 and mask16 read (AVX-512 with BW and VL):
/// those of direct_load but float64 (16 lanes of floats).
template <class T, class M>
constexpr bool direct_load16 = direct_load<xsimd::avx512bw, T, M> && !std::is_same<T, double>::value;

/// 16 values as floats (exact for float, bfloat16, float16); lanes outside
/// `lanes` read no memory and hold +0.
template <class T>
inline __m512 widen16(const T* p, __mmask16 lanes) noexcept {
    if constexpr (std::is_same<T, float>::value) {
        return _mm512_maskz_loadu_ps(lanes, p);
    } else {
        const __m256i h = _mm256_maskz_loadu_epi16(lanes, p);
        if constexpr (std::is_same<T, bfloat16>::value)
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        else
            return _mm512_cvtph_ps(h);
    }
}

/// The 16 mask lanes that count (mask_on: m != 0, NaN included), within `lanes`.
template <class M>
inline __mmask16 mask16(const M* p, __mmask16 lanes) noexcept {
    if constexpr (std::is_same<M, float>::value) {
        return _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, p), _mm512_setzero_ps(), _CMP_NEQ_UQ);
    } else {
        const __m128i b = _mm_maskz_loadu_epi8(lanes, p);
        return _mm_test_epi8_mask(b, b);
    }
}
#endif

/// Stores a full batch as W (float: narrowed, rounding to nearest; double).
template <class A, class W>
void store_narrow(W* p, const xsimd::batch<double, A>& x) noexcept {
    if constexpr (std::is_same<W, double>::value) {
        x.store_unaligned(p);
    } else if constexpr (is_avx512<A>) {
        _mm256_storeu_ps(p, _mm512_cvtpd_ps(x));
    } else {
        _mm_storeu_ps(p, _mm256_cvtpd_ps(x));
    }
}

/// Stores a full batch_bool as bytes 0/1.
template <class A>
void store_mask_bytes(std::uint8_t* p, const typename xsimd::batch<double, A>::batch_bool_type& m) noexcept {
    if constexpr (is_avx512<A>) {
        const __mmask8 k = m;  // lanes -> 0/1 qwords -> bytes (AVX-512F only)
        const __m128i b = _mm512_cvtepi64_epi8(_mm512_maskz_mov_epi64(k, _mm512_set1_epi64(1)));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
    } else {
        static constexpr std::uint32_t spread[16] = {
            0x00000000u, 0x00000001u, 0x00000100u, 0x00000101u, 0x00010000u, 0x00010001u, 0x00010100u, 0x00010101u,
            0x01000000u, 0x01000001u, 0x01000100u, 0x01000101u, 0x01010000u, 0x01010001u, 0x01010100u, 0x01010101u};
        const std::uint32_t four = spread[_mm256_movemask_pd(m) & 15];
        std::memcpy(p, &four, 4);
    }
}
#endif

}  // namespace detail
LOGRATIO_NAMESPACE_END
