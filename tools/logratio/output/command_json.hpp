#pragma once
// The JSON documents the commands print with --json, built here so that no
// command's translation unit parses nlohmann/json: each function returns the
// text as printed (indent 1, invalid UTF-8 replaced by U+FFFD).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <logratio/core/version.hpp>

LOGRATIO_NAMESPACE_BEGIN
struct panel;
struct mismatch_split;
struct logits_row;
namespace doctor {
struct diagnosis;
}  // namespace doctor
LOGRATIO_NAMESPACE_END

namespace logratio_cli {

struct dump_diagnosis;

/// Named values ({"name": value, ...}, NaN as null), e.g. a correction's metrics.
using metric_values = std::vector<std::pair<std::string, double>>;

/// `logratio panel --json`: exactly SPEC's keys (null: undefined); with a
/// split, "mismatch_split": {total, numeric, lag}; with a flavour's metrics,
/// one more key named by the flavour.
std::string panel_json_text(const logratio::panel& p, const logratio::mismatch_split* split = nullptr,
                            const metric_values& flavour_metrics = {}, const std::string& flavour = "");

/// `logratio correct --json`: the metrics, in order.
std::string metrics_json_text(const metric_values& entries);

/// `logratio quantiles --json`: {of, method, quantiles{p: value}} and, for a
/// sketch (k > 0), k and rank_error_bound.
std::string quantiles_json_text(const std::string& of, const std::string& method, const std::vector<double>& probs,
                                const std::vector<double>& values, unsigned k, double rank_error_bound);

/// `logratio logits --json`: one array per per-row value.
std::string logits_json_text(const std::vector<logratio::logits_row>& rows);

/// `logratio doctor --json`: {"findings": [...], "breakdowns": {...}} (doctor_json.hpp).
std::string diagnosis_json_text(const logratio::doctor::diagnosis& d);

/// `logratio doctor --each DIR --json`: {"dumps": [{"path", "label", "run",
/// "update", "findings"}], "summary": [{"check", "warn", "fail", "runs", "dumps"}]}.
std::string each_json_text(const std::vector<dump_diagnosis>& ds);

}  // namespace logratio_cli
