#pragma once
// Exact comparison of the keys y - t·x of two points for a double t: the
// sign of (y_i - y_j) - t·(x_i - x_j), i.e. whether the exact slope of the
// pair lies below, at or above t. The slope selection (slope_selection.hpp)
// orders points by these keys; an ordering that rounding could get wrong
// would count the pairs on either side of t wrongly, so the keys are kept
// exactly:
//   t·x = p + e exactly (p = fl(t·x), e = fma(t, x, -p)),
//   y - p = s + r exactly (Knuth's TwoSum),
// so key = s + r - e exactly, three doubles. A comparison first looks at the
// rounded keys with an error bound (almost every comparison ends there) and
// otherwise takes the exact sign of the six-term difference with Shewchuk's
// (1997) Grow-Expansion ("Adaptive precision floating-point arithmetic and
// fast robust geometric predicates", Discrete Comput. Geom. 18).
// Valid while nothing overflows or underflows: the caller checks the ranges
// (slope_selection.hpp, slope_data::exact_range).
#include <cmath>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// a + b = s + t exactly (Knuth's TwoSum, any magnitudes).
inline void two_sum(double a, double b, double& s, double& t) {
    s = a + b;
    const double bb = s - a;
    t = (a - (s - bb)) + (b - bb);
}

/// The sign (-1, 0, 1) of the exact sum of a[0..n) (n <= 8): the terms grown
/// into a nonoverlapping expansion of increasing magnitude, zeros dropped;
/// its largest component has the sum's sign.
inline int exact_sign_of_sum(const double* a, int n) {
    double h[8];
    int m = 0;
    for (int i = 0; i < n; ++i) {
        double q = a[i];
        int w = 0;
        for (int j = 0; j < m; ++j) {
            double sum, err;
            two_sum(q, h[j], sum, err);
            q = sum;
            if (err != 0.0) h[w++] = err;
        }
        h[w++] = q;
        m = w;
    }
    for (int j = m; j-- > 0;)
        if (h[j] != 0.0) return h[j] < 0 ? -1 : 1;
    return 0;
}

/// y - t·x as s + r - e exactly, with its rounded value and a bound on the
/// rounding: |approx - (s + r - e)| <= err / 2.
struct exact_key {
    double approx = 0, err = 0;
    double s = 0, r = 0, e = 0;
};

inline exact_key key_of(double t, double x, double y) {
    exact_key k;
    const double p = t * x;
    k.e = std::fma(t, x, -p);
    two_sum(y, -p, k.s, k.r);
    k.approx = k.s + (k.r - k.e);
    // approx = (s + fl(r - e))(1 + d2), fl(r - e) = (r - e)(1 + d1), |d| <= u:
    // |approx - key| <= u|approx|(1 + 2u) + u|r - e|, |r| <= u|s|, |e| <= u|p|;
    // err is twice that (its own rounding and the comparison's are inside)
    k.err = 0x1p-52 * std::fabs(k.approx) + 0x1p-104 * (std::fabs(k.s) + std::fabs(p));
    return k;
}

/// The sign of key a - key b, exactly.
inline int compare_keys(const exact_key& a, const exact_key& b) {
    const double d = a.approx - b.approx;
    if (std::fabs(d) > a.err + b.err) return d < 0 ? -1 : 1;
    const double t[6] = {a.s, a.r, -a.e, -b.s, -b.r, b.e};
    return exact_sign_of_sum(t, 6);
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
