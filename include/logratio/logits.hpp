#pragma once
// Moved to <logratio/logits/logits.hpp>; this path forwards to it for one release.
#include "logits/logits.hpp"
