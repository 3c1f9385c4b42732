#pragma once
// The importance-sampling correction's metrics: the mergeable accumulator
// and the finished values, with verl's names (rollout_corr_helper.py,
// without its "rollout_corr/" prefix). This header is where each metric's
// formula lives; the per-token work is in detail/correction_kernel.hpp.
//
// Notation. delta = l_T - l_E, dc = clamp(delta, +-20), rho = exp(dc).
// Sums run over the masked-in tokens (N of them) and over the S sequences
// that have at least one (a sequence with no masked-in token is not a
// sequence: verl counts it in its per-sequence means, logratio does not).
// n_s is the token count of sequence s, "seq mean" a mean over sequences,
// std_1 a sample std (ddof 1, 0 if S = 1).
//
// IS weights (w = rho for level token; w_s = exp(clamp(lr_s)) for
// sequence, lr_s = sum_s delta, and geometric, lr_s = sum_s delta / n_s),
// C the upper threshold, c = c_low if given else 1/C, w' = clamp(w, c, C):
//   rollout_is_mean                   sum w / N                 (before truncation)
//   rollout_is_max / _min             token: max/min w; sequence/geometric:
//                                     exp(min(max lr, 20)) / exp(min lr)
//   rollout_is_ratio_fraction_high    token: #{w > C} / N; seq: #{lr_s > log C} / S
//   rollout_is_ratio_fraction_low     token: #{w < c} / N; seq: #{lr_s < log c} / S
//   rollout_is_std                    sqrt(max(0, E[w'^2] - E[w']^2)), token-weighted
//   rollout_is_eff_sample_size        E[w']^2 / E[w'^2]
//   rollout_is_seq_{mean,std,max,min} of m_s = the mean of w over sequence s (std_1)
//   rollout_is_seq_max_deviation      max |m_s - 1|
//   rollout_is_seq_fraction_high/low  #{m_s > C} / S, #{m_s < c} / S
//   rollout_is_batch_norm_factor      token: sum t / N; else seq mean of t, where
//                                     t = max(min(w, C), c_low) is the truncated weight
//   rollout_is_post_{mean,min,max}    of the final weight t / factor over the tokens the
//                                     final mask keeps (logratio's addition)
//   rollout_is_changed_fraction       #{t != w or token rejected} / N (logratio's addition)
// Rejection option o with per-token statistic x (one of stats/registry.hpp:
// k1 = -dc, k2 = dc^2 / 2, k3 = exp(dc) - 1 - dc) and thresholds [lo, up] in
// the statistic's space (k1: [log lower, log upper]; k2/k3: [0, upper]); a
// sequence option's x is its per-sequence value X_s (sum, mean or max of
// the token statistic), given to each of its tokens:
//   _mean                 sum x / N (token-weighted)
//   _max / _min           token option: over tokens; sequence option: over X_s
//   _fraction_high/_low   token: #{x > up} / N, #{x < lo} / N; sequence: over S
//                         (_low is 0 without a lower bound: k2/k3)
//   _std                  sqrt(max(0, E[x'^2] - E[x']^2)), x' = clamp(x, lo, up)
//   _seq_{mean,std,max,min}   of X_s (token options: the mean of x over s)
//   _seq_max_deviation    max |X_s|
//   _seq_fraction_high    #{X_s > up} / S; _seq_fraction_low (with a lower bound: k1)
//                         #{X_s < lo} / S
//   _masked_fraction      #{tokens o rejects} / N; _seq_masked_fraction:
//                         #{sequences where o rejects a token} / S
//   rollout_rs_masked_fraction / _seq_masked_fraction: the same for all options
//   together (a token is kept if every option keeps it).
// Veto tau: rollout_is_veto_fraction = #{s: some delta < log tau} / S,
//   rollout_is_catastrophic_token_fraction = #{delta < log tau} / N.
// Off-policy:
//   kl = -sum delta / N; kl_k3 = sum (exp(delta) - 1 - delta) / N (delta unclamped, as verl; key
//   "k3_kl", verl's name: the terms are detail/token_terms.hpp's k3_term);
//   training_ppl = seq mean of exp(-mean_s l_T); training_log_ppl = seq mean of -mean_s l_T;
//   rollout_ppl, rollout_log_ppl the same with l_E;
//   log_ppl_diff_s = mean_s l_E - mean_s l_T: log_ppl_diff / _abs_diff / _max / _min
//   are its seq mean, mean |.|, max, min; ppl_ratio = seq mean of exp(log_ppl_diff_s);
//   chi2_token = sum (rho^2 - 1) / N; chi2_seq = seq mean of exp(2 clamp(sum_s delta)) - 1.
// verl divides masked means by (count + 1e-8); logratio divides by the count
// (a relative difference of at most 1e-8).
// With nonfinite_policy::omit a masked-in token with a NaN/Inf log-prob is a
// masked-out token in every sum above; nonfinite_tokens counts them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "correction_options.hpp"
#include "../core/bytes.hpp"
#include "../core/limits.hpp"
#include "../core/moments.hpp"

