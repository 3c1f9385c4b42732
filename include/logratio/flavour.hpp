#pragma once
// Moved to <logratio/correction/flavour.hpp>; this path forwards to it for one release.
#include "correction/flavour.hpp"
