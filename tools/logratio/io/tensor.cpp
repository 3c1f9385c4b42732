#include "tensor.hpp"

namespace logratio_cli {

const char* dtype_label(dtype d) {
    switch (d) {
        case dtype::f32: return "F32";
        case dtype::f64: return "F64";
        case dtype::f16: return "F16";
        case dtype::bf16: return "BF16";
        case dtype::i32: return "I32";
        case dtype::i64: return "I64";
        case dtype::u8: return "U8";
        case dtype::i8: return "I8";
        case dtype::boolean: return "BOOL";
    }
    return "?";
}

std::size_t dtype_size(dtype d) {
    switch (d) {
        case dtype::f64:
        case dtype::i64: return 8;
        case dtype::f32:
        case dtype::i32: return 4;
        case dtype::f16:
        case dtype::bf16: return 2;
        default: return 1;
    }
}

std::uint64_t tensor::numel() const {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

std::string tensor::shape_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace logratio_cli
