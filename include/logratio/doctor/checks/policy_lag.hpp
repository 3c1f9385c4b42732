#pragma once
// Check `policy_lag`: with old_logprobs (the trainer's log-probs under the
// rollout's weights), the numeric-vs-lag split of mismatch_split.hpp as a
// finding: total = numeric (l_T(old) - l_E) + lag (l_T(new) - l_T(old)).
//
// Rule: warn when mean |lag| > mean |numeric| (staleness dominates), else ok.
// Measured with `logratio doctor --each examples/data/runs` (make_sample --runs):
// sync dumps have no old_logprobs (ok, not assessed); in the async runs (lag
// 1-2 updates, 6 x 24 dumps) mean |lag| grows from 0.0032 (warmup) to 0.084
// while mean |numeric| stays 0.012-0.016: 125 of 144 dumps warn, the first
// 3-4 updates of each run do not.
#include "../findings.hpp"
#include "../../panel/mismatch_split.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

inline finding check_policy_lag(const mismatch_split* s) {
    finding f;
    f.check = "policy_lag";
    f.what_to_check = "rollout weight staleness (async off-policy steps, weight-sync interval)";
    if (!s) {
        f.not_assessed("no old_logprobs (the trainer's log-probs under the rollout's weights) were given");
        return f;
    }
    f.num("total_delta_abs_mean", s->total.delta_abs_mean).num("numeric_delta_abs_mean", s->numeric.delta_abs_mean);
    f.num("lag_delta_abs_mean", s->lag.delta_abs_mean).num("numeric_kl_k3", s->numeric.kl_k3).num("lag_kl_k3", s->lag.kl_k3);
    const bool lag = s->lag.delta_abs_mean > s->numeric.delta_abs_mean;
    f.level = lag ? severity::warn : severity::ok;
    f.summary = std::string(lag ? "policy lag dominates" : "numeric mismatch dominates") + ": mean |lag| " +
                g3(s->lag.delta_abs_mean) + " vs mean |numeric| " + g3(s->numeric.delta_abs_mean);
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
