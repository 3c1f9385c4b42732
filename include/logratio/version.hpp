#pragma once
// Moved to <logratio/core/version.hpp>; this path forwards to it for one release.
#include "core/version.hpp"