LOGRATIO_NAMESPACE_BEGIN

// Every metric starts undefined (NaN): a batch with no masked-in token
// reports them so (the empty-input rule, core/error.hpp); finish() sets each
// one otherwise.

/// IS weight metrics.
struct is_metrics {
    static constexpr double nan = undefined;
    double mean = nan, std = nan, min = nan, max = nan, ratio_fraction_high = nan, ratio_fraction_low = nan;
    double eff_sample_size = nan;
    double seq_mean = nan, seq_std = nan, seq_min = nan, seq_max = nan, seq_max_deviation = nan;
    double seq_fraction_high = nan, seq_fraction_low = nan;
    std::optional<double> batch_norm_factor;  ///< set with batch normalisation
    double post_mean = nan, post_min = nan, post_max = nan, changed_fraction = nan;
};

/// Metrics of one rejection option.
struct rs_metrics {
    static constexpr double nan = undefined;
    std::string option;  ///< verl's option name, e.g. "token_k1"
    double mean = nan, max = nan, min = nan, std = nan, fraction_high = nan, fraction_low = nan;
    double seq_mean = nan, seq_std = nan, seq_max = nan, seq_min = nan, seq_max_deviation = nan,
           seq_fraction_high = nan;
    std::optional<double> seq_fraction_low;  ///< statistics with a lower bound only (k1, as verl)
    double masked_fraction = nan, seq_masked_fraction = nan;
};

struct offpolicy_metrics {
    static constexpr double nan = undefined;
    double kl = nan, kl_k3 = nan, training_ppl = nan, training_log_ppl = nan, rollout_ppl = nan,
           rollout_log_ppl = nan;
    double log_ppl_diff = nan, log_ppl_abs_diff = nan, log_ppl_diff_max = nan, log_ppl_diff_min = nan,
           ppl_ratio = nan;
    double chi2_token = nan, chi2_seq = nan;
};

/// Everything the correction reports.
struct correction_result {
    std::uint64_t tokens = 0, sequences = 0;
    std::uint64_t nonfinite_tokens = 0;  ///< masked-in tokens left out (nonfinite_policy::omit)
    std::optional<is_metrics> is;
    std::vector<rs_metrics> rejection;
    std::optional<double> rs_masked_fraction, rs_seq_masked_fraction;  ///< with rejection
    std::optional<double> veto_fraction, catastrophic_token_fraction;  ///< with veto
    offpolicy_metrics offpolicy;
    /// What the weights were divided by (1 without batch normalisation).
    double weight_scale = 1.0;
    /// slime / trl flavours: their metrics under their own names (flavour.hpp);
    /// correction_entries() gives these instead of verl's.
    framework flavour = framework::verl;
    std::vector<std::pair<std::string, double>> framework_metrics;
};

