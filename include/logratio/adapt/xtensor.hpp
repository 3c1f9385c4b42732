#pragma once
// Views from xtensor containers and adaptors (xt::xtensor, xt::xarray,
// xt::adapt over a torch tensor's data_ptr()): shapes are taken from the
// containers and checked; memory must be row-major contiguous.
//
//   auto t = xt::adapt(ptr_t, n, xt::no_ownership(), std::array<size_t, 2>{B, T});
//   auto v = logratio::xt_padded(t, r, m);
#include <cstdint>
#include <string>
#include <type_traits>

#include <xtensor/xlayout.hpp>

#include "../core/error.hpp"
#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN

namespace detail {
template <class E>
void check_xt(const E& e, std::size_t dim, const char* name) {
    if (e.dimension() != dim)
        throw shape_error(concat(name, ": expected a ", dim, "-D tensor, got ", e.dimension(), "-D"));
    if (dim > 1 && e.layout() != xt::layout_type::row_major)
        throw shape_error(concat(name, ": must be row-major contiguous"));
}
template <class E>
auto xt_data(const E& e) {
    return e.data() + e.data_offset();
}
}  // namespace detail

/// Padded view: train and rollout [B, T], mask [B, T].
template <class ET, class EM>
auto xt_padded(const ET& train, const ET& rollout, const EM& mask) {
    detail::check_xt(train, 2, "train_logprobs");
    detail::check_xt(rollout, 2, "rollout_logprobs");
    detail::check_xt(mask, 2, "mask");
    const auto& s = train.shape();
    if (rollout.shape() != s || mask.shape() != s)
        throw shape_error(detail::concat("xt_padded: shape mismatch: train [", s[0], ", ", s[1], "], rollout [",
                                         rollout.shape()[0], ", ", rollout.shape()[1], "], mask [", mask.shape()[0],
                                         ", ", mask.shape()[1], "]"));
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(detail::xt_data(train))>>;
    using M = std::remove_cv_t<std::remove_pointer_t<decltype(detail::xt_data(mask))>>;
    return paired_view<T, M>::padded(detail::xt_data(train), detail::xt_data(rollout), detail::xt_data(mask), s[0],
                                     s[1]);
}

/// Packed view: train and rollout [N], cu_seqlens [S+1].
template <class ET, class EO>
auto xt_packed(const ET& train, const ET& rollout, const EO& cu_seqlens) {
    detail::check_xt(train, 1, "train_logprobs");
    detail::check_xt(rollout, 1, "rollout_logprobs");
    detail::check_xt(cu_seqlens, 1, "cu_seqlens");
    if (rollout.size() != train.size())
        throw shape_error(detail::concat("xt_packed: train has ", train.size(), " tokens, rollout ", rollout.size()));
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(detail::xt_data(train))>>;
    return paired_view<T, std::uint8_t>::packed(detail::xt_data(train), detail::xt_data(rollout), train.size(),
                                                detail::xt_data(cu_seqlens), cu_seqlens.size());
}

/// Packed view with a 1-D mask [N].
template <class ET, class EO, class EM>
auto xt_packed(const ET& train, const ET& rollout, const EO& cu_seqlens, const EM& mask) {
    detail::check_xt(train, 1, "train_logprobs");
    detail::check_xt(rollout, 1, "rollout_logprobs");
    detail::check_xt(cu_seqlens, 1, "cu_seqlens");
    detail::check_xt(mask, 1, "mask");
    if (rollout.size() != train.size() || mask.size() != train.size())
        throw shape_error(detail::concat("xt_packed: train has ", train.size(), " tokens, rollout ", rollout.size(),
                                         ", mask ", mask.size()));
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(detail::xt_data(train))>>;
    using M = std::remove_cv_t<std::remove_pointer_t<decltype(detail::xt_data(mask))>>;
    return paired_view<T, M>::packed(detail::xt_data(train), detail::xt_data(rollout), train.size(),
                                     detail::xt_data(cu_seqlens), cu_seqlens.size(), detail::xt_data(mask));
}

LOGRATIO_NAMESPACE_END
