#pragma once
// Moved to <logratio/quantiles/quantiles.hpp>; this path forwards to it for one release.
#include "quantiles/quantiles.hpp"
