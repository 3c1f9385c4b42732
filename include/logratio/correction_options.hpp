#pragma once
// Moved to <logratio/correction/correction_options.hpp>; this path forwards to it for one release.
#include "correction/correction_options.hpp"
