#pragma once
// k2 = dc^2 / 2: verl's token_k2, seq_sum_k2, seq_mean_k2, seq_max_k2; its
// options keep k2 <= upper. Members: base.hpp.
#include <algorithm>
#include <cmath>
#include <utility>

#include "base.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace rs_stats {

struct k2 : base {
    static constexpr const char* name = "k2";

    template <class V>
    static V value(const V& dc, const V& /*em*/) noexcept {
        return V(0.5) * dc * dc;
    }

    /// delta^2 / 2 <= up
    static std::pair<double, double> inside(double /*lo*/, double up) noexcept {
        const double b = std::sqrt(2.0 * std::max(up, 0.0));
        return {-b, b};
    }
};

}  // namespace rs_stats
LOGRATIO_NAMESPACE_END
