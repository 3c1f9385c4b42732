// Reading the paired log-prob arguments (see paired_input.hpp).
#include "paired_input.hpp"

#include <cstring>
#include <sstream>

namespace logratio_py {
namespace {

dtype_code canonical(dtype_code c) { return c == dtype_code::u16 ? dtype_code::bf16 : c; }

void check_logprobs(const tensor_arg& t) {
    if (!is_logprob_dtype(t.dtype))
        throw py::type_error(t.describe() + ": dtype " + t.dtype_name + " is not supported for log-probs (" +
                             logprob_dtypes_text() + ")");
}

void check_same(const tensor_arg& a, const tensor_arg& b) {
    if (canonical(a.dtype) != canonical(b.dtype))
        throw py::type_error(a.name + " and " + b.name + " must have the same dtype: " + a.name + " is " +
                             a.dtype_name + ", " + b.name + " is " + b.dtype_name);
    if (a.shape != b.shape)
        throw py::value_error(b.name + " has shape " + b.shape_str() + " but " + a.name + " has shape " +
                              a.shape_str() + " (they must match)");
}

/// Element (i, j) of a 1-D or 2-D tensor as a number.
double mask_value(const tensor_arg& m, std::int64_t i, std::int64_t j) {
    std::int64_t off = i * m.strides[0];
    if (m.shape.size() == 2) off += j * m.strides[1];
    const char* p = static_cast<const char*>(m.data) + off * std::int64_t(m.itemsize);
    switch (m.dtype) {
        case dtype_code::f32: { float v; std::memcpy(&v, p, 4); return v; }
        case dtype_code::f64: { double v; std::memcpy(&v, p, 8); return v; }
        case dtype_code::i8: { std::int8_t v; std::memcpy(&v, p, 1); return v; }
        case dtype_code::i16: { std::int16_t v; std::memcpy(&v, p, 2); return v; }
        case dtype_code::i32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
        case dtype_code::i64: { std::int64_t v; std::memcpy(&v, p, 8); return double(v); }
        default: { std::uint8_t v; std::memcpy(&v, p, 1); return v; }  // bool, uint8
    }
}

/// Element (i, j) as a mask value (1 = in; check_binary_mask ran first).
bool mask_at(const tensor_arg& m, std::int64_t i, std::int64_t j) { return mask_value(m, i, j) != 0.0; }

/// Whether every value of a contiguous one-byte or float32 mask is 0 or 1,
/// with no per-element dtype switch (the element-wise walk below cost
/// ~2.5 ms on 2^20 values, twice the panel's kernel). False where the mask is of another kind or holds a
/// bad value: then the walk finds the value and names it.
bool contiguous_mask_is_binary(const tensor_arg& m) {
    if (!m.c_contiguous()) return false;
    std::size_t n = 1;
    for (auto d : m.shape) n *= std::size_t(d);
    bool ok = true;
    if (m.dtype == dtype_code::boolean || m.dtype == dtype_code::u8 || m.dtype == dtype_code::i8) {
        return logratio::detail::bytes_are_binary(m.data, n);  // int8 -1 is 0xFF: bad
    }
    if (m.dtype == dtype_code::f32) {
        const auto* f = static_cast<const float*>(m.data);
        for (std::size_t i = 0; i < n; ++i) ok &= (f[i] == 0.0f) | (f[i] == 1.0f);
        return ok;
    }
    return false;
}

/// Every mask value is 0 or 1 (0.5, 2 and NaN would count silently):
/// ValueError naming the argument, the row and the column.
void check_binary_mask(const tensor_arg& m) {
    if (contiguous_mask_is_binary(m)) return;
    const std::int64_t rows = m.shape.size() == 2 ? m.shape[0] : m.shape.empty() ? 0 : 1;
    const std::int64_t cols = m.shape.empty() ? 0 : m.shape.back();
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
            const double x = m.shape.size() == 2 ? mask_value(m, r, c) : mask_value(m, c, 0);
            if (x == 0.0 || x == 1.0) continue;
            std::ostringstream o;
            o << m.name << ": value " << x << " at "
              << (m.shape.size() == 2 ? "row " + std::to_string(r) + ", column " : std::string("index "))
              << c << " is not 0 or 1 (a mask is binary: 1 counts, 0 leaves the token out)";
            throw py::value_error(o.str());
        }
}

/// A contiguous copy of a 1-D or 2-D tensor (odd strides only).
std::vector<char> contiguous_copy(const tensor_arg& t) {
    const std::int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
    const std::int64_t cols = t.shape.back();
    std::vector<char> out(std::size_t(rows * cols) * t.itemsize);
    const auto* base = static_cast<const char*>(t.data);
    const std::int64_t rs = t.shape.size() == 2 ? t.strides[0] : 0, cs = t.strides.back();
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
            std::memcpy(out.data() + std::size_t(r * cols + c) * t.itemsize,
                        base + (r * rs + c * cs) * std::int64_t(t.itemsize), t.itemsize);
    return out;
}

void read_offsets(paired_input& in, py::handle cu_seqlens) {
    in.offsets = read_tensor(cu_seqlens, "cu_seqlens");
    const tensor_arg& o = *in.offsets;
    if (o.dtype != dtype_code::i32 && o.dtype != dtype_code::i64)
        throw py::type_error(o.describe() + ": dtype " + o.dtype_name + " is not supported (int32 or int64)");
    if (o.shape.size() != 1) throw py::value_error(o.describe() + ": must be 1-D [S + 1]");
    in.num_offsets = std::uint64_t(o.shape[0]);
    if (o.c_contiguous()) {
        in.offsets_data = o.data;
        in.offsets64 = o.dtype == dtype_code::i64;
        return;
    }
    in.offsets_copy.resize(in.num_offsets);
    for (std::uint64_t i = 0; i < in.num_offsets; ++i) {
        const char* p = static_cast<const char*>(o.data) + std::int64_t(i) * o.strides[0] * std::int64_t(o.itemsize);
        if (o.dtype == dtype_code::i64) std::memcpy(&in.offsets_copy[i], p, 8);
        else { std::int32_t v; std::memcpy(&v, p, 4); in.offsets_copy[i] = v; }
    }
    in.offsets_data = in.offsets_copy.data();
    in.offsets64 = true;
}

/// Log-prob pointers and the layout (padded, strided rows, packed).
void read_layout(paired_input& in, bool packed_input) {
    std::vector<tensor_arg*> arrays{&in.train, &in.rollout};
    if (in.old) arrays.push_back(&*in.old);
    if (packed_input) {
        if (in.train.shape.size() != 1)
            throw py::value_error(in.train.describe() + ": with cu_seqlens the log-probs are packed 1-D [N]");
        in.packed = true;
        in.n = std::uint64_t(in.train.shape[0]);
    } else {
        if (in.train.shape.size() != 2)
            throw py::value_error(in.train.describe() +
                                  ": expected padded [B, T] log-probs (or 1-D packed ones with cu_seqlens)");
        in.rows = std::uint64_t(in.train.shape[0]);
        in.cols = std::uint64_t(in.train.shape[1]);
        in.n = in.rows * in.cols;
        if (in.n == 0) {
            // Empty is empty: [B, 0] and [0, T] alike. (torch gives a [B, 0]
            // tensor row stride 1 and a null data pointer, which read as
            // strided rows holding B - 1 tokens before.)
            in.train_data = in.train.data;
            in.rollout_data = in.rollout.data;
            if (in.old) in.old_data = in.old->data;
            in.row_stride = in.cols;
            return;
        }
    }
    // Rows in place when every array has adjacent elements and one row stride.
    bool in_place = true;
    const std::int64_t stride = packed_input || in.rows <= 1 ? std::int64_t(in.cols) : in.train.strides[0];
    for (const tensor_arg* a : arrays) {
        if (!a->unit_last_stride()) in_place = false;
        if (!packed_input && in.rows > 1 && a->strides[0] != stride) in_place = false;
    }
    if (!packed_input && stride < std::int64_t(in.cols)) in_place = false;
    const void** data[3] = {&in.train_data, &in.rollout_data, &in.old_data};
    std::vector<char>* copies[3] = {&in.train_copy, &in.rollout_copy, &in.old_copy};
    for (std::size_t k = 0; k < arrays.size(); ++k) {
        if (in_place) {
            *data[k] = arrays[k]->data;
        } else {
            *copies[k] = contiguous_copy(*arrays[k]);
            *data[k] = copies[k]->data();
        }
    }
    in.row_stride = in_place && !packed_input ? std::uint64_t(stride) : in.cols;
    if (!packed_input && in.rows > 0 && in.row_stride > in.cols) {
        // Strided rows: one packed sequence per row, the gaps masked out.
        in.strided_rows = in.packed = true;
        in.n = (in.rows - 1) * in.row_stride + in.cols;
        in.offsets_copy.resize(in.rows + 1);
        for (std::uint64_t r = 0; r < in.rows; ++r) in.offsets_copy[r] = std::int64_t(r * in.row_stride);
        in.offsets_copy[in.rows] = std::int64_t(in.n);
        in.offsets_data = in.offsets_copy.data();
        in.offsets64 = true;
        in.num_offsets = in.rows + 1;
    }
}

void read_mask(paired_input& in) {
    if (in.mask) {
        const tensor_arg& m = *in.mask;
        if (!is_mask_dtype(m.dtype))
            throw py::type_error(m.describe() + ": dtype " + m.dtype_name + " is not supported for a mask (" +
                                 mask_dtypes_text() + ")");
        if (m.shape != in.train.shape)
            throw py::value_error(m.name + " has shape " + m.shape_str() + " but " + in.train.name + " has shape " +
                                  in.train.shape_str() + " (they must match)");
        check_binary_mask(m);
        if (!in.strided_rows && m.c_contiguous()) {
            if (m.dtype == dtype_code::boolean || m.dtype == dtype_code::u8 || m.dtype == dtype_code::i8) {
                in.mask_data = m.data;
                return;
            }
            if (m.dtype == dtype_code::f32) {
                in.mask_data = m.data;
                in.float_mask = true;
                return;
            }
        }
    } else if (!in.strided_rows) {
        return;  // every token counts
    }
    // A uint8 copy in the view's layout (zeros in the gaps between strided rows).
    in.mask_copy.assign(in.n, 0);
    if (in.packed && !in.strided_rows) {
        for (std::uint64_t i = 0; i < in.n; ++i) in.mask_copy[i] = mask_at(*in.mask, std::int64_t(i), 0);
    } else {
        for (std::uint64_t r = 0; r < in.rows; ++r)
            for (std::uint64_t c = 0; c < in.cols; ++c)
                in.mask_copy[r * in.row_stride + c] = in.mask ? mask_at(*in.mask, std::int64_t(r), std::int64_t(c)) : 1;
    }
    in.mask_data = in.mask_copy.data();
}

}  // namespace

paired_input read_paired(py::handle train, py::handle rollout, py::handle mask, py::handle cu_seqlens, py::handle old,
                         const char* train_name, const char* rollout_name, const char* mask_name,
                         const char* old_name) {
    paired_input in;
    in.train = read_tensor(train, train_name);
    in.rollout = read_tensor(rollout, rollout_name);
    check_logprobs(in.train);
    check_logprobs(in.rollout);
    check_same(in.train, in.rollout);
    if (!old.is_none()) {
        in.old = read_tensor(old, old_name);
        check_logprobs(*in.old);
        check_same(in.train, *in.old);
    }
    in.type = canonical(in.train.dtype);
    in.mask = read_optional(mask, mask_name);
    const bool packed_input = !cu_seqlens.is_none();
    if (packed_input) read_offsets(in, cu_seqlens);
    read_layout(in, packed_input);
    read_mask(in);
    return in;
}

}  // namespace logratio_py
