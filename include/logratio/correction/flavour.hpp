#pragma once
// The slime and TRL flavours of the correction: their weights, masks and
// metrics (names, aggregation and definitions as their own code), computed
// by one pass over the sequences after the correction kernel has validated
// the input and written the 0/1 mask (detail/correction_kernel.hpp runs with
// no IS and no rejection for these flavours). Modes and settings:
// flavour_options.hpp. Used by correct() (correction.hpp).
//
// Cost: the kernel's validation pass plus this pass (two reads of each
// sequence's log-probs and mask, one write of its weights and mask; scalar
// std::exp per token, one thread); slime's batch normalisation adds one more
// pass over the weights. What that costs per token, by mode:
// docs/benchmarks.md ("Framework flavours").
//
// Definitions (delta = l_T - l_E in double from the inputs; rho = exp(delta);
// rho_c = exp(clamp(., +-20)); n_s the masked-in tokens of sequence s):
//  slime (624b824a). Every metric is slime's sum_of_sample_mean of a per-token
//  value x over the ORIGINAL loss mask, then divided by the number of samples
//  (cp_utils.py get_sum_of_sample_mean, train_metric_utils.py
//  reduce_train_step_metrics, one sample per rollout):
//      (1/B) sum_s sum_{t in s} x_t / max(n_s, 1)   (B = rows, empty ones included)
//  or with calculate_per_token_loss  sum_t x_t / sum_s max(n_s, 1).
//    train_rollout_logprob_abs_diff  x = |delta| over the tokens the modified mask
//      keeps (numerator), the original n_s as denominator (loss.py 1086-1092 and
//      1136-1151: the reducer is rebuilt with modified_response_masks first); the
//      other metrics use the original mask in both (loss.py 1058-1059, 1161-1163)
//    slime:tis / slime:icepop (loss.py 884-931): tis x = rho (unclamped),
//      tis_clipfrac x = [w != rho], tis_abs x = |rho - 1|; weights
//      w = clamp(rho, tis_clip_low, tis_clip) / rho inside [low, high] else 0;
//      the mask is unchanged (as slime returns it).
//    slime:mis-* and the mismatch metrics (mis.py, keys "mis_" + name):
//      training/rollout_log_ppl = -mean_s l, _ppl = exp of it, kl x = -delta,
//      k3_kl x = exp(delta) - delta - 1, log_ppl_diff = mean_s l_E - mean_s l_T,
//      log_ppl_abs_diff, ppl_ratio = exp(log_ppl_diff), chi2_token = mean_s rho_c^2 - 1,
//      chi2_seq = exp(2 clamp(sum_s delta)) - 1 (per-sequence values count once per token);
//      tis_weight_before_bound w0 = exp(clamp(lr)) (lr = delta, sum_s delta or
//      sum_s delta / max(n_s, 1)), tis_truncate_fraction [w0 > U] | tis_clip_fraction_low/high
//      [w0 < L] / [w0 > U] | tis_mask_fraction_low/high, tis_weight_after_bound and
//      is_ratio_mean_after_tis_rs (the bounded w), rs_mask_fraction_low/high on the rs
//      level's w0, rs_catastrophic_token_fraction [delta < log tau],
//      rs_catastrophic_seq_fraction, batch_norm_factor f, is_ratio_{mean,min,max}_final
//      per sequence of w / f. Mask: original x tis band (mask mode) x rs band x veto.
//  TRL (f2cd5771, grpo_trainer.py 2579-2624, 2779-2813): ratio r = exp(delta) per
//    token, or exp(sum_s delta) per row in sequence modes; truncate: clamp(r, clip_min,
//    clip_max); mask: 0 outside [clip_min, clip_max]. sampling/importance_sampling_ratio/
//    {min,mean,max} over the masked-in tokens (token modes; masked ones count as 0) or over
//    the rows (sequence modes, one value per row, empty rows included);
//    sampling/sampling_logp_difference/{mean,max} of |delta| over masked-in tokens.
//    The mask is unchanged (TRL never changes completion_mask).
// Weights are 0 on masked-out tokens (the frameworks multiply by the mask).
//
// Where the frameworks' float32 is the limit (they compute in float32,
// logratio in double). Largest relative differences measured against their
// own outputs on the four test fixtures (tests/test_flavours.cpp; every other
// metric <= 1e-6, masks identical):
//  * mis_log_ppl_diff / mis_log_ppl_abs_diff 1.5e-5: float32 cancellation of
//    mean_s l_E - mean_s l_T (two float32 means of ~-12 on heavy_x20);
//  * mis_k3_kl 2.1e-6: exp(delta) - delta - 1 in float32 cancels for small delta
//    (logratio: expm1(delta) - delta);
//  * mis_chi2_seq 1.05e-6 and the sequence / geometric level weights and
//    metrics 1.5e-6: slime's float32 masked_sum and TRL's float32 row sum of delta,
//    whose absolute rounding error exp() turns into a relative one;
//  * token-level weights 3.3e-7: two float32 roundings, plus slime's float32
//    batch mean with tis_batch_normalize;
//  * slime's sum_of_sample_mean adds float32 per-sample means (~1e-7);
//  * comparisons with the bounds use double rho here, float32 in the frameworks:
//    a ratio within one float32 ulp of a bound could land on the other side
//    (none does on the test data).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../core/dtype.hpp"
#include "../core/limits.hpp"
#include "flavour_options.hpp"
#include "../core/view.hpp"
#include "../detail/token_terms.hpp"

