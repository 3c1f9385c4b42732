#pragma once
// Check `alignment`: are trainer and rollout log-probs paired with the same
// token? For k = -2..2, m_k = mean |l_T[t] - l_E[t+k]| over pairs of usable
// tokens of one sequence. A shift k != 0 that explains the data far better
// than k = 0 means the two tensors are offset by k positions.
//
// Rule: r = m_0 / min_{k != 0} m_k.  fail when r >= 2, else ok.
// Measured with tests/doctor/make_doctor_dumps --print (planted.hpp, 160 x 128 slots, ~9,900 tokens each):
//   clean bf16 vs f32          r = 0.0075
//   shift_ahead / shift_behind  r = 133 (at k = +1 / -1)
//   every other planted bug     r <= 0.23 (temperature 0.23, top_p 0.067, desync 0.022)
#include "../findings.hpp"
#include "../scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

constexpr double alignment_fail_ratio = 2.0;

inline finding check_alignment(const scan_state& st) {
    finding f;
    f.check = "alignment";
    const int K = scan_state::max_shift;
    double m[2 * scan_state::max_shift + 1];
    for (int k = -K; k <= K; ++k) {
        const auto n = st.shift_n[k + K];
        m[k + K] = n ? st.shift_abs[k + K] / static_cast<double>(n) : NAN;
    }
    int best = 0;
    for (int k = -K; k <= K; ++k)
        if (k != 0 && !std::isnan(m[k + K]) && (best == 0 || m[k + K] < m[best + K])) best = k;
    for (int k = -K; k <= K; ++k) f.num("mean_abs_shift_" + std::to_string(k), m[k + K]);
    const double ratio = best == 0 ? NAN : m[K] / m[best + K];
    f.num("best_shift", best).num("ratio_k0_to_best", ratio);
    f.what_to_check = "the slicing of log-probs to response tokens on each side (logits[:, :-1] vs labels[:, 1:])";
    if (ratio >= alignment_fail_ratio) {
        f.level = severity::fail;
        f.summary = "trainer log-probs are " + std::to_string(best < 0 ? -best : best) + " position(s) " +
                    (best > 0 ? "ahead of" : "behind") + " the rollout's: |l_T[t] - l_E[t" + (best > 0 ? "+" : "") +
                    std::to_string(best) + "]| is " + g3(ratio) + "x smaller than at the same position";
    } else if (std::isnan(ratio)) {
        f.not_assessed("too few tokens to compare shifts");
    } else {
        f.summary = "log-probs are aligned: no shift fits better than k = 0 (ratio " + g3(ratio) + ")";
    }
    return f;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
