#pragma once
// Moved to <logratio/correction/is_level.hpp>; this path forwards to it for one release.
#include "correction/is_level.hpp"
