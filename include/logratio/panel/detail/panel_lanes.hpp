#pragma once
// The panel kernel's lane sums of a range, which its float64 step
// (panel_kernel.hpp) and its float32-lane loop (panel_f32.hpp) both add to.
#include <limits>

#include "../../detail/simd.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The panel kernel's lane sums over every token of a range (the terms of
/// the header comment), reduced once at the end.
template <class V>
struct panel_lanes {
    using ops = simd_ops<V>;
    V abs = ops::splat(0.0), dk2 = ops::splat(0.0);
    V dmin = ops::splat(std::numeric_limits<double>::infinity());   // of the finished sequences
    V dmax = ops::splat(-std::numeric_limits<double>::infinity());  // (each folds its own in)
    V e = ops::splat(0.0), ek2 = ops::splat(0.0), k3 = ops::splat(0.0), rev = ops::splat(0.0), tv = ops::splat(0.0);
};

}  // namespace detail
LOGRATIO_NAMESPACE_END
