#pragma once
// From tensors (safetensors or .npy) to a typed logratio::paired_view:
// checks names, dtypes and shapes of train/rollout/mask/cu_seqlens against
// each other, then calls f(view) with the view's concrete element types.
// The checks and the description of the view are compiled
// (panel_input.cpp); only the call of f is a template.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <logratio/core/visit.hpp>

#include "tensor.hpp"

namespace logratio_cli {

struct panel_tensors {
    const tensor* train = nullptr;
    const tensor* rollout = nullptr;
    const tensor* mask = nullptr;     ///< padded: required; packed: optional
    const tensor* offsets = nullptr;  ///< packed layout when present
};

namespace input_detail {

/// Buffers that keep converted or realigned copies alive.
using keep_alive = std::vector<std::unique_ptr<unsigned char[]>>;

/// t's data, copied into `keep` when the mapped data is not aligned to
/// `align` (safetensors does not promise alignment).
const void* aligned_data(const tensor& t, std::size_t align, keep_alive& keep);

/// Element pointer for t (aligned for T; see aligned_data).
template <class T>
const T* typed(const tensor& t, keep_alive& keep) {
    return static_cast<const T*>(aligned_data(t, alignof(T), keep));
}

/// The library's element type of a log-prob or logit tensor (F32, F64, F16,
/// BF16); any other dtype is a shape_error naming the tensor.
logratio::value_type value_type_of(const tensor& t);

/// Checks the tensors against each other (names, dtypes, shapes, layout);
/// shape_error naming what is wrong.
void check(const panel_tensors& in);

/// The view the checked tensors describe (logratio::visit_view types it);
/// masks of I32 / I64 / F64 become bytes in `keep`.
logratio::view_description describe(const panel_tensors& in, keep_alive& keep);

}  // namespace input_detail

/// The tokens a quantile selection takes: the masked-in ones whose two
/// log-probs are finite (with nonfinite_policy::raise the selection has
/// already thrown on any other).
template <class T, class M>
std::uint64_t selected_tokens(const logratio::paired_view<T, M>& v) {
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < v.size(); ++i)
        n += v.counts(i) && std::isfinite(logratio::to_double(v.train()[i]) - logratio::to_double(v.rollout()[i]));
    return n;
}

/// Validates the tensors against each other and calls f(view).
template <class F>
void with_panel_view(const panel_tensors& in, F&& f) {
    input_detail::check(in);
    input_detail::keep_alive keep;
    logratio::visit_view(input_detail::describe(in, keep), f);
}

}  // namespace logratio_cli
