#pragma once
// Check `position`: is the mismatch concentrated at the first generated token
// or at late positions? The first token's mean |delta| (bucket 0: one token
// per sequence) and the last populated bucket's, each against the median of
// the other buckets with >= 64 tokens.
//
// Rule: r_first = bucket 0 / median (assessed from 16 sequences on: bucket 0
// holds one token per sequence, so it may hold fewer than 64), r_late = the
// last bucket with >= 64 tokens / median. warn when r >= 3, fail when r >= 6
// (either end). A ratio that cannot be formed is named "not assessed" (never
// printed as a number); with neither, the check is not assessed.
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32         r_first = 1.03, r_late = 0.97 (median of the buckets after position 0)
//   first_token (N(0, 0.5))   r_first = 23.1
//   other planted bugs        r <= 1.07 (desync tails are kept out of the buckets: 0.94)
// and on smaller batches (tests/test_doctor.cpp: 24-120 sequences, seeds 11-14):
//   clean r_first 0.87-1.20; first-token noise N(0, 0.2) r_first 10.4-12.0, N(0, 0.5) 29.8.
#include <algorithm>
#include <vector>

#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr std::uint64_t position_min_tokens = 64, position_min_first = 16;
constexpr double position_warn = 3.0, position_fail = 6.0;

inline finding check_position(const scan_state& st) {
    finding f;
    f.check = "position";
    std::vector<double> means;  // buckets 1.. with >= 64 tokens: the reference
    int last = -1;
    for (int b = 1; b < breakdowns::position_buckets; ++b)
        if (st.bd.by_position[b].count >= position_min_tokens) {
            means.push_back(st.bd.by_position[b].mean_abs());
            last = b;
        }
    f.what_to_check = "the first generated token (BOS/prompt boundary, prefill vs decode kernels) or long-context "
                      "positions (rope scaling, KV-cache precision)";
    const std::uint64_t n_first = st.bd.by_position[0].count;
    f.num("first_token_count", static_cast<double>(n_first));
    if (means.size() < 2) {
        f.not_assessed("fewer than two position buckets (after the first token) hold 64 tokens");
        return f;
    }
    std::vector<double> s = means;
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
    const double med = s[s.size() / 2];
    const bool first_ok = n_first >= position_min_first && med > 0;
    const double first = first_ok ? st.bd.by_position[0].mean_abs() / med : NAN;
    const double late = med > 0 ? st.bd.by_position[last].mean_abs() / med : NAN;
    f.num("median_bucket_mean_abs_delta", med).num("first_token_ratio", first).num("last_bucket_ratio", late);
    f.num("last_bucket_first_position", static_cast<double>(breakdowns::position_lo(last)));
    const double r = std::max(std::isnan(first) ? 0.0 : first, std::isnan(late) ? 0.0 : late);
    const std::string first_text = first_ok ? g3(first) + "x"
                                            : "not assessed (" + std::to_string(n_first) + " first tokens, needs " +
                                                  std::to_string(position_min_first) + ")";
    if (r >= position_warn) {
        f.level = r >= position_fail ? severity::fail : severity::warn;
        const bool at_first = first_ok && first >= late;
        f.summary = at_first ? "mismatch concentrates on the first generated token: mean |delta| " + g3(first) +
                                   "x the median position bucket"
                             : "mismatch grows at late positions (>= " +
                                   std::to_string(breakdowns::position_lo(last)) + "): mean |delta| " + g3(late) +
                                   "x the median position bucket";
    } else if (std::isnan(late) && !first_ok) {
        f.not_assessed("no mismatch to compare positions by (median bucket mean |delta| 0)");
    } else {
        f.summary = "no position concentration (first token " + first_text + ", last bucket " + g3(late) +
                    "x the median bucket)";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
