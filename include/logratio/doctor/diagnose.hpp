#pragma once
// logratio doctor: find the cause of a train-inference mismatch.
//
//   doctor::diagnosis d = doctor::diagnose(view);          // one pass over memory
//   for (const auto& f : d.findings) ... f.check, f.level, f.summary, f.evidence
//   d.breakdowns                                           // by position, by p_E, (p_T, p_E)
//
// Passes: ONE pass over the tokens (scan.hpp; each sequence is read once and
// its in-cache copy is re-read for the neighbour and change-point sums),
// plus three panel passes for the policy_lag check when old_logprobs are
// given. Checks and their measured thresholds: checks/*.hpp.
//
// Precedence (so one bug gives one finding, not a storm): filled values are
// kept out of every other check's sums (scan.hpp). When `alignment` fails,
// every token pair is mismatched, so the checks that read the pairs'
// values (temperature, processed_logprobs, desync, position,
// low_probability, numeric) are reported "not assessed" (never "ok") with
// the evidence word superseded_by = alignment. A check that cannot be made
// (too few tokens, no old_logprobs) is "not assessed" too. `numeric` warns only when no
// other check warns or fails (it is the explanation of last resort).
#include <string>
#include <vector>

#include "../panel/mismatch_split.hpp"
#include "../core/view.hpp"
#include "breakdowns.hpp"
#include "checks/alignment.hpp"
#include "checks/desync.hpp"
#include "checks/filled_values.hpp"
#include "checks/low_probability.hpp"
#include "checks/numeric.hpp"
#include "checks/policy_lag.hpp"
#include "checks/position.hpp"
#include "checks/processed_logprobs.hpp"
#include "checks/temperature.hpp"
#include "findings.hpp"
#include "scan.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

struct diagnosis {
    std::vector<finding> findings;
    breakdowns bd;
    std::uint64_t tokens = 0, sequences = 0;
    std::uint64_t skipped_tokens = 0;  ///< NaN or positive log-probs (not diagnosed)
    severity worst() const noexcept { return doctor::worst(findings); }
    const finding* find(const std::string& check) const {
        for (const auto& f : findings)
            if (f.check == check) return &f;
        return nullptr;
    }
};

/// The findings from the sums of one scan (and the split, when computed).
inline std::vector<finding> run_checks(const scan_state& st, const mismatch_split* split) {
    std::vector<finding> fs{check_alignment(st),   check_filled_values(st), check_temperature(st),
                            check_processed_logprobs(st), check_desync(st), check_position(st),
                            check_low_probability(st),    check_policy_lag(split), check_numeric(st)};
    if (fs[0].level == severity::fail)
        for (auto& f : fs) {
            if (f.check == "alignment" || f.check == "filled_values" || f.check == "policy_lag") continue;
            f.not_assessed("trainer and rollout log-probs are not aligned (see alignment)");
            f.word("superseded_by", "alignment");
        }
    bool other = false;
    for (const auto& f : fs)
        if (f.check != "numeric" && raises(f.level)) other = true;
    if (other && fs.back().level == severity::warn) {
        fs.back().level = severity::ok;
        fs.back().summary += " (explained by the other findings)";
    }
    return fs;
}

/// Diagnoses a view: findings and breakdowns (see the header comment).
template <class T, class M>
diagnosis diagnose(const paired_view<T, M>& v, const diagnose_options& o = {}) {
    const scan_state st = scan(v, o.threads);
    mismatch_split split;
    bool have_split = false;
    std::string split_error;
    if (o.old_logprobs) {
        panel_options po;
        po.nonfinite = nonfinite_policy::omit;
        try {
            split = compute_mismatch_split(v, static_cast<const T*>(o.old_logprobs), po, o.threads);
            have_split = true;
        } catch (const error& e) {
            split_error = e.what();
        }
    }
    diagnosis d;
    d.findings = run_checks(st, have_split ? &split : nullptr);
    if (!split_error.empty())
        for (auto& f : d.findings)
            if (f.check == "policy_lag") f.not_assessed(split_error);
    d.bd = st.bd;
    d.tokens = st.bd.tokens();
    d.sequences = st.sequences;
    d.skipped_tokens = st.nan_or_positive;
    return d;
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
