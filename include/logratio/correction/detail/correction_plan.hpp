#pragma once
// What the correction kernel computes for a set of options, decided once
// per call from correction_options (plain numbers, no lanes): which phases
// run, the token rejection options by statistic and their bounds, the IS
// truncation, the veto, and the interval of delta of the short cut. Per
// rejection statistic (correction/stats/registry.hpp) an array indexed by
// its id.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "../correction_options.hpp"
#include "../../detail/batches.hpp"

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
        const std::pair<double, double> in = visit_stat(
            x.stat, [&](auto, auto s) { return decltype(s)::inside(x.stat_lower(), x.stat_upper()); });
        keep_above(in.first);
        keep_below(in.second);
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
    bool stat[rs_stat_count] = {};  ///< a token option of each statistic
    bool own = false;               ///< ... of one with its own lanes (rs_stats::lanes::own)
    bool is = false;
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
    int tok_opt[rs_stat_count];  ///< token rejection options by statistic (at most one each; -1: none)
    double tlo[rs_stat_count] = {}, tup[rs_stat_count] = {};  ///< their bounds
    /// the statistic's value at dc = 0 (a masked-out lane's, 0) passes its token option
    bool zero_inside[rs_stat_count];
    bool any_tok_rs = false, any_seq_rs = false;
    /// phase 1: a sequence option needs a statistic's own sums and maxima
    /// (not those of dc)
    bool need_k = false;
    double log_veto = -std::numeric_limits<double>::infinity();
    bool veto_on_zero = false;        ///< delta = 0 already below the veto
    /// Phase 1 runs only when a decision for the whole sequence must precede
    /// its tokens (sequence-level IS weight or a sequence rejection option);
    /// otherwise phase 2 also takes the sequence sums (and a veto, known at
    /// the end of the sequence, rewrites its mask).
    bool need_phase1 = false;
    inside_plan inside;  ///< the short cut (an empty interval: none)
    bool short_cut() const noexcept { return inside.lo <= inside.hi; }
    correction_plan() noexcept {
        for (std::size_t j = 0; j < rs_stat_count; ++j) {
            tok_opt[j] = -1;
            zero_inside[j] = true;
        }
    }
};

/// The rejection options of o in plan p: the token options by statistic and
/// their bounds, what phase 1 sums for the sequence options.
inline void plan_rejection(correction_plan& p, const correction_options& o) {
    for (std::size_t k = 0; k < o.rejection.size(); ++k) {
        const rs_option& r = o.rejection[k];
        const std::size_t j = static_cast<std::size_t>(r.stat);
        if (r.is_token_level()) {
            p.tok_opt[j] = static_cast<int>(k);
            p.tlo[j] = r.stat_lower();
            p.tup[j] = r.stat_upper();
            p.any_tok_rs = true;
        } else {
            p.any_seq_rs = true;
            visit_stat(r.stat, [&](auto, auto s) {  // not from the sum of dc
                p.need_k = p.need_k || decltype(s)::sums != rs_stats::lanes::minus_dc;
            });
        }
    }
    for (std::size_t j = 0; j < rs_stat_count; ++j) p.zero_inside[j] = p.tlo[j] <= 0.0 && 0.0 <= p.tup[j];
}

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
    plan_rejection(p, o);
    if (o.veto) p.log_veto = std::log(*o.veto);
    p.veto_on_zero = p.log_veto > 0.0;
    p.need_phase1 = (p.has_is && !p.tok_is) || p.any_seq_rs;
    if (simd && !p.need_phase1) {
        const delta_interval in = inside_interval(o);
        p.inside.lo = in.lo;
        p.inside.hi = in.hi;
        p.inside.is = p.has_is;
        for_each_rs_stat([&](auto j, auto s) {
            p.inside.stat[j] = p.tok_opt[j] >= 0;
            p.inside.own = p.inside.own || (p.inside.stat[j] && decltype(s)::sums == rs_stats::lanes::own);
        });
    }
    return p;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
