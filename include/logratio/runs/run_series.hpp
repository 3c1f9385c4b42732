#pragma once
// One run's metric over its updates: the input of the run analysis
// (runs.hpp), on its own so that readers of run tables and tracker
// histories need neither Boost.Math nor the statistics.
#include <string>
#include <vector>

#include "../core/version.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// One run's metric over its updates.
struct run_series {
    std::string run, group;
    std::vector<double> update;  ///< update numbers (need not be contiguous)
    std::vector<double> value;   ///< the metric; NaN = missing
};

LOGRATIO_NAMESPACE_END
