#pragma once
// .npy reader (format versions 1-3) over a memory map. Little-endian or
// byte-order-free C-order arrays of f2/f4/f8/i4/i8/u1/i1/b1; anything else,
// and every truncated or malformed header, is a format_error.
#include <cstddef>
#include <string>

#include <logratio/core/error.hpp>

#include "mapped_file.hpp"
#include "tensor.hpp"

namespace logratio_cli {

/// The array in bytes [data, data+size) (named `path` in errors) as a
/// tensor named `name`; its data point into that memory.
tensor parse_npy(const unsigned char* data, std::size_t size, const std::string& path, const std::string& name);
tensor parse_npy(const mapped_file& f, const std::string& name);

}  // namespace logratio_cli
