// libFuzzer target: the .npy reader (header dict, dtype, shape, data size).
#include <cstddef>
#include <cstdint>

#include <logratio/core/error.hpp>

#include "io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto t = logratio_cli::parse_npy(data, size, "fuzz.npy", "train_logprobs");
        volatile std::uint64_t n = t.numel();  // the parsed shape must be consistent with the bytes
        (void)n;
    } catch (const logratio::error&) {
    }
    return 0;
}
