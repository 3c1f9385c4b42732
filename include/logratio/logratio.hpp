#pragma once
// logratio: statistics of the train-inference mismatch of RL for LLMs.
// Umbrella header: every public component.
#include "version.hpp"
#include "error.hpp"
#include "dtype.hpp"
#include "view.hpp"
#include "moments.hpp"
#include "panel_accumulator.hpp"
#include "panel.hpp"
#include "quantiles.hpp"
#include "kll_sketch.hpp"
#include "panel_stream.hpp"
#include "correction_options.hpp"
#include "correction_accumulator.hpp"
#include "correction.hpp"
#include "mismatch_split.hpp"
#include "logits.hpp"
#include "runs.hpp"
