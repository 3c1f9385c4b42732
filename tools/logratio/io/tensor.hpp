#pragma once
// A named, typed, shaped region of a mapped file, as the readers return it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace logratio_cli {

enum class dtype { f32, f64, f16, bf16, i32, i64, u8, i8, boolean };

/// "F32", "BF16", ... (safetensors' names).
const char* dtype_label(dtype d);
/// Bytes per element.
std::size_t dtype_size(dtype d);

struct tensor {
    std::string name;
    dtype type = dtype::f32;
    std::vector<std::uint64_t> shape;
    const unsigned char* data = nullptr;  ///< may be unaligned for the type
    std::uint64_t nbytes = 0;
    std::uint64_t file_offset = 0;  ///< where the data starts in its file

    std::uint64_t numel() const;
    /// "[4, 8]"
    std::string shape_string() const;
};

}  // namespace logratio_cli
