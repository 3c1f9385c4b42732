#pragma once
// Moved to <logratio/panel/panel_stream.hpp>; this path forwards to it for one release.
#include "panel/panel_stream.hpp"
