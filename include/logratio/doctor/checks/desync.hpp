#pragma once
// Check `desync`: sequences whose |delta| is small up to a position and large
// after it (log-probs re-tokenised out of step with the sampled tokens from
// some point on).
//
// Per sequence with a |delta| > 0.5 (scan.hpp, change_point): the split c
// maximising (share of |delta| > 0.5 after c) - (share before), >= 4 tokens
// on each side; a change point when >= 30% after, <= 10% before and >= 3
// large tokens after.
// Rule: fail when >= 2 sequences and >= 1% of sequences have one, and
// large |delta| are rare overall (<= 5% of tokens: otherwise runs of them
// happen by chance, as under a one-sided temperature). Two, not three: on
// small batches (64-100 sequences, 5% desynced) only 1-5 of the planted
// sequences show a change point, while no other planted bug shows two at a
// share of large |delta| <= 5% (tests/test_doctor.cpp sweeps seeds and sizes:
// clean 0 change points everywhere; shifts >= 70% large; temperature
// 1-6 change points at 9-10% large).
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32             0 sequences; share |delta| > 0.5: 0
//   desync (5% from the middle)   4 of 160 (8 planted, 4 with >= 4 tokens after the point and a large |delta| there);
//                                 typical position 55% of the length; share |delta| > 0.5: 1.1%
//   other planted bugs            <= 1 sequence, except temperature: 4 sequences at a 10.3% share of |delta| > 0.5
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr std::uint64_t desync_fail_sequences = 2;
constexpr double desync_fail_share = 0.01;
constexpr double desync_max_big_share = 0.05;

inline finding check_desync(const scan_state& st) {
    finding f;
    f.check = "desync";
    const double share = st.sequences ? static_cast<double>(st.desync_sequences) / static_cast<double>(st.sequences) : NAN;
    // typical position: the median tenth of the length
    std::uint64_t half = (st.desync_sequences + 1) / 2, c = 0;
    int tenth = -1;
    for (int k = 0; k < 10 && st.desync_sequences; ++k) {
        c += st.desync_at[static_cast<std::size_t>(k)];
        if (c >= half) {
            tenth = k;
            break;
        }
    }
    f.num("sequences", static_cast<double>(st.desync_sequences)).num("share_of_sequences", share);
    f.num("typical_position_fraction", tenth < 0 ? NAN : (tenth + 0.5) / 10.0);
    f.num("tokens_after_change", static_cast<double>(st.desync_tokens_after));
    f.what_to_check = "re-tokenisation of the rollout's text on the trainer side (detokenise/retokenise drift, "
                      "chat-template or special-token handling mid-sequence)";
    const double big = st.usable ? static_cast<double>(st.above_big) / static_cast<double>(st.usable) : NAN;
    f.num("share_of_tokens_abs_delta_gt_0.5", big);
    if (st.desync_sequences >= desync_fail_sequences && share >= desync_fail_share && big <= desync_max_big_share) {
        f.level = severity::fail;
        f.summary = std::to_string(st.desync_sequences) + " sequences (" + g3(100 * share) +
                    "%) go out of step: |delta| small, then large from about " + g3(10.0 * tenth + 5) +
                    "% of their length";
    } else if (st.sequences == 0 || st.usable == 0) {
        f.not_assessed("no usable tokens");
    } else {
        f.summary = "no sequence goes out of step (" + std::to_string(st.desync_sequences) + " change points)";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
