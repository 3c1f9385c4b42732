#pragma once
// safetensors reader over a memory map: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}, __metadata__},
// then the data. Every length and offset is checked against the file;
// anything malformed is a format_error naming the file and the offset.
#include <cstddef>
#include <map>
#include <string>

#include <logratio/core/error.hpp>

#include "mapped_file.hpp"
#include "tensor.hpp"

namespace logratio_cli {

struct safetensors_file {
    std::map<std::string, tensor> tensors;
    std::map<std::string, std::string> metadata;

    /// The tensor named `name`, or null.
    const tensor* find(const std::string& name) const;
};

/// A safetensors dtype name ("F32", "BF16", ...); format_error naming `where` otherwise.
dtype parse_safetensors_dtype(const std::string& s, const std::string& where);

/// Parses the safetensors layout of bytes [data, data+size) (named `path` in
/// errors). The tensors point into that memory.
safetensors_file parse_safetensors(const unsigned char* data, std::size_t size, const std::string& path);
safetensors_file parse_safetensors(const mapped_file& f);

}  // namespace logratio_cli