/// (name, value) pairs with verl's names, each prefixed by `prefix` (verl
/// itself logs them under "rollout_corr/").
inline std::vector<std::pair<std::string, double>> correction_entries(const correction_result& r,
                                                                      const std::string& prefix = "") {
    std::vector<std::pair<std::string, double>> out;
    auto put = [&](const std::string& k, double v) { out.emplace_back(prefix + k, v); };
    if (r.flavour != framework::verl) {
        for (const auto& e : r.framework_metrics) put(e.first, e.second);
        return out;
    }
    if (r.is) {
        const is_metrics& m = *r.is;
        put("rollout_is_mean", m.mean);
        put("rollout_is_ratio_fraction_high", m.ratio_fraction_high);
        put("rollout_is_ratio_fraction_low", m.ratio_fraction_low);
        put("rollout_is_max", m.max);
        put("rollout_is_min", m.min);
        put("rollout_is_std", m.std);
        put("rollout_is_eff_sample_size", m.eff_sample_size);
        put("rollout_is_seq_mean", m.seq_mean);
        put("rollout_is_seq_std", m.seq_std);
        put("rollout_is_seq_max", m.seq_max);
        put("rollout_is_seq_min", m.seq_min);
        put("rollout_is_seq_max_deviation", m.seq_max_deviation);
        put("rollout_is_seq_fraction_high", m.seq_fraction_high);
        put("rollout_is_seq_fraction_low", m.seq_fraction_low);
        if (m.batch_norm_factor) put("rollout_is_batch_norm_factor", *m.batch_norm_factor);
        put("rollout_is_post_mean", m.post_mean);
        put("rollout_is_post_min", m.post_min);
        put("rollout_is_post_max", m.post_max);
        put("rollout_is_changed_fraction", m.changed_fraction);
    }
    for (const rs_metrics& m : r.rejection) {
        const std::string p = "rollout_rs_" + m.option + "_";
        put(p + "mean", m.mean);
        put(p + "max", m.max);
        put(p + "min", m.min);
        put(p + "fraction_high", m.fraction_high);
        put(p + "fraction_low", m.fraction_low);
        put(p + "std", m.std);
        put(p + "seq_mean", m.seq_mean);
        put(p + "seq_std", m.seq_std);
        put(p + "seq_max", m.seq_max);
        put(p + "seq_min", m.seq_min);
        put(p + "seq_max_deviation", m.seq_max_deviation);
        put(p + "seq_fraction_high", m.seq_fraction_high);
        if (m.seq_fraction_low) put(p + "seq_fraction_low", *m.seq_fraction_low);
        put(p + "masked_fraction", m.masked_fraction);
        put(p + "seq_masked_fraction", m.seq_masked_fraction);
    }
    if (r.rs_masked_fraction) put("rollout_rs_masked_fraction", *r.rs_masked_fraction);
    if (r.rs_seq_masked_fraction) put("rollout_rs_seq_masked_fraction", *r.rs_seq_masked_fraction);
    if (r.veto_fraction) put("rollout_is_veto_fraction", *r.veto_fraction);
    if (r.catastrophic_token_fraction) put("rollout_is_catastrophic_token_fraction", *r.catastrophic_token_fraction);
    const offpolicy_metrics& o = r.offpolicy;
    put("training_ppl", o.training_ppl);
    put("training_log_ppl", o.training_log_ppl);
    put("kl", o.kl);
    put("k3_kl", o.kl_k3);  // verl's key for SPEC's kl_k3 (docs/architecture.md, "Names")
    put("rollout_ppl", o.rollout_ppl);
    put("rollout_log_ppl", o.rollout_log_ppl);
    put("log_ppl_diff", o.log_ppl_diff);
    put("log_ppl_abs_diff", o.log_ppl_abs_diff);
    put("log_ppl_diff_max", o.log_ppl_diff_max);
    put("log_ppl_diff_min", o.log_ppl_diff_min);
    put("ppl_ratio", o.ppl_ratio);
    put("chi2_token", o.chi2_token);
    put("chi2_seq", o.chi2_seq);
    return out;
}

namespace detail {
constexpr double inf64 = std::numeric_limits<double>::infinity();
}

/// Sums of the IS weight metrics. Token-weighted sums run over masked-in
/// tokens; seq fields over sequences.
struct is_accumulator {
    double sum_w = 0, sum_c = 0, sum_c2 = 0;  ///< token level: w, w' - 1, (w' - 1)^2
    weighted_moments wc;                      ///< sequence levels: w'_s with weight n_s
    std::uint64_t tok_hi = 0, tok_lo = 0;     ///< token level: w > C, w < c
    double w_min = detail::inf64, w_max = -detail::inf64;    ///< token level
    double lr_min = detail::inf64, lr_max = -detail::inf64;  ///< sequence levels: lr_s
    std::uint64_t lr_hi = 0, lr_lo = 0;                      ///< sequence levels: lr_s > log C, < log c
    moments seq;                                             ///< m_s
    std::uint64_t seq_hi = 0, seq_lo = 0;
    double seq_max_dev = 0;
    double sum_t = 0, sum_seq_t = 0;  ///< truncated t over tokens; seq means of t over sequences
    std::uint64_t kept = 0, changed = 0;
    double post_sum = 0, post_min = detail::inf64, post_max = -detail::inf64;

