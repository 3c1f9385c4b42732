#pragma once
// Element types of the log-prob arrays and masks, and their conversion to
// double. bfloat16 and float16 are 16-bit storage types (bit patterns as
// written by torch, safetensors or numpy); arithmetic is always done in
// float64 after conversion.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// bfloat16 storage: the upper 16 bits of an IEEE float32.
struct bfloat16 {
    std::uint16_t bits;
};
/// IEEE 754 binary16 storage.
struct float16 {
    std::uint16_t bits;
};
static_assert(sizeof(bfloat16) == 2 && sizeof(float16) == 2, "16-bit storage types");

/// Reinterpret a buffer of raw 16-bit patterns (e.g. a torch bf16 tensor's
/// data_ptr()) as bfloat16 / float16 elements.
inline const bfloat16* as_bfloat16(const void* p) noexcept { return static_cast<const bfloat16*>(p); }
inline const float16* as_float16(const void* p) noexcept { return static_cast<const float16*>(p); }

inline float to_float(bfloat16 x) noexcept {
    const std::uint32_t u = static_cast<std::uint32_t>(x.bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float to_float(float16 x) noexcept {
    const std::uint32_t h = x.bits;
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1Fu;
    std::uint32_t mant = h & 0x3FFu;
    std::uint32_t u;
    if (exp == 0x1Fu) {  // inf / nan
        u = sign | 0x7F800000u | (mant << 13);
    } else if (exp != 0) {  // normal
        u = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {  // signed zero
        u = sign;
    } else {  // subnormal: normalise
        std::uint32_t e = 113u;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        u = sign | (e << 23) | ((mant & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// Round a float to the nearest bfloat16 (ties to even; NaN stays NaN).
inline bfloat16 to_bfloat16(float f) noexcept {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bfloat16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
    u += 0x7FFFu + ((u >> 16) & 1u);
    return bfloat16{static_cast<std::uint16_t>(u >> 16)};
}

/// Round a float to the nearest float16 (ties to even, overflow to inf).
inline float16 to_float16(float f) noexcept {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return float16{static_cast<std::uint16_t>(sign | 0x7E00u)};
    if (a >= 0x477FF000u) return float16{static_cast<std::uint16_t>(sign | 0x7C00u)};  // >= 65520
    if (a < 0x38800000u) {  // subnormal or zero in half
        if (a < 0x33000000u) return float16{sign};  // below half of the smallest subnormal
        const std::uint32_t e = a >> 23;
        const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        const std::uint32_t shift = 126u - e;  // 14 + (112 - e) + ...
        std::uint32_t r = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return float16{static_cast<std::uint16_t>(sign | r)};
    }
    std::uint32_t r = a - 0x38000000u;  // rebias exponent 127 -> 15
    r += 0xFFFu + ((r >> 13) & 1u);
    return float16{static_cast<std::uint16_t>(sign | (r >> 13))};
}

inline double to_double(float x) noexcept { return static_cast<double>(x); }
inline double to_double(double x) noexcept { return x; }
inline double to_double(bfloat16 x) noexcept { return static_cast<double>(to_float(x)); }
inline double to_double(float16 x) noexcept { return static_cast<double>(to_float(x)); }

/// The log-prob element types a view accepts.
template <class T>
struct is_logprob_type
    : std::integral_constant<bool, std::is_same<T, float>::value || std::is_same<T, double>::value ||
                                       std::is_same<T, bfloat16>::value || std::is_same<T, float16>::value> {};

/// The mask element types a view accepts: nonzero (integers, bool) or != 0
/// (floats) counts.
template <class M>
struct is_mask_type
    : std::integral_constant<bool, std::is_same<M, bool>::value || std::is_same<M, std::uint8_t>::value ||
                                       std::is_same<M, std::int8_t>::value ||
                                       std::is_same<M, std::int32_t>::value ||
                                       std::is_same<M, std::int64_t>::value ||
                                       std::is_same<M, float>::value || std::is_same<M, double>::value> {};

template <class M>
inline bool mask_on(M m) noexcept {
    return m != M(0);
}

/// Name of an element type, as in safetensors' dtype strings.
template <class T>
constexpr const char* dtype_name() noexcept {
    if constexpr (std::is_same<T, float>::value) return "F32";
    else if constexpr (std::is_same<T, double>::value) return "F64";
    else if constexpr (std::is_same<T, bfloat16>::value) return "BF16";
    else if constexpr (std::is_same<T, float16>::value) return "F16";
    else if constexpr (std::is_same<T, bool>::value) return "BOOL";
    else if constexpr (std::is_same<T, std::uint8_t>::value) return "U8";
    else if constexpr (std::is_same<T, std::int8_t>::value) return "I8";
    else if constexpr (std::is_same<T, std::int32_t>::value) return "I32";
    else if constexpr (std::is_same<T, std::int64_t>::value) return "I64";
    else return "?";
}

LOGRATIO_NAMESPACE_END
