#pragma once
// Moved to <logratio/panel/mismatch_split.hpp>; this path forwards to it for one release.
#include "panel/mismatch_split.hpp"
