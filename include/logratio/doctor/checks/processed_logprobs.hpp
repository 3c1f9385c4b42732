#pragma once
// Check `processed_logprobs`: rollout log-probs after top-p / top-k
// renormalisation (vLLM's processed logprobs) compared with raw trainer
// ones. Renormalising over a kept set of mass K gives l_E = l_raw - log K >=
// l_raw, so delta = l_T - l_E is negative on almost every token, and larger
// where the distribution is flat (more mass cut).
//
// Rule: s = share of tokens with delta < 0; flat = mean |delta| over p_E <
// 1/2 against mean |delta| over p_E >= 1/2. warn when s >= 0.9 and the
// overall mean delta <= -0.01 (a removed mass of >= 1%); removed mass
// estimate 1 - exp(mean delta).
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32   s = 0.510, mean delta -0.00035
//   top_p 0.9           s = 0.999, mean delta -0.093, removed mass estimate 8.9%, flat/peaked 1.17x
//   other planted bugs  s <= 0.79 (temperature 0.79 with mean delta -0.098; others <= 0.511)
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double processed_sign_share = 0.9, processed_mean_delta = -0.01;

inline finding check_processed_logprobs(const scan_state& st) {
    finding f;
    f.check = "processed_logprobs";
    const delta_stats tot = st.bd.total();
    const double n = static_cast<double>(tot.count);
    const double neg = tot.count ? static_cast<double>(st.negative) / n : NAN;
    const double pos = tot.count ? static_cast<double>(st.positive) / n : NAN;
    delta_stats low, high;  // p_E < 1/2 and p_E >= 1/2 (logit 0 is a bucket edge)
    for (int b = 0; b < breakdowns::prob_buckets; ++b)
        (breakdowns::prob_bucket_logit_lo(b) < 0 ? low : high).merge(st.bd.by_rollout_prob[b]);
    const double md = tot.mean_delta();
    f.num("share_negative", neg).num("share_positive", pos).num("mean_delta", md);
    f.num("mean_abs_delta_p_below_half", low.mean_abs()).num("mean_abs_delta_p_above_half", high.mean_abs());
    f.num("removed_mass_estimate", -std::expm1(md));
    f.what_to_check = "whether the rollout returns processed log-probs (after top-p/top-k/temperature) "
                      "instead of the raw model's (vLLM logprobs_mode)";
    if (neg >= processed_sign_share && md <= processed_mean_delta) {
        f.level = severity::warn;
        f.summary = g3(100 * neg) + "% of tokens have l_E > l_T, " + g3(low.mean_abs() / high.mean_abs()) +
                    "x larger where p_E < 1/2: renormalised rollout log-probs, about " + g3(-100 * std::expm1(md)) +
                    "% of the mass removed";
    } else if (tot.count == 0) {
        f.not_assessed("no usable tokens");
    } else {
        f.summary = "delta has no one-sided offset (" + g3(100 * neg) + "% negative, mean " + g3(md) + ")";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
