#pragma once
// What every component does with a masked-in NaN/Inf log-prob: the one
// policy of panel_options, quantile_options and correction_options.
#include "version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// What to do with masked-in NaN/Inf log-probs.
enum class nonfinite_policy {
    raise,  ///< throw value_error naming tensor, sequence and position (default)
    omit    ///< leave the token out and count it in nonfinite_tokens
};

LOGRATIO_NAMESPACE_END