LOGRATIO_NAMESPACE_BEGIN

using metric_entries = std::vector<std::pair<std::string, double>>;

namespace detail {

/// slime's metric reduction (see the header comment).
class slime_reducer {
public:
    explicit slime_reducer(bool per_token) : per_token_(per_token) {}
    std::size_t key(const std::string& name) {
        names_.push_back(name);
        sums_.push_back(0.0);
        return sums_.size() - 1;
    }
    void next_sequence(std::uint64_t n) {
        n1_ = static_cast<double>(std::max<std::uint64_t>(n, 1));
        if (!counting_) return;
        rows_ += 1.0;
        tokens1_ += n1_;
    }
    /// A second loop over the same sequences adds to the sums only.
    void second_pass() noexcept { counting_ = false; }
    /// Adds sum_{t in s} x_t of the current sequence.
    void add(std::size_t k, double seq_sum) { sums_[k] += per_token_ ? seq_sum : seq_sum / n1_; }
    metric_entries finish() const {
        metric_entries out;
        const double d = per_token_ ? tokens1_ : rows_;
        for (std::size_t k = 0; k < sums_.size(); ++k) out.emplace_back(names_[k], d > 0 ? sums_[k] / d : 0.0);
        return out;
    }

private:
    bool per_token_;
    bool counting_ = true;
    double n1_ = 1.0, rows_ = 0.0, tokens1_ = 0.0;
    std::vector<std::string> names_;
    std::vector<double> sums_;
};

template <class T, class M>
double delta_at(const paired_view<T, M>& v, std::uint64_t i) noexcept {
    return to_double(v.train()[i]) - to_double(v.rollout()[i]);
}

inline double exp_safe(double lr) noexcept { return std::exp(clamp_delta(lr)); }

/// Per-sequence sums of the mismatch metrics (first loop over a sequence).
struct seq_sums {
    std::uint64_t n = 0;
    double lt = 0, le = 0, d = 0, abs_d = 0, k3 = 0, rho2 = 0;
    bool catastrophic = false;

