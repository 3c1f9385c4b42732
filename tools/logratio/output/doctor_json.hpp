#pragma once
// The doctor's diagnosis as JSON, {"findings": [...], "breakdowns": {...}}:
// one writer for `logratio doctor --json` and the Python module's
// logratio.diagnose (which parses this text), so both give the same shape.
#include <nlohmann/json_fwd.hpp>

#include <logratio/core/version.hpp>

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {
struct finding;
struct delta_stats;
struct breakdowns;
struct diagnosis;
}  // namespace doctor
LOGRATIO_NAMESPACE_END

namespace logratio_cli {

nlohmann::ordered_json finding_json(const logratio::doctor::finding& f);
nlohmann::ordered_json stats_json(const logratio::doctor::delta_stats& s);

/// The breakdowns as JSON: non-empty position and probability buckets, and
/// the 64 x 64 (p_T rows, p_E columns) count matrix on its logit axis.
nlohmann::ordered_json breakdowns_json(const logratio::doctor::breakdowns& b);

/// {"findings": [...], "breakdowns": {...}}
nlohmann::ordered_json diagnosis_json(const logratio::doctor::diagnosis& d);

}  // namespace logratio_cli
