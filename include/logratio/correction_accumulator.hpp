#pragma once
// Moved to <logratio/correction/correction_accumulator.hpp>; this path forwards to it for one release.
#include "correction/correction_accumulator.hpp"
