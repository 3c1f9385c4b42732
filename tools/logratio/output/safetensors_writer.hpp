#pragma once
// Writes tensors to a new safetensors file, atomically (atomic_file.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../io/tensor.hpp"

namespace logratio_cli {

struct output_tensor {
    std::string name;
    dtype type;
    std::vector<std::uint64_t> shape;
    const void* data;
    std::uint64_t nbytes;
};

void write_safetensors(const std::string& path, const std::vector<output_tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace logratio_cli