    template <class T, class M>
    void read(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, double log_veto) {
        for (std::uint64_t i = b; i < e; ++i) {
            if (!v.counts(i)) continue;
            const double t = to_double(v.train()[i]), r = to_double(v.rollout()[i]), x = detail::token_delta(t, r);
            ++n;
            lt += t;
            le += r;
            d += x;
            abs_d += std::fabs(x);
            k3 += detail::k3_term(std::expm1(x), x);  // unclamped, as slime
            const double rc = exp_safe(x);
            rho2 += rc * rc;
            catastrophic = catastrophic || x < log_veto;
        }
    }
    double n1() const noexcept { return static_cast<double>(std::max<std::uint64_t>(n, 1)); }
    /// The log ratio of level l for the whole sequence (sequence / geometric).
    double log_ratio(is_level l) const noexcept { return l == is_level::sequence ? d : d / n1(); }
};

/// The MIS helper's always-on metrics (mis.py add_ppl_metrics) and loss.py's
/// train_rollout_logprob_abs_diff.
struct slime_mismatch_keys {
    std::size_t abs_diff, tlp, tp, rlp, rp, kl, k3, lpd, lpad, ppl_ratio, chi2_token, chi2_seq;
    explicit slime_mismatch_keys(slime_reducer& r)
        : abs_diff(r.key("train_rollout_logprob_abs_diff")), tlp(r.key("mis_training_log_ppl")),
          tp(r.key("mis_training_ppl")), rlp(r.key("mis_rollout_log_ppl")), rp(r.key("mis_rollout_ppl")),
          kl(r.key("mis_kl")), k3(r.key("mis_k3_kl")), lpd(r.key("mis_log_ppl_diff")),
          lpad(r.key("mis_log_ppl_abs_diff")), ppl_ratio(r.key("mis_ppl_ratio")), chi2_token(r.key("mis_chi2_token")),
          chi2_seq(r.key("mis_chi2_seq")) {}
    /// abs_d_kept: sum of |delta| over the tokens the modified mask keeps
    /// (loss.py 1086-1092 rebuilds sum_of_sample_mean with
    /// modified_response_masks before line 1140 reduces |delta| with it; the
    /// denominators stay the original mask sums); s.abs_d without rejection.
    void add(slime_reducer& r, const seq_sums& s, double abs_d_kept) const {
        const double n = static_cast<double>(s.n), n1 = s.n1();
        const double tlog = -s.lt / n1, rlog = -s.le / n1, diff = s.le / n1 - s.lt / n1;
        r.add(abs_diff, abs_d_kept);
        r.add(tlp, tlog * n);
        r.add(tp, std::exp(tlog) * n);
        r.add(rlp, rlog * n);
        r.add(rp, std::exp(rlog) * n);
        r.add(kl, -s.d);
        r.add(k3, s.k3);
        r.add(lpd, diff * n);
        r.add(lpad, std::fabs(diff) * n);
        r.add(ppl_ratio, std::exp(diff) * n);
        r.add(chi2_token, (s.rho2 / n1 - 1.0) * n);
        r.add(chi2_seq, std::expm1(2.0 * clamp_delta(s.d)) * n);
    }
};

template <class T, class M, class F>
void for_each_sequence(const paired_view<T, M>& v, F&& f) {
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) f(v.sequence_begin(s), v.sequence_end(s));
}

template <class T, class M, class W>
metric_entries slime_mismatch_pass(const paired_view<T, M>& v, const framework_mode& m, W* w) {
    slime_reducer r(m.calculate_per_token_loss);
    const slime_mismatch_keys keys(r);
    for_each_sequence(v, [&](std::uint64_t b, std::uint64_t e) {
        seq_sums s;
        s.read(v, b, e, -std::numeric_limits<double>::infinity());
        if (w)  // use_tis off: pg_loss is not reweighted (w = 1 where the mask is on)
            for (std::uint64_t i = b; i < e; ++i) w[i] = v.counts(i) ? W(1) : W(0);
        r.next_sequence(s.n);
        keys.add(r, s, s.abs_d);
    });
    return r.finish();
}

/// slime:tis (vanilla_tis_function) and slime:icepop (icepop_function).
template <class T, class M, class W>
metric_entries slime_tis_pass(const paired_view<T, M>& v, const framework_mode& m, W* w) {
    slime_reducer r(m.calculate_per_token_loss);
    const std::size_t k_abs = r.key("train_rollout_logprob_abs_diff"), k_tis = r.key("tis"),
                      k_clip = r.key("tis_clipfrac"), k_tabs = r.key("tis_abs");
    const bool ice = m.slime == slime_kind::icepop;
    const double lo = m.tis_clip_low, hi = m.tis_clip;
    for_each_sequence(v, [&](std::uint64_t b, std::uint64_t e) {
        std::uint64_t n = 0;
        double abs_d = 0, rho_sum = 0, clipped = 0, rho_abs = 0;
        for (std::uint64_t i = b; i < e; ++i) {
            if (!v.counts(i)) {
                w[i] = W(0);
                continue;
            }
            const double d = delta_at(v, i), rho = std::exp(d);
            const double wt = ice ? (rho >= lo && rho <= hi ? rho : 0.0) : std::min(std::max(rho, lo), hi);
            w[i] = static_cast<W>(wt);
            ++n;
            abs_d += std::fabs(d);
            rho_sum += rho;
            clipped += wt != rho ? 1.0 : 0.0;
            rho_abs += std::fabs(std::expm1(d));
        }
        r.next_sequence(n);
        r.add(k_abs, abs_d);
        r.add(k_tis, rho_sum);
        r.add(k_clip, clipped);
        r.add(k_tabs, rho_abs);
    });
    return r.finish();
}

