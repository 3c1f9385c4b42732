#pragma once
// Check `numeric`: the level of the mismatch itself, beside the reference
// levels of the bundled tiny model's bf16 (split-K) rollout against a
// float32 trainer: mean |delta|, kl_k3, and the share of |delta| > 0.05.
//
// Rule: ratio = max over the three of level / reference. warn when >= 5.
// (A level below the reference is ok: fp32-vs-fp32 is below bf16's.)
// Reference: make_doctor_dumps --print, clean (planted.hpp, 9,970 tokens):
//   mean |delta| 0.01419, kl_k3 1.862e-4, share |delta| > 0.05 0.01926.
// Planted bugs reach 0.30 (temperature) and 0.094 (top_p) mean |delta|: numeric
// then warns, but yields to the finding that explains it (diagnose.hpp).
#include <algorithm>

#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double numeric_ref_abs = 0.01419, numeric_ref_k3 = 1.862e-4, numeric_ref_tail = 0.01926;
constexpr double numeric_warn = 5.0;

inline finding check_numeric(const scan_state& st) {
    finding f;
    f.check = "numeric";
    const delta_stats t = st.bd.total();
    const double tail = t.count ? static_cast<double>(st.above_tail) / static_cast<double>(t.count) : NAN;
    const double r = std::max({t.mean_abs() / numeric_ref_abs, t.kl_k3() / numeric_ref_k3, tail / numeric_ref_tail});
    f.num("tokens", static_cast<double>(t.count)).num("delta_abs_mean", t.mean_abs()).num("kl_k3", t.kl_k3());
    f.num("frac_abs_delta_gt_0.05", tail);
    f.num("reference_delta_abs_mean", numeric_ref_abs).num("reference_kl_k3", numeric_ref_k3);
    f.num("reference_frac_abs_delta_gt_0.05", numeric_ref_tail).num("ratio_to_reference", r);
    f.what_to_check = "kernel numerics: precision of the rollout's logits and log-softmax, reductions, weight sync";
    if (t.count == 0) {
        f.summary = "no usable tokens";
    } else if (r >= numeric_warn) {
        f.level = severity::warn;
        f.summary = "numeric mismatch " + g3(r) + "x the bf16-vs-float32 reference (mean |delta| " + g3(t.mean_abs()) +
                    ", kl_k3 " + g3(t.kl_k3()) + ")";
    } else {
        f.summary = "mean |delta| " + g3(t.mean_abs()) + ", kl_k3 " + g3(t.kl_k3()) + ", " + g3(100 * tail) +
                    "% of |delta| > 0.05: at most " + g3(r) + "x the bf16-vs-float32 reference";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
