#pragma once
// Moved to <logratio/core/dtype.hpp>; this path forwards to it for one release.
#include "core/dtype.hpp"
