#pragma once
// k3 = expm1(dc) - dc = rho - 1 - log rho (>= 0): verl's token_k3,
// seq_sum_k3, seq_mean_k3, seq_max_k3; its options keep k3 <= upper. Per
// token it is the term of the off-policy k3_kl sum, which the kernel's short
// cut shares. Members: base.hpp.
#include <cmath>
#include <utility>

#include "../../core/limits.hpp"
#include "base.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace rs_stats {

struct k3 : base {
    static constexpr const char* name = "k3";
    static constexpr lanes sums = lanes::kl_k3;

    template <class V>
    static V value(const V& dc, const V& em) noexcept {
        return em - dc;
    }

    /// expm1(delta) - delta <= up: the two roots by bisection
    static std::pair<double, double> inside(double /*lo*/, double up) noexcept {
        auto root = [&](double sign) {
            double a = 0.0, b = sign * detail::clamp_log_ratio;
            if (std::expm1(b) - b <= up) return b;
            for (int i = 0; i < 200; ++i) {
                const double m = 0.5 * (a + b);
                (std::expm1(m) - m <= up ? a : b) = m;
            }
            return a;
        };
        return {root(-1.0), root(1.0)};
    }
};

}  // namespace rs_stats
LOGRATIO_NAMESPACE_END
