#pragma once
// CRC-32 checksums of the binary tracker logs, slicing-by-8 (8 table look-ups
// per 8 input bytes, ~1 byte/cycle, no CPU-specific instructions), and for
// CRC-32C the SSE4.2 crc32 instruction where the CPU has it (chosen once at
// run time; the build stays at the baseline instruction set):
//  - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), which TFRecord
//    frames carry "masked" (tensorflow/tensorboard @70b76c92
//    tensorboard/compat/tensorflow_stub/pywrap_tensorflow.py masked_crc32c,
//    tensorboard/summary/writer/record_writer.py);
//  - CRC-32 (zlib / IEEE 802.3, reflected polynomial 0xEDB88320), which the
//    W&B record log uses (wandb/wandb @0552ec8a wandb/sdk/internal/datastore.py:
//    zlib.crc32 over the chunk type byte, then the data).
// Checked against the RFC 3720 (iSCSI) B.4 vectors in tests/test_tracker_binary.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define LOGRATIO_CRC32C_SSE42 1
#endif

namespace logratio_cli::trackers {

namespace crc_detail {

/// The 8 x 256 slicing tables of a reflected CRC-32 polynomial.
template <std::uint32_t Poly>
struct tables {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    tables() {
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ Poly : c >> 1;
            t[0][i] = c;
        }
        for (std::size_t s = 1; s < 8; ++s)
            for (std::size_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffu];
    }
    static const tables& get() {
        static const tables instance;
        return instance;
    }
};

/// Continues a reflected CRC-32 over `n` bytes; `crc` is the running value
/// without the final inversion (start from 0xFFFFFFFF).
template <std::uint32_t Poly>
std::uint32_t update(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
    const auto& t = tables<Poly>::get().t;
    while (n >= 8) {
        std::uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= crc;
        crc = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^
              t[3][hi & 0xffu] ^ t[2][(hi >> 8) & 0xffu] ^ t[1][(hi >> 16) & 0xffu] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xffu];
    return crc;
}

#ifdef LOGRATIO_CRC32C_SSE42
/// CRC-32C with the SSE4.2 crc32 instruction (same running-value convention).
__attribute__((target("sse4.2"))) inline std::uint32_t update_crc32c_sse42(std::uint32_t crc, const unsigned char* p,
                                                                            std::size_t n) noexcept {
    std::uint64_t c = crc;
    while (n >= 8) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<std::uint32_t>(c);
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}

inline bool has_sse42() noexcept {
    static const bool yes = __builtin_cpu_supports("sse4.2");
    return yes;
}
#endif

}  // namespace crc_detail

inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78u;
inline constexpr std::uint32_t crc32_zlib_polynomial = 0xEDB88320u;

/// CRC-32C (Castagnoli) of `n` bytes with the table-driven code only (what
/// crc32c() runs on a CPU without SSE4.2; the tests compare the two).
inline std::uint32_t crc32c_portable(const void* data, std::size_t n) noexcept {
    return ~crc_detail::update<crc32c_polynomial>(0xFFFFFFFFu, static_cast<const unsigned char*>(data), n);
}

/// CRC-32C (Castagnoli) of `n` bytes.
inline std::uint32_t crc32c(const void* data, std::size_t n) noexcept {
#ifdef LOGRATIO_CRC32C_SSE42
    if (crc_detail::has_sse42())
        return ~crc_detail::update_crc32c_sse42(0xFFFFFFFFu, static_cast<const unsigned char*>(data), n);
#endif
    return crc32c_portable(data, n);
}

/// TFRecord's masked CRC-32C: rotate right by 15 bits, add a constant (so a
/// CRC stored inside checksummed data does not checksum to itself).
inline std::uint32_t masked_crc32c(const void* data, std::size_t n) noexcept {
    const std::uint32_t crc = crc32c(data, n);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// zlib's crc32(data, seed): continues from a previous result `seed`
/// (0 for a fresh checksum), as W&B's datastore seeds with crc32(type byte).
inline std::uint32_t crc32_zlib(const void* data, std::size_t n, std::uint32_t seed = 0) noexcept {
    return ~crc_detail::update<crc32_zlib_polynomial>(~seed, static_cast<const unsigned char*>(data), n);
}

}  // namespace logratio_cli::trackers
