#pragma once
// `logratio panel --each`'s long table: one row per dump (run, group,
// update, file, SPEC's keys, and the numeric-vs-lag split when any dump has
// old_logprobs) as CSV; the columns are io/dumps.hpp's dump_columns, the
// metrics `logratio runs` reads from dumps.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../io/dumps.hpp"

namespace logratio_cli {

/// A CSV field, quoted when it holds a comma, quote or line break.
std::string csv_cell(const std::string& s);
/// A number as the shortest round-tripping text (%.17g); "" when missing or NaN.
std::string number_cell(std::optional<double> v);

/// The long table as CSV: run, group, update, file, SPEC's keys, and the
/// numeric-vs-lag split columns when any dump has old_logprobs.
std::string panel_table_csv(const std::vector<dump_panel>& ds);

}  // namespace logratio_cli