/// The MIS helper's metric keys, in mis.py's order, for one mode.
struct mis_keys {
    std::size_t before, frac_lo = 0, frac_hi = 0, after, rs_lo = 0, rs_hi = 0, cat_tok = 0, cat_seq = 0, after_rs;
    std::size_t bn = 0, mean_final, min_final, max_final;
    mis_keys(slime_reducer& r, const framework_mode& m) {
        before = r.key("mis_tis_weight_before_bound");
        if (m.tis_mode == mis_bound::truncate) {
            frac_hi = r.key("mis_tis_truncate_fraction");
        } else {
            const std::string p = m.tis_mode == mis_bound::clip ? "mis_tis_clip_fraction_" : "mis_tis_mask_fraction_";
            frac_lo = r.key(p + "low");
            frac_hi = r.key(p + "high");
        }
        after = r.key("mis_tis_weight_after_bound");
        if (m.use_rs) {
            rs_lo = r.key("mis_rs_mask_fraction_low");
            rs_hi = r.key("mis_rs_mask_fraction_high");
            if (m.rs_veto_threshold) {
                cat_tok = r.key("mis_rs_catastrophic_token_fraction");
                cat_seq = r.key("mis_rs_catastrophic_seq_fraction");
            }
        }
        after_rs = r.key("mis_is_ratio_mean_after_tis_rs");
        if (m.tis_batch_normalize) bn = r.key("mis_batch_norm_factor");
        mean_final = r.key("mis_is_ratio_mean_final");
        min_final = r.key("mis_is_ratio_min_final");
        max_final = r.key("mis_is_ratio_max_final");
    }
};

/// Per-sequence results of the MIS token loop.
struct mis_seq {
    double abs_d_kept = 0;  ///< sum of |delta| over the tokens the modified mask keeps
    double before = 0, frac_lo = 0, frac_hi = 0, after = 0, rs_lo = 0, rs_hi = 0, cat_tok = 0;
    double after_min = std::numeric_limits<double>::infinity(), after_max = -std::numeric_limits<double>::infinity();
};

/// The token loop of compute_mis_weights for one sequence: writes the
/// bounded weights and the modified mask of [b, e).
template <class T, class M, class W>
mis_seq mis_tokens(const paired_view<T, M>& v, const framework_mode& m, const seq_sums& s, std::uint64_t b,
                   std::uint64_t e, W* w, std::uint8_t* mask) {
    mis_seq q;
    const double U = m.tis_upper_bound, L = m.mis_lower(), rlo = m.rs_lower(), rhi = m.rs_upper();
    const double log_veto = m.rs_veto_threshold ? std::log(*m.rs_veto_threshold) : -1e300;
    const double w_seq = exp_safe(m.tis_level == is_level::token ? 0.0 : s.log_ratio(m.tis_level));
    const double rs_seq = exp_safe(m.rs_at() == is_level::token ? 0.0 : s.log_ratio(m.rs_at()));
    const bool vetoed = m.use_rs && m.rs_veto_threshold && s.catastrophic;
    for (std::uint64_t i = b; i < e; ++i) {
        if (!v.counts(i)) {
            w[i] = W(0);
            mask[i] = 0;
            continue;
        }
        const double d = delta_at(v, i);
        const double w0 = m.tis_level == is_level::token ? exp_safe(d) : w_seq;
        double wa = w0;
        bool keep = true;
        if (m.tis_mode == mis_bound::truncate) wa = std::min(w0, U);
        else if (m.tis_mode == mis_bound::clip) wa = std::min(std::max(w0, L), U);
        else keep = w0 >= L && w0 <= U;
        q.frac_lo += m.tis_mode != mis_bound::truncate && w0 < L ? 1.0 : 0.0;
        q.frac_hi += w0 > U ? 1.0 : 0.0;
        if (m.use_rs) {
            const double rw = m.rs_at() == is_level::token ? exp_safe(d) : rs_seq;
            q.rs_lo += rw < rlo ? 1.0 : 0.0;
            q.rs_hi += rw > rhi ? 1.0 : 0.0;
            keep = keep && rw >= rlo && rw <= rhi;
            q.cat_tok += d < log_veto ? 1.0 : 0.0;
        }
        w[i] = static_cast<W>(wa);
        mask[i] = keep && !vetoed ? 1 : 0;
        q.abs_d_kept += mask[i] ? std::fabs(d) : 0.0;
        q.before += w0;
        q.after += wa;
        q.after_min = std::min(q.after_min, wa);
        q.after_max = std::max(q.after_max, wa);
    }
    return q;
}

