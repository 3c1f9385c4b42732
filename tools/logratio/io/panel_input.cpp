#include "panel_input.hpp"

#include <cstring>
#include <string>

#include <logratio/core/error.hpp>

namespace logratio_cli {
namespace input_detail {

namespace {

[[noreturn]] void fail(const std::string& msg) { throw logratio::shape_error(msg); }

/// The mask as 0/1 bytes (mask_on: nonzero counts) in a buffer kept alive
/// by `keep`: I32, I64 and F64 masks, so that every view has a byte or
/// float mask -- the mask types logratio::dispatch holds kernels for.
template <class M>
const std::uint8_t* mask_bytes(const tensor& t, keep_alive& keep) {
    const M* m = typed<M>(t, keep);
    const std::uint64_t n = t.numel();
    std::unique_ptr<unsigned char[]> buf(new unsigned char[n ? n : 1]);
    for (std::uint64_t i = 0; i < n; ++i) buf[i] = logratio::mask_on(m[i]) ? 1 : 0;
    const std::uint8_t* p = buf.get();
    keep.push_back(std::move(buf));
    return p;
}

/// The log-probs' element type and data (aligned for it).
void describe_values(const panel_tensors& in, keep_alive& keep, logratio::view_description& d) {
    d.values = value_type_of(*in.train);
    logratio::visit_value_type(d.values, [&](auto tag) {
        d.train = typed<decltype(tag)>(*in.train, keep);
        d.rollout = typed<decltype(tag)>(*in.rollout, keep);
    });
}

/// The mask's type and data: bytes in place (U8, BOOL, I8: nonzero counts),
/// F32 in place, I32 / I64 / F64 converted to bytes.
void describe_mask(const tensor* mask, keep_alive& keep, logratio::view_description& d) {
    if (!mask) return;
    d.mask = logratio::mask_type::bytes;
    switch (mask->type) {
        case dtype::u8:
        case dtype::boolean:
        case dtype::i8: d.mask_data = typed<std::uint8_t>(*mask, keep); return;
        case dtype::f32:
            d.mask = logratio::mask_type::f32;
            d.mask_data = typed<float>(*mask, keep);
            return;
        case dtype::i32: d.mask_data = mask_bytes<std::int32_t>(*mask, keep); return;
        case dtype::i64: d.mask_data = mask_bytes<std::int64_t>(*mask, keep); return;
        case dtype::f64: d.mask_data = mask_bytes<double>(*mask, keep); return;
        default: fail(std::string("mask: unsupported dtype ") + dtype_label(mask->type));
    }
}

}  // namespace

const void* aligned_data(const tensor& t, std::size_t align, keep_alive& keep) {
    if (reinterpret_cast<std::uintptr_t>(t.data) % align == 0) return t.data;
    std::unique_ptr<unsigned char[]> buf(new unsigned char[t.nbytes + alignof(std::max_align_t)]);
    auto* p = buf.get();
    while (reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) != 0) ++p;
    std::memcpy(p, t.data, t.nbytes);
    keep.push_back(std::move(buf));
    return p;
}

logratio::value_type value_type_of(const tensor& t) {
    switch (t.type) {
        case dtype::f32: return logratio::value_type::f32;
        case dtype::f64: return logratio::value_type::f64;
        case dtype::f16: return logratio::value_type::f16;
        case dtype::bf16: return logratio::value_type::bf16;
        default: fail(t.name + ": dtype " + dtype_label(t.type) + " is not F32/F64/F16/BF16");
    }
}

void check(const panel_tensors& in) {
    if (!in.train) fail("missing tensor 'train_logprobs'");
    if (!in.rollout) fail("missing tensor 'rollout_logprobs'");
    const tensor& tr = *in.train;
    const tensor& ro = *in.rollout;
    auto is_float = [](dtype d) { return d == dtype::f32 || d == dtype::f64 || d == dtype::f16 || d == dtype::bf16; };
    if (!is_float(tr.type)) fail(std::string("train_logprobs: dtype ") + dtype_label(tr.type) + " is not F32/F64/F16/BF16");
    if (ro.type != tr.type)
        fail(std::string("dtype mismatch: train_logprobs is ") + dtype_label(tr.type) + ", rollout_logprobs is " +
             dtype_label(ro.type));
    if (ro.shape != tr.shape)
        fail("shape mismatch: train_logprobs is " + tr.shape_string() + ", rollout_logprobs is " + ro.shape_string());
    if (in.offsets) {
        if (tr.shape.size() != 1) fail("packed layout (cu_seqlens given): train_logprobs must be 1-D, is " + tr.shape_string());
        if (in.offsets->shape.size() != 1) fail("cu_seqlens must be 1-D, is " + in.offsets->shape_string());
        if (in.offsets->type != dtype::i32 && in.offsets->type != dtype::i64)
            fail(std::string("cu_seqlens: dtype ") + dtype_label(in.offsets->type) + ", must be I32 or I64");
        if (in.mask && in.mask->shape != tr.shape)
            fail("shape mismatch: mask is " + in.mask->shape_string() + ", train_logprobs is " + tr.shape_string());
    } else {
        if (!in.mask) fail("missing tensor: need 'mask' (padded layout) or 'cu_seqlens' (packed layout)");
        if (tr.shape.size() != 2 && tr.shape.size() != 1)
            fail("padded layout: train_logprobs must be [B, T], is " + tr.shape_string());
        if (in.mask->shape != tr.shape)
            fail("shape mismatch: mask is " + in.mask->shape_string() + ", train_logprobs is " + tr.shape_string());
    }
}

logratio::view_description describe(const panel_tensors& in, keep_alive& keep) {
    logratio::view_description d;
    describe_values(in, keep, d);
    describe_mask(in.mask, keep, d);
    if (in.offsets) {
        d.packed = true;
        d.tokens = in.train->numel();
        d.num_offsets = in.offsets->numel();
        d.offsets64 = in.offsets->type == dtype::i64;
        d.offsets = d.offsets64 ? static_cast<const void*>(typed<std::int64_t>(*in.offsets, keep))
                                : static_cast<const void*>(typed<std::int32_t>(*in.offsets, keep));
    } else {
        const auto& sh = in.train->shape;
        d.rows = sh.size() == 2 ? sh[0] : 1;
        d.cols = sh.size() == 2 ? sh[1] : (sh.empty() ? 1 : sh[0]);
    }
    return d;
}

}  // namespace input_detail
}  // namespace logratio_cli
