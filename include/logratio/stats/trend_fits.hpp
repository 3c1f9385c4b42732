#pragma once
// Theil-Sen (regression.hpp) and Kendall's tau (rank_tests.hpp) of one
// series with Knight's pair count done once: the slope selection counts the
// pairs of negative and zero slope with it, Kendall's tau is a function of
// the same counts. The run analysis (runs/runs.hpp) takes both per run.
#include <cstddef>

#include "rank_tests.hpp"
#include "regression.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {

struct trend_fits {
    theil_sen_fit theil_sen;
    kendall_result kendall;
};

/// theil_sen(x, y, n, confidence) and kendall_tau(x, y, n), bitwise the
/// values of the two calls (the same counts, the same arithmetic).
inline trend_fits theil_sen_and_kendall(const double* x, const double* y, std::size_t n, double confidence = 0.95) {
    if (n <= 90) return {theil_sen(x, y, n, confidence), kendall_tau(x, y, n)};
    const auto d = detail::slope_data_of(x, y, n);
    trend_fits f;
    f.kendall = detail::kendall_from_counts(d.counts, n);
    f.theil_sen = detail::theil_sen_of(d, x, y, n, confidence);
    return f;
}

}  // namespace stats
LOGRATIO_NAMESPACE_END
