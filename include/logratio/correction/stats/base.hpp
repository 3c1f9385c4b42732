#pragma once
// What a rejection statistic is: the members every statistic's header
// (k1.hpp, k2.hpp, k3.hpp) defines or takes from `base` below, and what each
// one means. registry.hpp lists the statistics; correction_options.hpp,
// detail/correction_plan.hpp, detail/correction_kernel.hpp,
// detail/correction_shortcut.hpp and correction_accumulator.hpp iterate over
// that list.
//
// A statistic x is a per-token value of dc = clamp(delta, +-20). Every
// statistic defines
//   name                            its name in the option names, e.g. "k2" in "seq_max_k2";
//   template <class V> V value(const V& dc, const V& em)
//                                   x on SIMD lanes and, with V = double, on the scalar
//                                   path (em = expm1(dc) in the kernel's lane arithmetic;
//                                   operators, or detail::simd_ops<V>'s abs, min, max, ...);
//                                   value(0, 0) must be 0 (masked-out lanes carry dc = 0);
//   std::pair<double, double> inside(double lo, double up)
//                                   the interval of delta (|delta| <= 20) where
//                                   lo <= x <= up, for the kernel's short cut (x monotone
//                                   in delta on each side of 0, so the interval is one);
// and takes the rest from `base` unless it differs.
#include <algorithm>
#include <utility>

#include "../../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {
/// The kernels' lane operations (detail/simd.hpp), declared here so that a
/// statistic's value() may use them without this header pulling in xsimd:
/// value() is instantiated only by the kernel, where they are defined.
template <class V>
struct simd_ops;
}  // namespace detail

namespace rs_stats {

/// Which of the correction kernel's lane sums a statistic's sums come from.
enum class lanes {
    own,       ///< its own per-token sums, sums of squares and minimum (the default)
    minus_dc,  ///< x = -dc: sums, squares and extremes come from the kernel's sums and extremes of dc
    kl_k3,     ///< x = expm1(dc) - dc: the short cut's sum of x is the kernel's kl_k3 sum
};

/// The defaults: an upper bound only, x >= 0 (so a masked-out lane, x = 0,
/// passes every bound), every aggregate, its own lanes, x convex in dc with
/// its minimum at dc = 0.
struct base {
    /// true: the option keeps lower <= x <= upper, its thresholds are bounds
    /// on a ratio ("lower_upper", or "u" for [1/u, u]; both positive) and its
    /// metrics include the _fraction_low / _seq_fraction_low counts; false:
    /// it keeps x <= upper (one threshold).
    static constexpr bool has_lower = false;
    /// seq_max_<name> is an option (a maximum needs x >= 0).
    static constexpr bool seq_max = true;
    static constexpr lanes sums = lanes::own;

    /// The option's thresholds (rs_option::lower, rs_option::upper) in the
    /// statistic's own space: the bounds x is tested against and clamped to.
    static double lower(double /*lower*/, double /*upper*/) noexcept { return 0.0; }
    static double upper(double /*lower*/, double upper) noexcept { return upper; }

    /// The smallest and largest x over tokens whose dc spans [dcmin, dcmax]:
    /// `tracked_min` is the kernel's minimum of x, `at(dc)` x at one dc in the
    /// kernel's lane arithmetic. Convex with its minimum at 0: the largest x
    /// lies at an extreme of dc.
    template <class F>
    static std::pair<double, double> extremes(double dcmin, double dcmax, double tracked_min, F&& at) {
        return {tracked_min, std::max(at(dcmin), at(dcmax))};
    }
};

}  // namespace rs_stats
LOGRATIO_NAMESPACE_END
