#pragma once
// Check `numeric`: the level of the mismatch itself, against the levels
// healthy rollout engines show -- so a normal bf16 engine is silent and a
// drifting one warns.
//
// Published levels (docs/doctor.md has the full list):
//  * slime's CI gate: --ci-train-rollout-logprob-abs-diff-threshold, default
//    0.1, asserted on train_rollout_logprob_abs_diff (= mean |delta|) of its
//    healthy test runs (THUDM/slime 624b824a, slime/utils/arguments.py 1529,
//    slime/backends/megatron_utils/model.py 900-902);
//  * same-precision bf16 engine pairs on one checkpoint: mean |delta| 0.0047
//    and 0.0061 (Qwen3-32B, vLLM vs FSDP / Megatron; the "controlled dense
//    mismatch dashboard", shamanez.github.io/streams-rollout-market);
//  * dense and published runs: KL between the engines about 0.0004 to 0.01
//    (the train-inference mismatch report at
//    comm-efficient-rlvr.pages.dev/train-inference-mis-match);
//  * the bundled tiny model, bf16 split-K rollout vs float32 trainer
//    (make_doctor_dumps --print, clean): mean |delta| 0.0142, kl_k3 1.86e-4.
// A normal bf16 rollout engine sits at mean |delta| 0.005 - 0.03.
//
// Rule: warn when mean |delta| >= 0.05 (above every healthy level above, half
// slime's CI bound) or kl_k3 >= 0.01 (the top of the published KL range);
// the summary says when mean |delta| is past slime's CI bound too. ratio =
// max(mean |delta| / 0.05, kl_k3 / 0.01): warn when >= 1. Planted bugs reach
// 0.30 (temperature) and 0.094 (top_p) mean |delta|: numeric then warns, but
// yields to the finding that explains it (diagnose.hpp).
#include <algorithm>

#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double numeric_warn_abs = 0.05, numeric_warn_k3 = 0.01;
constexpr double numeric_slime_ci_abs = 0.1;  // slime's --ci-train-rollout-logprob-abs-diff-threshold
constexpr double numeric_healthy_abs_lo = 0.005, numeric_healthy_abs_hi = 0.03;

inline finding check_numeric(const scan_state& st) {
    finding f;
    f.check = "numeric";
    const delta_stats t = st.bd.total();
    const double tail = t.count ? static_cast<double>(st.above_tail) / static_cast<double>(t.count) : NAN;
    const double r = std::max(t.mean_abs() / numeric_warn_abs, t.kl_k3() / numeric_warn_k3);
    f.num("tokens", static_cast<double>(t.count)).num("delta_abs_mean", t.mean_abs()).num("kl_k3", t.kl_k3());
    f.num("frac_abs_delta_gt_0.05", tail);
    f.num("warn_delta_abs_mean", numeric_warn_abs).num("warn_kl_k3", numeric_warn_k3);
    f.num("slime_ci_delta_abs_mean", numeric_slime_ci_abs).num("ratio_to_warn_level", r);
    f.what_to_check = "kernel numerics: precision of the rollout's logits and log-softmax, reductions, weight sync";
    if (t.count == 0) {
        f.not_assessed("no usable tokens");
    } else if (r >= 1.0) {
        f.level = severity::warn;
        f.summary = "numeric mismatch above healthy engines: mean |delta| " + g3(t.mean_abs()) + ", kl_k3 " +
                    g3(t.kl_k3()) + " (warn at 0.05 / 0.01; healthy bf16 engines 0.005-0.03" +
                    (t.mean_abs() > numeric_slime_ci_abs ? "; past slime's CI bound 0.1)" : ")");
    } else {
        f.summary = "mean |delta| " + g3(t.mean_abs()) + ", kl_k3 " + g3(t.kl_k3()) +
                    ": within healthy rollout engines' levels (warn at 0.05 / 0.01)";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