    void merge(const is_accumulator& o) {
        sum_w += o.sum_w;
        sum_c += o.sum_c;
        sum_c2 += o.sum_c2;
        wc.merge(o.wc);
        tok_hi += o.tok_hi;
        tok_lo += o.tok_lo;
        w_min = std::min(w_min, o.w_min);
        w_max = std::max(w_max, o.w_max);
        lr_min = std::min(lr_min, o.lr_min);
        lr_max = std::max(lr_max, o.lr_max);
        lr_hi += o.lr_hi;
        lr_lo += o.lr_lo;
        seq.merge(o.seq);
        seq_hi += o.seq_hi;
        seq_lo += o.seq_lo;
        seq_max_dev = std::max(seq_max_dev, o.seq_max_dev);
        sum_t += o.sum_t;
        sum_seq_t += o.sum_seq_t;
        kept += o.kept;
        changed += o.changed;
        post_sum += o.post_sum;
        post_min = std::min(post_min, o.post_min);
        post_max = std::max(post_max, o.post_max);
    }

    /// The serialized fields in wire order (one list for serialize and
    /// deserialize).
    template <class Self, class F>
    static void visit_fields(Self& a, F&& f) {
        for (auto* v : {&a.sum_w, &a.sum_c, &a.sum_c2, &a.w_min, &a.w_max, &a.lr_min, &a.lr_max, &a.seq_max_dev,
                        &a.sum_t, &a.sum_seq_t, &a.post_sum, &a.post_min, &a.post_max})
            f(*v);
        for (auto* v : {&a.tok_hi, &a.tok_lo, &a.lr_hi, &a.lr_lo, &a.seq_hi, &a.seq_lo, &a.kept, &a.changed}) f(*v);
        f(a.seq);
        f(a.wc);
    }
};

/// Sums of one rejection option's metrics.
struct rs_accumulator {
    double sum_x = 0, sum_xc = 0, sum_xc2 = 0;  ///< x (token-weighted); token options: x', x'^2
    weighted_moments xc;                        ///< sequence options: X'_s with weight n_s
    double tok_min = detail::inf64, tok_max = -detail::inf64;
    std::uint64_t tok_hi = 0, tok_lo = 0, rejected_tokens = 0;
    moments seq;  ///< X_s
    std::uint64_t seq_hi = 0, seq_lo = 0, rejected_seqs = 0;
    double seq_abs_max = 0;

    void merge(const rs_accumulator& o) {
        sum_x += o.sum_x;
        sum_xc += o.sum_xc;
        sum_xc2 += o.sum_xc2;
        xc.merge(o.xc);
        tok_min = std::min(tok_min, o.tok_min);
        tok_max = std::max(tok_max, o.tok_max);
        tok_hi += o.tok_hi;
        tok_lo += o.tok_lo;
        rejected_tokens += o.rejected_tokens;
        seq.merge(o.seq);
        seq_hi += o.seq_hi;
        seq_lo += o.seq_lo;
        rejected_seqs += o.rejected_seqs;
        seq_abs_max = std::max(seq_abs_max, o.seq_abs_max);
    }

    /// The serialized fields in wire order.
    template <class Self, class F>
    static void visit_fields(Self& a, F&& f) {
        for (auto* v : {&a.sum_x, &a.sum_xc, &a.sum_xc2, &a.tok_min, &a.tok_max, &a.seq_abs_max}) f(*v);
        for (auto* v : {&a.tok_hi, &a.tok_lo, &a.rejected_tokens, &a.seq_hi, &a.seq_lo, &a.rejected_seqs}) f(*v);
        f(a.seq);
        f(a.xc);
    }
};

