#pragma once
// Moved to <logratio/correction/flavour_options.hpp>; this path forwards to it for one release.
#include "correction/flavour_options.hpp"
