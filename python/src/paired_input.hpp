#pragma once
// The paired log-prob arguments of panel / correct / quantiles /
// split_mismatch, checked and turned into one logratio::paired_view.
//
// Layouts, all read in place:
//   padded [B, T], rows any stride apart (a slice full[:, -T:] of a wider
//     batch): contiguous rows become a padded view; rows `S > T` elements
//     apart become a packed view over the (B-1)*S + T elements from the
//     first token, one sequence per row, whose mask leaves the S - T
//     elements between rows out (the kernels never count masked-out
//     tokens, so the gap is not read as data);
//   packed 1-D with cu_seqlens (int32 or int64).
// Only the mask may be copied: to uint8 when its dtype is not bool/uint8/
// int8/float32 or its layout differs from the log-probs' (one byte per
// token). Log-probs whose elements are not adjacent within a row, or whose
// train and rollout strides differ, are copied to contiguous memory.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <logratio/core/visit.hpp>
#include <logratio/dispatch/dispatch.hpp>

#include "tensor_arg.hpp"

namespace logratio_py {

struct paired_input {
    tensor_arg train, rollout;
    std::optional<tensor_arg> mask, offsets, old;  ///< old: split_mismatch's third array
    dtype_code type = dtype_code::f32;             ///< f32, f64, f16 or bf16 (u16 read as bf16)
    bool packed = false;                           ///< the view is packed (1-D input, or strided rows)
    bool strided_rows = false;                     ///< padded input run as a packed view
    std::uint64_t rows = 0, cols = 0, row_stride = 0, n = 0;  ///< n: elements the view spans
    const void* train_data = nullptr;
    const void* rollout_data = nullptr;
    const void* old_data = nullptr;
    const void* mask_data = nullptr;  ///< null: every token counts
    bool float_mask = false;
    const void* offsets_data = nullptr;
    bool offsets64 = true;
    std::uint64_t num_offsets = 0;
    // owned copies (only when the inputs cannot be read in place)
    std::vector<std::uint8_t> mask_copy;
    std::vector<std::int64_t> offsets_copy;
    std::vector<char> train_copy, rollout_copy, old_copy;

    /// Shape of per-token outputs (the caller's train shape).
    std::vector<std::int64_t> out_shape() const { return train.shape; }
};

/// Reads and checks the arguments (TypeError / ValueError naming them).
/// `names`: the four argument names as the caller's function spells them.
paired_input read_paired(py::handle train, py::handle rollout, py::handle mask, py::handle cu_seqlens,
                         py::handle old = py::none(), const char* train_name = "train",
                         const char* rollout_name = "rollout", const char* mask_name = "mask",
                         const char* old_name = "old");

/// Copies per-token outputs of the view's span (n elements, rows
/// row_stride apart) into the caller's [B, T] layout.
template <class E>
void compact_rows(const paired_input& in, const E* span, E* out) {
    for (std::uint64_t r = 0; r < in.rows; ++r)
        std::copy(span + r * in.row_stride, span + r * in.row_stride + in.cols, out + r * in.cols);
}

/// The library's element type of a checked floating-point argument (u16 is
/// read as bf16, as torch's bf16 arrives through the buffer protocol).
inline logratio::value_type value_type_of(dtype_code c) {
    switch (c) {
        case dtype_code::f64: return logratio::value_type::f64;
        case dtype_code::f16: return logratio::value_type::f16;
        case dtype_code::bf16:
        case dtype_code::u16: return logratio::value_type::bf16;
        default: return logratio::value_type::f32;
    }
}

/// The view the input describes, for logratio::visit_view.
inline logratio::view_description description(const paired_input& in) {
    logratio::view_description d;
    d.values = value_type_of(in.type);
    d.mask = !in.mask_data ? logratio::mask_type::none : in.float_mask ? logratio::mask_type::f32
                                                                       : logratio::mask_type::bytes;
    d.train = in.train_data;
    d.rollout = in.rollout_data;
    d.mask_data = in.mask_data;
    d.packed = in.packed;
    d.rows = in.rows;
    d.cols = in.cols;
    d.tokens = in.n;
    d.offsets = in.offsets_data;
    d.offsets64 = in.offsets64;
    d.num_offsets = in.num_offsets;
    return d;
}

/// Calls f(view) with the typed view (the library's one run-time dispatch).
template <class F>
decltype(auto) visit(const paired_input& in, F&& f) {
    return logratio::visit_view(description(in), f);
}

}  // namespace logratio_py
