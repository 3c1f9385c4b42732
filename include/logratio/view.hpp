#pragma once
// Moved to <logratio/core/view.hpp>; this path forwards to it for one release.
#include "core/view.hpp"