/// The correction's mergeable state: one pass over a batch (or a range of
/// its sequences) fills it; merge() combines threads, ranks and batches;
/// finish() gives the metrics.
class correction_accumulator {
public:
    correction_options options;
    std::uint64_t tokens = 0, sequences = 0;
    std::uint64_t nonfinite_tokens = 0;  ///< masked-in NaN/Inf tokens left out (nonfinite_policy::omit)
    is_accumulator is;
    std::vector<rs_accumulator> rs;  ///< one per options.rejection entry
    std::uint64_t rs_rejected_tokens = 0, rs_rejected_seqs = 0;
    std::uint64_t veto_seqs = 0, veto_tokens = 0;
    // off-policy sums
    double sum_delta = 0, sum_k3 = 0, sum_chi2 = 0;  ///< tokens: delta, expm1(delta) - delta, expm1(2 dc)
    double sum_train_ppl = 0, sum_train_log_ppl = 0, sum_rollout_ppl = 0, sum_rollout_log_ppl = 0;
    moments log_ppl_diff;
    double sum_abs_log_ppl_diff = 0, sum_ppl_ratio = 0, sum_chi2_seq = 0;  ///< chi2_seq: expm1(2 clamp(lr))

    correction_accumulator() = default;
    explicit correction_accumulator(correction_options o) : options(std::move(o)), rs(options.rejection.size()) {
        options.validate();
    }

    void merge(const correction_accumulator& o) {
        if (!same_options(o)) throw argument_error("correction_accumulator::merge: the two states have different options");
        tokens += o.tokens;
        sequences += o.sequences;
        nonfinite_tokens += o.nonfinite_tokens;
        is.merge(o.is);
        for (std::size_t k = 0; k < rs.size(); ++k) rs[k].merge(o.rs[k]);
        rs_rejected_tokens += o.rs_rejected_tokens;
        rs_rejected_seqs += o.rs_rejected_seqs;
        veto_seqs += o.veto_seqs;
        veto_tokens += o.veto_tokens;
        sum_delta += o.sum_delta;
        sum_k3 += o.sum_k3;
        sum_chi2 += o.sum_chi2;
        sum_train_ppl += o.sum_train_ppl;
        sum_train_log_ppl += o.sum_train_log_ppl;
        sum_rollout_ppl += o.sum_rollout_ppl;
        sum_rollout_log_ppl += o.sum_rollout_log_ppl;
        log_ppl_diff.merge(o.log_ppl_diff);
        sum_abs_log_ppl_diff += o.sum_abs_log_ppl_diff;
        sum_ppl_ratio += o.sum_ppl_ratio;
        sum_chi2_seq += o.sum_chi2_seq;
    }

    /// The batch normalisation divisor of the weights (1 without batch
    /// normalisation, or when the mean is <= 1e-8, as verl).
    double weight_scale() const noexcept {
        if (!options.is || !options.is->batch_normalize || tokens == 0) return 1.0;
        const double mean = options.is->level == is_level::token ? is.sum_t / static_cast<double>(tokens)
                                                                 : is.sum_seq_t / static_cast<double>(sequences);
        return mean > 1e-8 ? mean : 1.0;
    }

