#pragma once
// The read roofline of the panel benchmarks: a loop that reads the same
// bytes as the panel (two float32 arrays and a byte mask, 9 bytes/token)
// and does nothing else with them (one integer add per 64 bytes).
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

}  // namespace bench
