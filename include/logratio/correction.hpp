#pragma once
// Moved to <logratio/correction/correction.hpp>; this path forwards to it for one release.
#include "correction/correction.hpp"