    /// The metrics. No masked-in token: the counts, and every metric NaN
    /// (the empty-input rule, core/error.hpp).
    correction_result finish() const {
        if (tokens == 0) return empty_result();
        correction_result r;
        r.tokens = tokens;
        r.sequences = sequences;
        r.nonfinite_tokens = nonfinite_tokens;
        const double N = static_cast<double>(tokens), S = static_cast<double>(sequences);
        r.weight_scale = weight_scale();
        if (options.is) {
            const is_options& io = *options.is;
            const bool tok = io.level == is_level::token;
            is_metrics m;
            m.mean = is.sum_w / N;
            if (tok) {
                m.max = is.w_max;
                m.min = is.w_min;
                m.ratio_fraction_high = static_cast<double>(is.tok_hi) / N;
                m.ratio_fraction_low = static_cast<double>(is.tok_lo) / N;
            } else {
                m.max = std::exp(std::min(is.lr_max, detail::clamp_log_ratio));
                m.min = std::exp(is.lr_min);
                m.ratio_fraction_high = static_cast<double>(is.lr_hi) / S;
                m.ratio_fraction_low = static_cast<double>(is.lr_lo) / S;
            }
            double e1, var;  // E[w'], Var[w'] (token-weighted)
            if (tok) {
                const double mc = is.sum_c / N;  // E[w' - 1]
                e1 = 1.0 + mc;
                var = std::max(0.0, is.sum_c2 / N - mc * mc);
            } else {
                e1 = is.wc.mean;
                var = is.wc.variance();
            }
            m.std = tokens > 1 ? std::sqrt(var) : 0.0;
            m.eff_sample_size = e1 * e1 / (var + e1 * e1);  // E[w']^2 / E[w'^2]
            m.seq_mean = is.seq.mean;
            m.seq_std = is.seq.sample_stddev();
            m.seq_max = is.seq.max;
            m.seq_min = is.seq.min;
            m.seq_max_deviation = is.seq_max_dev;
            m.seq_fraction_high = static_cast<double>(is.seq_hi) / S;
            m.seq_fraction_low = static_cast<double>(is.seq_lo) / S;
            if (io.batch_normalize) m.batch_norm_factor = r.weight_scale;
            if (is.kept) {
                m.post_mean = is.post_sum / static_cast<double>(is.kept) / r.weight_scale;
                m.post_min = is.post_min / r.weight_scale;
                m.post_max = is.post_max / r.weight_scale;
            } else {
                m.post_mean = m.post_min = m.post_max = 0.0;
            }
            m.changed_fraction = static_cast<double>(is.changed) / N;
            r.is = m;
        }
        for (std::size_t k = 0; k < rs.size(); ++k) {
            const rs_option& o = options.rejection[k];
            const rs_accumulator& a = rs[k];
            rs_metrics m;
            m.option = o.name();
            const bool tok = o.is_token_level();
            m.mean = a.sum_x / N;
            m.max = tok ? a.tok_max : a.seq.max;
            m.min = tok ? a.tok_min : a.seq.min;
            if (tok) {
                m.fraction_high = static_cast<double>(a.tok_hi) / N;
                m.fraction_low = o.has_lower() ? static_cast<double>(a.tok_lo) / N : 0.0;
            } else {
                m.fraction_high = static_cast<double>(a.seq_hi) / S;
                m.fraction_low = o.has_lower() ? static_cast<double>(a.seq_lo) / S : 0.0;
            }
            const double mc = a.sum_xc / N;
            const double var = tok ? std::max(0.0, a.sum_xc2 / N - mc * mc) : a.xc.variance();
            m.std = tokens > 1 ? std::sqrt(var) : 0.0;
            m.seq_mean = a.seq.mean;
            m.seq_std = a.seq.sample_stddev();
            m.seq_max = a.seq.max;
            m.seq_min = a.seq.min;
            m.seq_max_deviation = a.seq_abs_max;
            m.seq_fraction_high = static_cast<double>(a.seq_hi) / S;
            if (o.has_lower()) m.seq_fraction_low = static_cast<double>(a.seq_lo) / S;
            m.masked_fraction = static_cast<double>(a.rejected_tokens) / N;
            m.seq_masked_fraction = static_cast<double>(a.rejected_seqs) / S;
            r.rejection.push_back(m);
        }
        if (!rs.empty()) {
            r.rs_masked_fraction = static_cast<double>(rs_rejected_tokens) / N;
            r.rs_seq_masked_fraction = static_cast<double>(rs_rejected_seqs) / S;
        }
        if (options.veto) {
            r.veto_fraction = static_cast<double>(veto_seqs) / S;
            r.catastrophic_token_fraction = static_cast<double>(veto_tokens) / N;
        }
        offpolicy_metrics& p = r.offpolicy;
        p.kl = -sum_delta / N;
        p.kl_k3 = sum_k3 / N;
        p.chi2_token = sum_chi2 / N;
        p.training_ppl = sum_train_ppl / S;
        p.training_log_ppl = sum_train_log_ppl / S;
        p.rollout_ppl = sum_rollout_ppl / S;
        p.rollout_log_ppl = sum_rollout_log_ppl / S;
        p.log_ppl_diff = log_ppl_diff.mean;
        p.log_ppl_abs_diff = sum_abs_log_ppl_diff / S;
        p.log_ppl_diff_max = log_ppl_diff.max;
        p.log_ppl_diff_min = log_ppl_diff.min;
        p.ppl_ratio = sum_ppl_ratio / S;
        p.chi2_seq = sum_chi2_seq / S;
        return r;
    }