/// slime:mis-*: compute_mis_weights (mis.py), then the batch normalisation.
template <class T, class M, class W>
metric_entries slime_mis_pass(const paired_view<T, M>& v, const framework_mode& m, W* w, std::uint8_t* mask) {
    slime_reducer r(m.calculate_per_token_loss);
    const slime_mismatch_keys keys(r);
    const mis_keys k(r, m);
    struct final_stats {
        std::uint64_t n;
        double mean, min, max;
    };
    std::vector<final_stats> fin;
    fin.reserve(v.num_sequences());
    double bn_token_sum = 0, bn_seq_sum = 0, tokens = 0;
    const double log_veto = m.rs_veto_threshold ? std::log(*m.rs_veto_threshold) : -1e300;
    for_each_sequence(v, [&](std::uint64_t b, std::uint64_t e) {
        seq_sums s;
        s.read(v, b, e, log_veto);
        const mis_seq q = mis_tokens(v, m, s, b, e, w, mask);
        r.next_sequence(s.n);
        keys.add(r, s, q.abs_d_kept);
        r.add(k.before, q.before);
        if (m.tis_mode != mis_bound::truncate) r.add(k.frac_lo, q.frac_lo);
        r.add(k.frac_hi, q.frac_hi);
        r.add(k.after, q.after);
        if (m.use_rs) {
            r.add(k.rs_lo, q.rs_lo);
            r.add(k.rs_hi, q.rs_hi);
            if (m.rs_veto_threshold) {
                r.add(k.cat_tok, q.cat_tok);
                r.add(k.cat_seq, s.catastrophic ? static_cast<double>(s.n) : 0.0);
            }
        }
        r.add(k.after_rs, q.after);
        fin.push_back({s.n, q.after / s.n1(), s.n ? q.after_min : 0.0, s.n ? q.after_max : 0.0});
        bn_token_sum += q.after;
        bn_seq_sum += q.after / s.n1();
        tokens += static_cast<double>(s.n);
    });
    double factor = 1.0;
    if (m.tis_batch_normalize) {  // mis.py: token level over tokens, sequence level over samples
        const double mean = m.tis_level == is_level::token
                                ? bn_token_sum / std::max(tokens, 1.0)
                                : bn_seq_sum / std::max(static_cast<double>(v.num_sequences()), 1.0);
        factor = mean > 1e-8 ? mean : 1.0;
        if (factor != 1.0)
            for (std::uint64_t i = 0; i < v.size(); ++i) w[i] = static_cast<W>(static_cast<double>(w[i]) / factor);
    }
    std::uint64_t s = 0;
    r.second_pass();
    for_each_sequence(v, [&](std::uint64_t, std::uint64_t) {  // the per-sequence final statistics
        const final_stats& f = fin[s++];
        r.next_sequence(f.n);
        const double n = static_cast<double>(f.n);
        if (m.tis_batch_normalize) r.add(k.bn, factor * n);
        r.add(k.mean_final, f.mean / factor * n);
        r.add(k.min_final, f.min / factor * n);
        r.add(k.max_final, f.max / factor * n);
    });
    return r.finish();
}

