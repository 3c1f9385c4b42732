#pragma once
// Moved to <logratio/runs/runs.hpp>; this path forwards to it for one release.
#include "runs/runs.hpp"
