#pragma once
// What the correction kernel computes for a set of options, decided once
// per call from correction_options (plain numbers, no lanes): which phases
// run, the token rejection options by statistic and their bounds, the IS
// truncation, the veto, and the interval of delta of the short cut.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "../correction/correction_options.hpp"
#include "panel_kernel.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The interval of delta inside which no token-level threshold of o can
/// act: |delta| <= 20, a token IS weight inside [c, C], every token
/// rejection statistic inside its bounds, no veto. Each bound is narrowed by
/// 1e-9 (1 + |bound|), far more than the rounding of the kernel's own
/// statistics, so a token inside passes every exact test of the full step.
/// Empty (lo > hi) when some option cannot be decided this way.
struct delta_interval {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
};
inline delta_interval inside_interval(const correction_options& o) {
    delta_interval r{-clamp_log_ratio, clamp_log_ratio};
    auto keep_above = [&](double a) { r.lo = std::max(r.lo, a); };
    auto keep_below = [&](double b) { r.hi = std::min(r.hi, b); };
    if (o.is) {
        if (o.is->level != is_level::token) return {0.0, -1.0};
        keep_above(std::log(o.is->metric_lower()));  // w >= c (c = c_low when given: no lower clip)
        keep_below(std::log(o.is->upper));           // w <= C
    }
    for (const rs_option& x : o.rejection) {
        if (!x.is_token_level()) return {0.0, -1.0};
        const double up = x.stat_upper();
        if (x.stat == rs_stat::k1) {  // -delta in [log lower, log upper]
            keep_above(-up);
            keep_below(-x.stat_lower());
        } else if (x.stat == rs_stat::k2) {  // delta^2 / 2 <= up
            const double b = std::sqrt(2.0 * std::max(up, 0.0));
            keep_above(-b);
            keep_below(b);
        } else {  // expm1(delta) - delta <= up: the two roots by bisection
            auto root = [&](double sign) {
                double a = 0.0, b = sign * clamp_log_ratio;
                if (std::expm1(b) - b <= up) return b;
                for (int i = 0; i < 200; ++i) {
                    const double m = 0.5 * (a + b);
                    (std::expm1(m) - m <= up ? a : b) = m;
                }
                return a;
            };
            keep_above(root(-1.0));
            keep_below(root(1.0));
        }
    }
    if (o.veto) keep_above(std::log(*o.veto));  // a token below log tau is vetoed
    r.lo += 1e-9 * (1.0 + std::fabs(r.lo));
    r.hi -= 1e-9 * (1.0 + std::fabs(r.hi));
    return r;
}

/// What the short cut's step computes (from the options) and where its
/// batches lie.
struct inside_plan {
    double lo = 0.0, hi = -1.0;  ///< the interval of delta (empty: no short cut)
    bool k1 = false, k2 = false, k3 = false, is = false;
};

/// The options as the kernel reads them.
struct correction_plan {
    bool has_is = false;  ///< an IS weight is computed
    bool tok_is = false;  ///< ... at token level
    bool clip_low = false;
    double C = 1.0;     ///< upper truncation of the weight
    double c_lo = 1.0;  ///< the metrics' lower bound (the clip, or c_low)
    double clip = 0.0;  ///< lower clip of the weight (when clip_low)
    double log_C = 0.0, log_clo = 0.0;
    /// Masked-out lanes carry delta = dc = 0, rho = 1, k = 0: a threshold
    /// test those values fail needs no masking (w = 1 inside [c_lo, C]).
    bool w_one_inside = true;
    int tok_opt[3] = {-1, -1, -1};  ///< token rejection options by statistic (at most one each)
    double tlo[3] = {0, 0, 0}, tup[3] = {0, 0, 0};  ///< their bounds
    bool any_tok_rs = false, any_seq_rs = false;
    bool need_k = false;              ///< a sequence option needs k2/k3 sums
    bool k1_zero_inside = true;       ///< k1 = 0 passes the token k1 option
    double log_veto = -std::numeric_limits<double>::infinity();
    bool veto_on_zero = false;        ///< delta = 0 already below the veto
    /// Phase 1 runs only when a decision for the whole sequence must precede
    /// its tokens (sequence-level IS weight or a sequence rejection option);
    /// otherwise phase 2 also takes the sequence sums (and a veto, known at
    /// the end of the sequence, rewrites its mask).
    bool need_phase1 = false;
    inside_plan inside;  ///< the short cut (an empty interval: none)
    bool short_cut() const noexcept { return inside.lo <= inside.hi; }
};

/// The plan of options o; `simd`: the lanes are wider than one (the scalar
/// reference path takes no short cut).
inline correction_plan make_correction_plan(const correction_options& o, bool simd) {
    correction_plan p;
    if (o.is) {
        p.has_is = true;
        p.tok_is = o.is->level == is_level::token;
        p.C = o.is->upper;
        p.c_lo = o.is->metric_lower();
        p.clip_low = o.is->lower.has_value();
        p.clip = p.clip_low ? *o.is->lower : 0.0;
    }
    p.log_C = std::log(p.C);
    p.log_clo = std::log(p.c_lo);
    p.w_one_inside = p.c_lo <= 1.0 && 1.0 <= p.C;
    for (std::size_t k = 0; k < o.rejection.size(); ++k) {
        const rs_option& r = o.rejection[k];
        if (r.is_token_level()) {
            const int j = static_cast<int>(r.stat);
            p.tok_opt[j] = static_cast<int>(k);
            p.tlo[j] = r.stat_lower();
            p.tup[j] = r.stat_upper();
            p.any_tok_rs = true;
        } else {
            p.any_seq_rs = true;
            p.need_k = p.need_k || r.stat != rs_stat::k1;
        }
    }
    p.k1_zero_inside = p.tlo[0] <= 0.0 && 0.0 <= p.tup[0];
    if (o.veto) p.log_veto = std::log(*o.veto);
    p.veto_on_zero = p.log_veto > 0.0;
    p.need_phase1 = (p.has_is && !p.tok_is) || p.any_seq_rs;
    if (simd && !p.need_phase1) {
        const delta_interval in = inside_interval(o);
        p.inside = {in.lo, in.hi, p.tok_opt[0] >= 0, p.tok_opt[1] >= 0, p.tok_opt[2] >= 0, p.has_is};
    }
    return p;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
