#pragma once
// Check `low_probability`: how mismatch grows as p_E falls. The tail of
// low-probability tokens is where IS corrections act; in clean numeric
// mismatch |delta| grows there too (relative logit error), by a measured
// factor. g = mean |delta| over p_E < 1/2 / mean |delta| over p_E >= 1/2.
//
// Rule: warn when g >= 4 x the clean reference g0 (and >= 50 tokens each side).
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32   g0 = 3.23
//   planted bugs        g in [1.16, 3.22]: none fires; a warn needs g >= 12.9
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double low_probability_reference = 3.23;  // g0 of the clean bf16-vs-f32 dump
constexpr double low_probability_warn_factor = 4.0;

inline finding check_low_probability(const scan_state& st) {
    finding f;
    f.check = "low_probability";
    delta_stats low, high;
    for (int b = 0; b < breakdowns::prob_buckets; ++b)
        (breakdowns::prob_bucket_logit_lo(b) < 0 ? low : high).merge(st.bd.by_rollout_prob[b]);
    const double g = low.mean_abs() / high.mean_abs();
    f.num("mean_abs_delta_p_below_half", low.mean_abs()).num("mean_abs_delta_p_above_half", high.mean_abs());
    f.num("tokens_p_below_half", static_cast<double>(low.count)).num("growth", g);
    f.num("clean_reference_growth", low_probability_reference);
    f.what_to_check = "the low-probability tail: sampling settings (top-k/top-p/min-p) and the IS correction's "
                      "truncation act on these tokens";
    if (low.count >= 50 && high.count >= 50 && g >= low_probability_warn_factor * low_probability_reference) {
        f.level = severity::warn;
        f.summary = "mismatch grows " + g3(g) + "x where p_E < 1/2 (clean bf16 vs f32: " + g3(low_probability_reference) +
                    "x)";
    } else if (low.count < 50 || high.count < 50 || std::isnan(g)) {
        f.not_assessed("fewer than 50 tokens on one side of p_E = 1/2 (" + std::to_string(low.count) + " below, " +
                       std::to_string(high.count) + " above)");
    } else {
        f.summary = "mean |delta| is " + g3(g) + "x larger where p_E < 1/2 (clean bf16 vs f32: " +
                    g3(low_probability_reference) + "x)";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
