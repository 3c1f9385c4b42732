#pragma once
// W&B chart CSV export (web UI: chart menu -> Export -> CSV). Layout, from
// the exports in druidowm/nanoGPT wandb_export.csv @520e6515 and
// LauraWenderoth/Bachelorarbeit_Kidney_Stain_Transfer results_data/... @951abb53,
// and wandb/wandb#5349, #6474: every field quoted; the first column is the
// chart's x-axis ("Step" = W&B's `_step`, or the custom x-axis' name); then
// per run "<run> - <metric>", "<run> - <metric>__MIN", "<run> - <metric>__MAX";
// "" where a run has no point. A grouped chart exports "Group: <group> -
// <metric>" lines instead (one line per group, not per run). W&B samples
// long runs for charts: then the value is a bucket mean and MIN != MAX.
#include <logratio/core/error.hpp>

#include "../table.hpp"
#include "history.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// A header that is a chart export: every column after the first is
/// "<run> - <metric>" and at least one has __MIN/__MAX or the first is "Step".
bool looks_like_chart_export(const text_table& t);

history_set read_wandb_chart(const text_table& t);

}  // namespace logratio_cli::trackers
