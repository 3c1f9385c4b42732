#pragma once
// Check `position`: is the mismatch concentrated at the first generated token
// or at late positions? Each response-position bucket's mean |delta| against
// the median over buckets with >= 64 tokens.
//
// Rule: r_first = bucket 0 / median, r_late = the last populated bucket /
// median. warn when r >= 3, fail when r >= 6 (either end).
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32         r_first = 1.02, r_late = 0.96
//   first_token (N(0, 0.5))   r_first = 22.7
//   other planted bugs        r <= 1.07 (desync tails are kept out of the buckets: 0.94)
#include <algorithm>
#include <vector>

#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr std::uint64_t position_min_tokens = 64;
constexpr double position_warn = 3.0, position_fail = 6.0;

inline finding check_position(const scan_state& st) {
    finding f;
    f.check = "position";
    std::vector<double> means;
    int last = -1;
    for (int b = 0; b < breakdowns::position_buckets; ++b)
        if (st.bd.by_position[b].count >= position_min_tokens) {
            means.push_back(st.bd.by_position[b].mean_abs());
            last = b;
        }
    f.what_to_check = "the first generated token (BOS/prompt boundary, prefill vs decode kernels) or long-context "
                      "positions (rope scaling, KV-cache precision)";
    if (means.size() < 3) {
        f.summary = "too few position buckets with 64 tokens to compare";
        return f;
    }
    std::vector<double> s = means;
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
    const double med = s[s.size() / 2];
    const double first = st.bd.by_position[0].count >= position_min_tokens ? st.bd.by_position[0].mean_abs() / med : NAN;
    const double late = st.bd.by_position[last].mean_abs() / med;
    f.num("median_bucket_mean_abs_delta", med).num("first_token_ratio", first).num("last_bucket_ratio", late);
    f.num("last_bucket_first_position", static_cast<double>(breakdowns::position_lo(last)));
    const double r = std::max(std::isnan(first) ? 0.0 : first, late);
    if (r >= position_warn) {
        f.level = r >= position_fail ? severity::fail : severity::warn;
        const bool at_first = !std::isnan(first) && first >= late;
        f.summary = at_first ? "mismatch concentrates on the first generated token: mean |delta| " + g3(first) +
                                   "x the median position bucket"
                             : "mismatch grows at late positions (>= " +
                                   std::to_string(breakdowns::position_lo(last)) + "): mean |delta| " + g3(late) +
                                   "x the median position bucket";
    } else {
        f.summary = "no position concentration (first token " + g3(first) + "x, last bucket " + g3(late) +
                    "x the median bucket)";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
