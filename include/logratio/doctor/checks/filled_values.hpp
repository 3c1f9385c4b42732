#pragma once
// Check `filled_values`: missing log-probs filled with 0.0 (probability 1)
// or a sentinel (-9999, -1e4, -inf) in one tensor.
//
// Rule, per tensor: flagged = exact 0.0 where the other side's l < log(1/2),
// plus values <= -50 (scan.hpp). fail when flagged >= 3 tokens and >= 5e-4
// of the tokens, else ok.
// The summary names the tensor, the value, the count, and where they sit
// (share at the sequence's last token, in its last 4, at position 0).
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32: 0 flagged in either tensor
//     (exact zeros do occur in real dumps: top_p has 322 rollout 0.0, all with l_T > log 1/2)
//   zero_fill (3% of sequences, last 8 tokens): 14 flagged (1.4e-3 of the tokens; 24 exact zeros)
//   sentinel (1% of tokens = -9999): 116 flagged (all -9999)
//   top_p (nucleus of one token gives l_E = 0.0 where p_T >= 0.9): 0 flagged
//   first_token (N(0, 0.5) noise clipped at 0): 2 flagged = 2e-4 of the tokens (the reason for the share)
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr std::uint64_t filled_fail_count = 3;
constexpr double filled_fail_share = 5e-4;

inline finding check_filled_values(const scan_state& st) {
    finding f;
    f.check = "filled_values";
    const char* names[2] = {"train_logprobs", "rollout_logprobs"};
    int worst_side = st.fill[1].flagged >= st.fill[0].flagged ? 1 : 0;
    for (int s = 0; s < 2; ++s) {
        const fill_stats& x = st.fill[s];
        const std::string p = s == 0 ? "train_" : "rollout_";
        f.num(p + "flagged", static_cast<double>(x.flagged))
            .num(p + "unlikely_zeros", static_cast<double>(x.unlikely_zeros))
            .num(p + "exact_zeros", static_cast<double>(x.zeros));
        const auto top = x.top_sentinel();
        f.num(p + "sentinel_value", top.second ? top.first : NAN).num(p + "sentinel_count", static_cast<double>(top.second));
        f.num(p + "sequences", static_cast<double>(x.sequences));
    }
    const fill_stats& w = st.fill[worst_side];
    const double n = static_cast<double>(w.flagged);
    f.num("share_at_last_token", w.flagged ? static_cast<double>(w.at_last) / n : NAN)
        .num("share_in_last_4", w.flagged ? static_cast<double>(w.in_last4) / n : NAN)
        .num("share_at_first_token", w.flagged ? static_cast<double>(w.at_first) / n : NAN);
    f.what_to_check = "how missing log-probs are padded or defaulted (fillna(0), -9999 placeholders, truncated outputs)";
    const double tokens = static_cast<double>(st.usable + st.fill[0].flagged + st.fill[1].flagged);
    if (tokens == 0) {
        f.not_assessed("no usable tokens");
        return f;
    }
    if (w.flagged < filled_fail_count || static_cast<double>(w.flagged) < filled_fail_share * tokens) {
        f.summary = "no filled values: no unlikely exact 0.0 and no value <= -50 in either tensor";
        return f;
    }
    f.level = severity::fail;
    f.word("tensor", names[worst_side]);
    const auto top = w.top_sentinel();
    const bool zeros = w.unlikely_zeros >= top.second;
    const std::string what = zeros ? "0.0 (probability 1) where the other side gives p < 1/2"
                                   : g3(top.first) + " (sentinel)";
    std::string where = g3(100.0 * static_cast<double>(w.in_last4) / n) + "% in the last 4 tokens of a sequence, " +
                        g3(100.0 * static_cast<double>(w.at_first) / n) + "% at position 0";
    f.summary = std::string(names[worst_side]) + " holds " + std::to_string(zeros ? w.unlikely_zeros : top.second) +
                " filled values " + what + " in " + std::to_string(w.sequences) + " sequences (" + where + ")";
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
