#pragma once
// Moved to <logratio/core/moments.hpp>; this path forwards to it for one release.
#include "core/moments.hpp"