    /// The result of a batch with no masked-in token: which metrics the
    /// options ask for, each undefined.
    correction_result empty_result() const {
        correction_result r;
        r.sequences = sequences;
        r.nonfinite_tokens = nonfinite_tokens;
        if (options.is) {
            r.is = is_metrics{};
            if (options.is->batch_normalize) r.is->batch_norm_factor = 1.0;
        }
        for (const rs_option& o : options.rejection) {
            rs_metrics m;
            m.option = o.name();
            if (o.has_lower()) m.seq_fraction_low = undefined;
            r.rejection.push_back(m);
        }
        if (!options.rejection.empty()) r.rs_masked_fraction = r.rs_seq_masked_fraction = undefined;
        if (options.veto) r.veto_fraction = r.catastrophic_token_fraction = undefined;
        return r;
    }

    // ---- serialization: "LRCA", u16 version, options, then the sums.
    // Version 2 adds the nonfinite policy (u8, after positive_tolerance) and
    // nonfinite_tokens (u64, after sequences); version 1 states (no NaN/Inf
    // omitted) are still read.
    static constexpr std::uint16_t format_version = 2;

    /// The serialized sums after the options, in wire order: tokens,
    /// sequences and (version 2) nonfinite_tokens, the IS sums, each
    /// rejection option's, the counts, the off-policy sums (one list for
    /// serialize and deserialize).
    template <class Self, class F>
    static void visit_fields(Self& a, std::uint16_t version, F&& f) {
        f(a.tokens);
        f(a.sequences);
        if (version >= 2) f(a.nonfinite_tokens);
        std::decay_t<decltype(a.is)>::visit_fields(a.is, f);
        for (auto& x : a.rs) std::decay_t<decltype(x)>::visit_fields(x, f);
        for (auto* v : {&a.rs_rejected_tokens, &a.rs_rejected_seqs, &a.veto_seqs, &a.veto_tokens}) f(*v);
        for (auto* v : {&a.sum_delta, &a.sum_k3, &a.sum_chi2, &a.sum_train_ppl, &a.sum_train_log_ppl,
                        &a.sum_rollout_ppl, &a.sum_rollout_log_ppl, &a.sum_abs_log_ppl_diff, &a.sum_ppl_ratio,
                        &a.sum_chi2_seq})
            f(*v);
        f(a.log_ppl_diff);
    }

    std::vector<std::uint8_t> serialize() const {
        detail::byte_writer w;
        w.raw("LRCA", 4);
        w.u16(format_version);
        w.u8(options.is ? 1 : 0);
        if (options.is) {
            w.u8(static_cast<std::uint8_t>(options.is->level));
            w.f64(options.is->upper);
            w.u8(options.is->lower ? 1 : 0);
            w.f64(options.is->lower.value_or(0.0));
            w.u8(options.is->batch_normalize ? 1 : 0);
        }
        w.u32(static_cast<std::uint32_t>(options.rejection.size()));
        for (const rs_option& o : options.rejection) {
            w.u8(static_cast<std::uint8_t>(o.aggregate));
            w.u8(static_cast<std::uint8_t>(o.stat));
            w.f64(o.lower);
            w.f64(o.upper);
        }
        w.u8(options.veto ? 1 : 0);
        w.f64(options.veto.value_or(0.0));
        w.f64(options.positive_tolerance);
        w.u8(static_cast<std::uint8_t>(options.nonfinite));
        visit_fields(*this, format_version, [&](const auto& x) { detail::put(w, x); });
        return w.take();
    }

