#pragma once
// Moved to <logratio/core/error.hpp>; this path forwards to it for one release.
#include "core/error.hpp"
