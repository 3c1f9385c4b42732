// libFuzzer target: TensorBoard event files (TFRecord framing + CRC-32C, the
// Event / Summary / Value / TensorProto fields) through read_tensorboard_bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <logratio/core/error.hpp>

#include "io/trackers/crc32c.hpp"
#include "io/trackers/protobuf_wire.hpp"
#include "io/trackers/tensorboard.hpp"

namespace {

// Recomputes the CRCs of every whole frame in a copy of the input, so that
// mutations reach the protobuf fields behind the checksums too.
std::vector<std::uint8_t> with_valid_crcs(const std::uint8_t* data, std::size_t size) {
    using namespace logratio_cli::trackers;
    std::vector<std::uint8_t> b(data, data + size);
    std::size_t pos = 0;
    while (size - pos >= 12) {
        const std::uint64_t n = logratio_cli::protobuf::load_le64(b.data() + pos);
        const std::uint32_t lc = masked_crc32c(b.data() + pos, 8);
        std::memcpy(b.data() + pos + 8, &lc, 4);
        if (n > size - pos - 12 || size - pos - 12 - n < 4) break;
        const std::uint32_t dc = masked_crc32c(b.data() + pos + 12, std::size_t(n));
        std::memcpy(b.data() + pos + 12 + n, &dc, 4);
        pos += 16 + std::size_t(n);
    }
    return b;
}

void parse(const std::uint8_t* data, std::size_t size) {
    try {
        const auto h = logratio_cli::trackers::read_tensorboard_bytes(data, size, "fuzz.tfevents");
        // What parses must be what history.hpp promises: steps sorted and unique.
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