    static correction_accumulator deserialize(const void* data, std::size_t size) {
        detail::byte_reader r(data, size, "correction_accumulator");
        const std::uint16_t version = r.expect_header("LRCA", 1, format_version);
        correction_options o;
        const std::uint8_t has_is = r.u8();
        if (has_is > 1) r.fail("bad IS flag");
        if (has_is) {
            is_options io;
            const std::uint8_t lvl = r.u8();
            if (lvl > 2) r.fail(detail::concat("unknown IS level ", int(lvl)));
            io.level = static_cast<is_level>(lvl);
            io.upper = r.f64();
            const std::uint8_t has_lower = r.u8();
            const double lower = r.f64();
            if (has_lower > 1) r.fail("bad lower-threshold flag");
            if (has_lower) io.lower = lower;
            const std::uint8_t bn = r.u8();
            if (bn > 1) r.fail("bad batch-normalize flag");
            io.batch_normalize = bn != 0;
            o.is = io;
        }
        const std::uint32_t nrs = r.u32();
        const std::size_t options = detail::rs_option_count();
        if (nrs > options) r.fail(detail::concat(nrs, " rejection options (there are ", options, ")"));
        for (std::uint32_t k = 0; k < nrs; ++k) {
            rs_option ro;
            const std::uint8_t ag = r.u8(), st = r.u8();
            if (ag > 3 || st >= rs_stat_count) r.fail("unknown rejection option");
            ro.aggregate = static_cast<rs_aggregate>(ag);
            ro.stat = static_cast<rs_stat>(st);
            ro.lower = r.f64();
            ro.upper = r.f64();
            o.rejection.push_back(ro);
        }
        const std::uint8_t has_veto = r.u8();
        const double veto = r.f64();
        if (has_veto > 1) r.fail("bad veto flag");
        if (has_veto) o.veto = veto;
        o.positive_tolerance = r.f64();
        if (version >= 2) {
            const std::uint8_t nf = r.u8();
            if (nf > 1) r.fail("bad nonfinite policy");
            o.nonfinite = static_cast<nonfinite_policy>(nf);
        }
        correction_accumulator a;
        try {
            a = correction_accumulator(o);
        } catch (const error& e) {
            r.fail(detail::concat("invalid options: ", e.what()));
        }
        visit_fields(a, version, [&](auto& x) { detail::get(r, x); });
        r.expect_end();
        for (const rs_accumulator& x : a.rs)
            if (x.tok_hi > a.tokens || x.tok_lo > a.tokens || x.rejected_tokens > a.tokens ||
                x.seq_hi > a.sequences || x.seq_lo > a.sequences || x.rejected_seqs > a.sequences ||
                x.seq.n != a.sequences)
                r.fail("inconsistent rejection counts");
        const std::uint64_t N = a.tokens, S = a.sequences;
        if (S > N || a.log_ppl_diff.n != S || a.rs_rejected_tokens > N || a.rs_rejected_seqs > S ||
            a.veto_seqs > S || a.veto_tokens > N || a.is.kept > N || a.is.changed > N || a.is.tok_hi > N ||
            a.is.tok_lo > N || a.is.lr_hi > S || a.is.lr_lo > S || a.is.seq_hi > S || a.is.seq_lo > S ||
            (a.options.is && a.is.seq.n != S))
            r.fail("inconsistent counts");
        return a;
    }
    static correction_accumulator deserialize(const std::vector<std::uint8_t>& bytes) {
        return deserialize(bytes.data(), bytes.size());
    }

private:
    /// The options that shape the sums (positive_tolerance and nonfinite
    /// only decide what a bad token does: states of either merge).
    bool same_options(const correction_accumulator& o) const {
        const correction_options &a = options, &b = o.options;
        if (a.is.has_value() != b.is.has_value() || a.rejection.size() != b.rejection.size() ||
            a.veto != b.veto || rs.size() != o.rs.size())
            return false;
        if (a.is && (a.is->level != b.is->level || a.is->upper != b.is->upper || a.is->lower != b.is->lower ||
                     a.is->batch_normalize != b.is->batch_normalize))
            return false;
        for (std::size_t k = 0; k < a.rejection.size(); ++k) {
            const rs_option &x = a.rejection[k], &y = b.rejection[k];
            if (x.aggregate != y.aggregate || x.stat != y.stat || x.lower != y.lower || x.upper != y.upper)
                return false;
        }
        return true;
    }
};

LOGRATIO_NAMESPACE_END
