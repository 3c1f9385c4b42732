#pragma once
// Moved to <logratio/panel/panel.hpp>; this path forwards to it for one release.
#include "panel/panel.hpp"
