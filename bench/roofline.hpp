#pragma once
// The rooflines of the benchmarks: loops that move the same bytes as the
// panel (read_tokens: two float32 arrays and a byte mask, 9 bytes/token) and
// the correction (move_tokens: those, plus a float and a byte written)
// with no other work.
#include <cstddef>
#include <cstdint>

#include <logratio/detail/xsimd.hpp>

#include "synthetic.hpp"

namespace bench {

/// Reads tokens [b, e) of d (b and e multiples of 4 * the batch size).
inline std::uint32_t read_tokens(const tokens& d, std::size_t b, std::size_t e) {
    using B = xsimd::batch<std::uint32_t>;
    B acc(0u);
    const auto* t = reinterpret_cast<const std::uint32_t*>(d.train.data());
    const auto* r = reinterpret_cast<const std::uint32_t*>(d.rollout.data());
    const auto* m = reinterpret_cast<const std::uint32_t*>(d.mask.data());
    for (std::size_t i = b; i < e; i += B::size) acc += B::load_unaligned(t + i) ^ B::load_unaligned(r + i);
    for (std::size_t i = b / 4; i < e / 4; i += B::size) acc += B::load_unaligned(m + i);
    return xsimd::hadd(acc);
}

/// The correction's traffic with no arithmetic to speak of: reads tokens
/// [b, e) of d, writes t - r as float32 into w and a 0/1 byte into out_mask
/// (14 bytes/token, plain stores; b and e multiples of 64).
inline void move_tokens(const tokens& d, float* w, std::uint8_t* out_mask, std::size_t b, std::size_t e) {
    using F = xsimd::batch<float>;
    using U = xsimd::batch<std::uint8_t>;
    constexpr std::size_t block = 64;  // a multiple of both batch sizes
    static_assert(block % F::size == 0 && block % U::size == 0, "block");
    for (std::size_t i = b; i < e; i += block) {
        for (std::size_t k = i; k < i + block; k += F::size)
            (F::load_unaligned(&d.train[k]) - F::load_unaligned(&d.rollout[k])).store_unaligned(w + k);
        for (std::size_t k = i; k < i + block; k += U::size)
            xsimd::select(U::load_unaligned(&d.mask[k]) != U(0), U(1), U(0)).store_unaligned(out_mask + k);
    }
}

}  // namespace bench
