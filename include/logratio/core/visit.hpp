#pragma once
// One run-time dispatch from dtypes to a typed paired_view: a tensor
// library, a file reader or a binding knows the element types only at run
// time; visit_view() calls f with the paired_view<T, M> they describe. The
// CLI (tools/logratio/panel_input.hpp) and the Python module
// (python/src/paired_input.hpp) both go through it.
//
//   logratio::view_description d;
//   d.values = logratio::value_type::bf16;  d.mask = logratio::mask_type::bytes;
//   d.train = t; d.rollout = r; d.mask_data = m; d.rows = B; d.cols = T;
//   auto p = logratio::visit_view(d, [](const auto& v) { return logratio::compute_panel(v); });
#include <cstdint>

#include "dtype.hpp"
#include "view.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Element type of the log-probs.
enum class value_type { f32, f64, f16, bf16 };

/// Element type of the mask: none (every token counts), bytes (bool, uint8
/// or int8: nonzero counts) or float32 (nonzero counts). Other mask dtypes
/// are converted to bytes by the caller.
enum class mask_type { none, bytes, f32 };

/// A paired view described at run time. Padded: rows x cols elements, rows
/// contiguous. Packed: `tokens` elements and num_offsets cu_seqlens entries
/// (int64 or int32).
struct view_description {
    value_type values = value_type::f32;
    mask_type mask = mask_type::none;
    const void* train = nullptr;
    const void* rollout = nullptr;
    const void* mask_data = nullptr;
    bool packed = false;
    std::uint64_t rows = 0, cols = 0;
    std::uint64_t tokens = 0;
    const void* offsets = nullptr;
    bool offsets64 = true;
    std::uint64_t num_offsets = 0;
};

/// Calls f(T{}) with the element type t names (float, double, float16,
/// bfloat16): the dispatch of arrays that are not paired views (logits).
template <class F>
decltype(auto) visit_value_type(value_type t, F&& f) {
    switch (t) {
        case value_type::f64: return f(double{});
        case value_type::f16: return f(float16{});
        case value_type::bf16: return f(bfloat16{});
        case value_type::f32: break;
    }
    return f(float{});
}

namespace detail {
template <class T, class M, class F>
decltype(auto) visit_layout(const view_description& d, F&& f) {
    const T* tr = static_cast<const T*>(d.train);
    const T* ro = static_cast<const T*>(d.rollout);
    const M* mk = static_cast<const M*>(d.mask_data);
    using view = paired_view<T, M>;
    if (!d.packed) return f(view::padded(tr, ro, mk, d.rows, d.cols));
    if (d.offsets64)
        return f(view::packed(tr, ro, d.tokens, static_cast<const std::int64_t*>(d.offsets), d.num_offsets, mk));
    return f(view::packed(tr, ro, d.tokens, static_cast<const std::int32_t*>(d.offsets), d.num_offsets, mk));
}
template <class T, class F>
decltype(auto) visit_mask(const view_description& d, F&& f) {
    if (d.mask == mask_type::f32) return visit_layout<T, float>(d, f);
    return visit_layout<T, std::uint8_t>(d, f);  // none: a null byte mask
}
}  // namespace detail

/// Calls f(view) with the typed paired_view d describes (shapes and offsets
/// are checked by the view's construction: shape_error) and returns what f
/// returns. Eight instantiations of f: four value types x two mask types.
template <class F>
decltype(auto) visit_view(const view_description& d, F&& f) {
    return visit_value_type(d.values, [&](auto tag) -> decltype(auto) {
        return detail::visit_mask<decltype(tag)>(d, f);
    });
}

LOGRATIO_NAMESPACE_END
