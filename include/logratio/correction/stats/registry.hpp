#pragma once
// The rejection statistics of the correction, as a type list: an option's
// statistic (rs_option::stat) is its position in rs_stat_list. The option
// parser and names (correction_options.hpp), the plan
// (detail/correction_plan.hpp), the kernel (detail/correction_kernel.hpp:
// phase 1, the full step, the reduction; detail/correction_shortcut.hpp) and
// the accumulator's names and serialization (correction_accumulator.hpp)
// iterate over the list: none of them names a statistic.
//
// Adding a statistic, e.g. |delta|:
//   1. one header in this folder (abs_delta.hpp): a struct deriving from
//      rs_stats::base with its name, its value on lanes, the interval of delta
//      where it stays inside its bounds, and whichever of base's defaults
//      differ (a lower bound, no seq_max, other extremes) --
//      base.hpp says what each member means;
//   2. here: its #include, and its type at the end of rs_stat_list.
// That is all: options token_<name>, seq_sum_<name>, seq_mean_<name> (and
// seq_max_<name>) parse, run on every path (scalar and each SIMD level, the
// short cut included) and report verl-style metrics rollout_rs_<option>_*.
// Ids are positions and serialized states store them: append, never reorder.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "k1.hpp"
#include "k2.hpp"
#include "k3.hpp"

LOGRATIO_NAMESPACE_BEGIN

template <class... S>
struct rs_stat_types {
    static constexpr std::size_t size = sizeof...(S);
};

/// Every rejection statistic, in id order.
using rs_stat_list = rs_stat_types<rs_stats::k1, rs_stats::k2, rs_stats::k3>;

constexpr std::size_t rs_stat_count = rs_stat_list::size;

#if defined(__GNUC__) || defined(__clang__)
#define LOGRATIO_RS_INLINE __attribute__((always_inline)) inline
#else
#define LOGRATIO_RS_INLINE inline
#endif

namespace detail {
template <std::size_t J>
using rs_index = std::integral_constant<std::size_t, J>;

template <std::size_t J, class L>
struct rs_stat_at_impl;
template <std::size_t J, class S0, class... S>
struct rs_stat_at_impl<J, rs_stat_types<S0, S...>> : rs_stat_at_impl<J - 1, rs_stat_types<S...>> {};
template <class S0, class... S>
struct rs_stat_at_impl<0, rs_stat_types<S0, S...>> {
    using type = S0;
};

template <class S, class... T>
constexpr std::size_t rs_stat_id_impl(rs_stat_types<T...>) {
    std::size_t id = sizeof...(T), i = 0;
    ((std::is_same<S, T>::value ? (void)(id = i) : (void)0, ++i), ...);
    return id;
}

template <class F, class... S, std::size_t... J>
LOGRATIO_RS_INLINE void for_each_rs_stat_impl(F& f, rs_stat_types<S...>, std::index_sequence<J...>) {
    (f(rs_index<J>{}, S{}), ...);
}

template <class R, class F, class... S, std::size_t... J>
LOGRATIO_RS_INLINE R visit_rs_stat_impl(std::size_t id, F& f, rs_stat_types<S...>, std::index_sequence<J...>) {
    if constexpr (std::is_void<R>::value) {
        (void)((id == J && (f(rs_index<J>{}, S{}), true)) || ...);
    } else {
        R r{};
        (void)((id == J && (r = f(rs_index<J>{}, S{}), true)) || ...);
        return r;
    }
}
}  // namespace detail

/// The statistic of id J.
template <std::size_t J>
using rs_stat_at = typename detail::rs_stat_at_impl<J, rs_stat_list>::type;

/// The id of statistic S (its position in rs_stat_list).
template <class S>
constexpr std::size_t rs_stat_id() {
    return detail::rs_stat_id_impl<S>(rs_stat_list{});
}

/// f(std::integral_constant<std::size_t, J>{}, S{}) for every statistic S of
/// id J, in order (unrolled at compile time).
template <class F>
LOGRATIO_RS_INLINE void for_each_rs_stat(F&& f) {
    detail::for_each_rs_stat_impl(f, rs_stat_list{}, std::make_index_sequence<rs_stat_count>{});
}

/// f(std::integral_constant<std::size_t, J>{}, S{}) for the statistic of id
/// `id` (nothing when id >= rs_stat_count); returns what f returns (a
/// value-initialised one for an unknown id).
template <class F>
LOGRATIO_RS_INLINE auto visit_rs_stat(std::size_t id, F&& f) {
    using R = decltype(f(detail::rs_index<0>{}, rs_stat_at<0>{}));
    return detail::visit_rs_stat_impl<R>(id, f, rs_stat_list{}, std::make_index_sequence<rs_stat_count>{});
}

LOGRATIO_NAMESPACE_END
