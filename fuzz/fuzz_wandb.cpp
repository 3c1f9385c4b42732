// libFuzzer target: W&B offline logs (header, 32 KiB blocks, chunk CRC-32
// and FULL/FIRST/MIDDLE/LAST joining, Record / HistoryRecord / RunRecord
// fields, value JSON) through read_wandb_bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <logratio/core/error.hpp>

#include "io/trackers/crc32c.hpp"
#include "io/trackers/wandb_offline.hpp"

namespace {

// Recomputes the chunk CRCs in a copy of the input (chunks that fit their
// block and the input), so that mutations reach the records behind them.
std::vector<std::uint8_t> with_valid_crcs(const std::uint8_t* data, std::size_t size) {
    using namespace logratio_cli::trackers;
    std::vector<std::uint8_t> b(data, data + size);
    std::size_t pos = 7;
    while (pos < size) {
        const std::size_t left = 32768 - pos % 32768;
        if (left < 7) {
            pos += left;
            continue;
        }
        if (size - pos < 7) break;
        const std::size_t n = std::size_t(b[pos + 4]) | std::size_t(b[pos + 5]) << 8;
        if (7 + n > left || 7 + n > size - pos) break;
        const std::uint8_t type = b[pos + 6];
        const std::uint32_t crc = crc32_zlib(b.data() + pos + 7, n, crc32_zlib(&type, 1));
        std::memcpy(b.data() + pos, &crc, 4);
        pos += 7 + n;
    }
    return b;
}

void parse(const std::uint8_t* data, std::size_t size) {
    try {
        const auto h = logratio_cli::trackers::read_wandb_bytes(data, size, "fuzz.wandb");
        for (const auto& run : h.runs)
            for (const auto& m : run.metrics)
                for (std::size_t i = 1; i < m.second.size(); ++i)
                    if (!(m.second[i - 1].step < m.second[i].step)) __builtin_trap();
    } catch (const logratio::error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    parse(data, size);
    const auto fixed = with_valid_crcs(data, size);
    parse(fixed.data(), fixed.size());
    return 0;
}
