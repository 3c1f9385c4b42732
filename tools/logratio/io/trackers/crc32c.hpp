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
#include <cstddef>
#include <cstdint>

namespace logratio_cli::trackers {

inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78u;
inline constexpr std::uint32_t crc32_zlib_polynomial = 0xEDB88320u;

/// CRC-32C (Castagnoli) of `n` bytes with the table-driven code only (what
/// crc32c() runs on a CPU without SSE4.2; the tests compare the two).
std::uint32_t crc32c_portable(const void* data, std::size_t n) noexcept;

/// CRC-32C (Castagnoli) of `n` bytes.
std::uint32_t crc32c(const void* data, std::size_t n) noexcept;

/// TFRecord's masked CRC-32C: rotate right by 15 bits, add a constant (so a
/// CRC stored inside checksummed data does not checksum to itself).
std::uint32_t masked_crc32c(const void* data, std::size_t n) noexcept;

/// zlib's crc32(data, seed): continues from a previous result `seed`
/// (0 for a fresh checksum), as W&B's datastore seeds with crc32(type byte).
std::uint32_t crc32_zlib(const void* data, std::size_t n, std::uint32_t seed = 0) noexcept;

}  // namespace logratio_cli::trackers
