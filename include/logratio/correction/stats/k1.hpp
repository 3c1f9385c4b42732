#pragma once
// k1 = -dc = log(mu / pi) (clamped): verl's token_k1, seq_sum_k1,
// seq_mean_k1 (Geo-RS); an IcePop band is token_k1. Its options keep
// lower <= mu/pi <= upper, that is log lower <= k1 <= log upper. No seq_max
// (verl has none). x is linear in dc, so its sums and extremes are the
// kernel's own sums and extremes of dc. Members: base.hpp.
#include <cmath>
#include <utility>

#include "base.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace rs_stats {

struct k1 : base {
    static constexpr const char* name = "k1";
    static constexpr bool has_lower = true;
    static constexpr bool seq_max = false;
    static constexpr lanes sums = lanes::minus_dc;

    static double lower(double lower, double /*upper*/) noexcept { return std::log(lower); }
    static double upper(double /*lower*/, double upper) noexcept { return std::log(upper); }

    template <class V>
    static V value(const V& dc, const V& /*em*/) noexcept {
        return V(0.0) - dc;
    }

    /// -delta in [lo, up]
    static std::pair<double, double> inside(double lo, double up) noexcept { return {-up, -lo}; }

    template <class F>
    static std::pair<double, double> extremes(double dcmin, double dcmax, double /*tracked_min*/, F&& /*at*/) {
        return {-dcmax, -dcmin};
    }
};

}  // namespace rs_stats
LOGRATIO_NAMESPACE_END
