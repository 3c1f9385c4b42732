#pragma once
// The numbers every module shares, defined once.
#include <algorithm>
#include <limits>

#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Log-probs above this are errors (value_error); at or below it they are
/// log-probabilities (producers' log-softmax rounds a certain token to a
/// tiny positive). The default of every `positive_tolerance` option.
constexpr double default_positive_tolerance = 1e-6;

/// The value of a statistic of no input (the empty-input rule, error.hpp):
/// NaN, null in JSON.
constexpr double undefined = std::numeric_limits<double>::quiet_NaN();

namespace detail {
/// The ratio terms use delta clamped to [-20, 20] (rho in [2e-9, 5e8]):
/// SPEC's clamp, as verl's.
constexpr double clamp_log_ratio = 20.0;

inline double clamp_delta(double d) noexcept { return std::min(std::max(d, -clamp_log_ratio), clamp_log_ratio); }
}  // namespace detail

LOGRATIO_NAMESPACE_END
