#pragma once
// Moved to <logratio/quantiles/kll_sketch.hpp>; this path forwards to it for one release.
#include "quantiles/kll_sketch.hpp"