/// TRL's bound of a ratio (grpo_trainer.py 2596-2619).
inline double trl_bound(const framework_mode& m, double r) noexcept {
    const double lo = m.clip_min ? *m.clip_min : -std::numeric_limits<double>::infinity();
    const double hi = m.clip_max ? *m.clip_max : std::numeric_limits<double>::infinity();
    if (m.trl_masks()) return r < lo || r > hi ? 0.0 : r;
    return std::min(std::max(r, lo), hi);
}

/// TRL's importance_sampling_ratio and sampling/* metrics.
template <class T, class M, class W>
metric_entries trl_pass(const paired_view<T, M>& v, const framework_mode& m, W* w) {
    double abs_sum = 0, abs_max = 0, tokens = 0;
    double r_sum = 0, r_min = std::numeric_limits<double>::infinity(), r_max = -r_min, r_n = 0;
    auto take = [&](double x) {
        r_sum += x;
        r_min = std::min(r_min, x);
        r_max = std::max(r_max, x);
        r_n += 1.0;
    };
    for_each_sequence(v, [&](std::uint64_t b, std::uint64_t e) {
        double sum = 0;
        for (std::uint64_t i = b; i < e; ++i) {
            if (!v.counts(i)) continue;
            const double d = delta_at(v, i);
            sum += d;
            abs_sum += std::fabs(d);
            abs_max = std::max(abs_max, std::fabs(d));
            tokens += 1.0;
        }
        const double row = m.trl_sequence() ? trl_bound(m, std::exp(sum)) : 0.0;
        if (m.trl_sequence()) take(row);
        for (std::uint64_t i = b; i < e; ++i) {
            if (!v.counts(i)) {
                w[i] = W(0);
                continue;
            }
            const double x = m.trl_sequence() ? row : trl_bound(m, std::exp(delta_at(v, i)));
            if (!m.trl_sequence()) take(x);
            w[i] = static_cast<W>(x);
        }
    });
    const bool any = r_n > 0;
    return {{"sampling/sampling_logp_difference/mean", tokens > 0 ? abs_sum / tokens : 0.0},
            {"sampling/sampling_logp_difference/max", abs_max},
            {"sampling/importance_sampling_ratio/min", any ? r_min : 0.0},
            {"sampling/importance_sampling_ratio/mean", any ? r_sum / r_n : 0.0},
            {"sampling/importance_sampling_ratio/max", any ? r_max : 0.0}};
}

}  // namespace detail

/// The flavour's weights, mask and metrics for the whole batch v (see the
/// header comment); `mask` must hold the input mask as 0/1 (the kernel's
/// output without rejection), both of v.size() entries.
template <class T, class M, class W>
metric_entries framework_pass(const paired_view<T, M>& v, const framework_mode& m, W* weights, std::uint8_t* mask) {
    if (m.fw == framework::trl) return detail::trl_pass(v, m, weights);
    switch (m.slime) {
        case slime_kind::tis:
        case slime_kind::icepop: return detail::slime_tis_pass(v, m, weights);
        case slime_kind::mis: return detail::slime_mis_pass(v, m, weights, mask);
        case slime_kind::metrics_only: break;
    }
    return detail::slime_mismatch_pass(v, m, weights);
}

/// The mismatch metrics a framework logs without any correction: slime's
/// train_rollout_logprob_abs_diff and the MIS helper's mis_* (use_tis off),
/// TRL's sampling/sampling_logp_difference/{mean,max}; none for verl.
template <class T, class M>
metric_entries framework_mismatch_entries(const paired_view<T, M>& v, framework f,
                                          bool calculate_per_token_loss = false) {
    if (f == framework::verl) return {};
    framework_mode m;
    m.fw = framework::slime;
    m.calculate_per_token_loss = calculate_per_token_loss;
    if (f == framework::slime) return detail::slime_mismatch_pass(v, m, static_cast<float*>(nullptr));
    m.fw = framework::trl;
    m.trl = trl_kind::token_truncate;
    std::vector<float> w(v.size());
    metric_entries e = detail::trl_pass(v, m, w.data());
    e.resize(2);  // the logp differences only
    return e;
}

LOGRATIO_NAMESPACE_END
