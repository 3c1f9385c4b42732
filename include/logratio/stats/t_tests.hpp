#pragma once
// Student-t inference on means: the confidence interval of one mean, and
// Welch's unequal-variance two-sample test with the interval of the
// difference of means (scipy.stats.ttest_ind(a, b, equal_var=False)).
#include <cmath>
#include <cstddef>

#include "descriptive.hpp"
#include "regression.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {

/// Mean with its two-sided Student-t confidence interval (n - 1 df).
struct mean_interval {
    std::size_t n = 0;
    double mean = nan;
    double low = nan, high = nan;  ///< NaN for n < 2 (no spread to estimate)
};

inline mean_interval t_interval(const double* x, std::size_t n, double confidence = 0.95) {
    mean_interval r;
    r.n = n;
    r.mean = mean(x, n);
    if (n < 2) return r;
    const double se = std::sqrt(variance(x, n, 1) / static_cast<double>(n));
    const double tc = t_critical(confidence, static_cast<double>(n - 1));
    r.low = r.mean - tc * se;
    r.high = r.mean + tc * se;
    return r;
}

/// Welch's t-test of mean(a) - mean(b).
struct welch_result {
    double t = nan, df = nan, pvalue = nan;  ///< two-sided
    double mean_diff = nan;                  ///< mean(a) - mean(b)
    double ci_low = nan, ci_high = nan;      ///< Welch interval of the difference
};

/// scipy.stats.ttest_ind(a, b, equal_var=False): t = (ā - b̄) / sqrt(va/na + vb/nb),
/// Welch-Satterthwaite df (1 when it is 0/0, as scipy). NaN unless both
/// samples have at least two values.
inline welch_result welch_ttest(const double* a, std::size_t na, const double* b, std::size_t nb,
                                double confidence = 0.95) {
    welch_result r;
    r.mean_diff = mean(a, na) - mean(b, nb);
    if (na < 2 || nb < 2) return r;
    const double va = variance(a, na, 1) / static_cast<double>(na);
    const double vb = variance(b, nb, 1) / static_cast<double>(nb);
    double df = (va + vb) * (va + vb) /
                (va * va / static_cast<double>(na - 1) + vb * vb / static_cast<double>(nb - 1));
    if (std::isnan(df)) df = 1.0;
    const double se = std::sqrt(va + vb);
    r.df = df;
    r.t = r.mean_diff / se;
    r.pvalue = t_two_sided_p(r.t, df);
    const double tc = t_critical(confidence, df);
    r.ci_low = r.mean_diff - tc * se;
    r.ci_high = r.mean_diff + tc * se;
    return r;
}

}  // namespace stats
LOGRATIO_NAMESPACE_END
