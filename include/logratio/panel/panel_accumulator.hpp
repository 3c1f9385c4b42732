#pragma once
// The ratio panel's value types: options, the finished panel, and the
// mergeable accumulator. (The one-pass computation is in panel.hpp; the key
// spellings in panel_keys.hpp; the wire format in panel_wire.hpp.)
//
// This header is where each metric's formula lives (panel_accumulator::finish
// turns the accumulated sums into SPEC's values); the per-token terms that are
// summed are listed in detail/panel_kernel.hpp (defined in ../detail/token_terms.hpp). delta = l_T - l_E = log rho,
// dc = clamp(delta, -20, 20), e = expm1(dc) = rho - 1. Sums run over the
// masked-in tokens M (N = |M|) and the S sequences with at least one of them.
//
//   tokens, sequences        N, S
//   delta_mean               sum(delta) / N
//   delta_abs_mean           sum|delta| / N
//   delta_std                population std of delta (ddof 0)
//   delta_min/max/abs_max    extremes; abs_max also located (sequence, position)
//   ratio_mean/std/min/max   of rho = 1 + e (std ddof 0)
//   (kl_k1/k2/k3 estimate KL(mu||pi) = E_mu[-delta] -- panel::kl_rollout_train();
//    kl_reverse estimates KL(pi||mu) = E_mu[rho delta] -- panel::kl_train_rollout())
//   kl_k1                    sum(-delta) / N
//   kl_k2                    sum(delta^2 / 2) / N      (= (var + mean^2) / 2)
//   kl_k3                    sum(e - dc) / N           (>= 0, no cancellation)
//   kl_reverse               sum(rho * dc) / N
//   chi2                     sum(e * (e + 2)) / N      (= expm1(2 dc); = 2 m + m^2 + var of e)
//   tv                       sum|e| / (2N)
//   ess_fraction             (sum rho)^2 / (N sum rho^2)
//   train/rollout_logprob_mean   sum(l) / N
//   train/rollout_ppl        mean over sequences of exp(-sum_s l / L_s)
//   seq_log_ratio_*          mean/std/min/max over sequences of sum_s delta
//   seq_geo_log_ratio_*      same of sum_s delta / L_s
//   frac_abs_delta_gt_{thr}  fraction of tokens with |delta| > thr
//
// With N = 0 only tokens = sequences = 0 are values; every other field is
// NaN and panel_entries() reports it as absent.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/bytes.hpp"
#include "../core/error.hpp"
#include "../core/framework.hpp"
#include "../core/nonfinite.hpp"
#include "../core/limits.hpp"
#include "../core/moments.hpp"

LOGRATIO_NAMESPACE_BEGIN

struct panel_options {
    static constexpr std::size_t max_thresholds = 8;
    /// |delta| thresholds of the frac_abs_delta_gt_* keys (>= 0, at most 8).
    std::vector<double> abs_delta_thresholds{1e-3, 0.01, 0.1, 1.0};
    /// A log-prob above this is an error (log-probs are <= 0).
    double positive_tolerance = default_positive_tolerance;
    nonfinite_policy nonfinite = nonfinite_policy::raise;
    /// Besides SPEC's keys, the mismatch metrics this framework logs without
    /// a correction (flavour.hpp framework_mismatch_entries): slime's
    /// train_rollout_logprob_abs_diff and mis_*, TRL's
    /// sampling/sampling_logp_difference/{mean,max}; none for verl.
    framework flavour = framework::verl;
};

/// Where a token is: sequence (row of padded, segment of packed) and
/// position inside it.
struct token_location {
    std::uint64_t sequence = 0;
    std::uint64_t position = 0;
};

namespace detail {
inline void put(byte_writer& w, const token_location& l) {
    w.u64(l.sequence);
    w.u64(l.position);
}
inline void get(byte_reader& r, token_location& l) {
    l.sequence = r.u64();
    l.position = r.u64();
}
}  // namespace detail

/// The finished panel. Field names are SPEC's keys.
struct panel {
    static constexpr double nan = undefined;
    std::uint64_t tokens = 0, sequences = 0;
    std::uint64_t nonfinite_tokens = 0;  ///< masked-in tokens left out (policy omit)
    double delta_mean = nan, delta_abs_mean = nan, delta_std = nan;
    double delta_min = nan, delta_max = nan, delta_abs_max = nan;
    token_location delta_abs_max_at{};
    double ratio_mean = nan, ratio_std = nan, ratio_min = nan, ratio_max = nan;
    double kl_k1 = nan, kl_k2 = nan, kl_k3 = nan, kl_reverse = nan, chi2 = nan, tv = nan;
    /// The two KL directions in logits.hpp's words (pi: trainer, mu: rollout;
    /// the tokens are samples of mu). SPEC's keys stay kl_k3 / kl_reverse.
    /// KL(mu||pi), by the k3 estimator (unbiased, >= 0 per token):
    double kl_rollout_train() const noexcept { return kl_k3; }
    /// KL(pi||mu) = E_mu[rho log rho]:
    double kl_train_rollout() const noexcept { return kl_reverse; }
    double ess_fraction = nan;
    double train_logprob_mean = nan, rollout_logprob_mean = nan;
    double train_ppl = nan, rollout_ppl = nan;
    double seq_log_ratio_mean = nan, seq_log_ratio_std = nan, seq_log_ratio_min = nan, seq_log_ratio_max = nan;
    double seq_geo_log_ratio_mean = nan, seq_geo_log_ratio_std = nan, seq_geo_log_ratio_min = nan,
           seq_geo_log_ratio_max = nan;
    std::vector<double> abs_delta_thresholds;  ///< the thresholds of frac_abs_delta_gt
    std::vector<double> frac_abs_delta_gt;     ///< one per threshold
    /// Exact quantiles (opt-in second pass, see quantiles.hpp): (p, value).
    std::vector<std::pair<double, double>> delta_quantiles, abs_delta_quantiles;
};

/// The mergeable one-pass state of the panel. Plain values only; merge() is
/// associative and commutative up to floating-point rounding, and the result
/// does not depend on how the tokens were split.
struct panel_accumulator {
    std::uint64_t tokens = 0;
    std::uint64_t nonfinite_tokens = 0;
    double sum_train = 0, sum_rollout = 0;
    moments delta;     ///< of delta (mean, M2, min, max)
    moments ratio_m1;  ///< of e = rho - 1
    double sum_abs_delta = 0;
    double sum_k3 = 0, sum_reverse = 0, sum_tv = 0;
    double abs_max = -1.0;  ///< -1: no token yet
    token_location abs_max_at{};
    moments seq_log, seq_geo;  ///< per-sequence sum(delta), sum(delta)/L
    double sum_train_ppl = 0, sum_rollout_ppl = 0;
    std::uint32_t num_thresholds = 0;
    std::array<double, panel_options::max_thresholds> thresholds{};
    std::array<std::uint64_t, panel_options::max_thresholds> above{};

    panel_accumulator() = default;
    explicit panel_accumulator(const panel_options& o) {
        if (o.abs_delta_thresholds.size() > panel_options::max_thresholds)
            throw argument_error(detail::concat("panel_options: ", o.abs_delta_thresholds.size(),
                                             " abs_delta_thresholds, at most ", panel_options::max_thresholds));
        num_thresholds = static_cast<std::uint32_t>(o.abs_delta_thresholds.size());
        for (std::uint32_t i = 0; i < num_thresholds; ++i) {
            const double t = o.abs_delta_thresholds[i];
            if (!(t >= 0) || !std::isfinite(t))
                throw argument_error(detail::concat("panel_options: abs_delta_thresholds[", i, "] = ", t,
                                                 ", must be finite and >= 0"));
            thresholds[i] = t;
        }
    }

    std::uint64_t sequences() const noexcept { return seq_log.n; }

    void merge(const panel_accumulator& o) {
        if (o.num_thresholds != num_thresholds ||
            !std::equal(thresholds.begin(), thresholds.begin() + num_thresholds, o.thresholds.begin()))
            throw argument_error("panel_accumulator::merge: the two accumulators use different abs_delta_thresholds");
        tokens += o.tokens;
        nonfinite_tokens += o.nonfinite_tokens;
        sum_train += o.sum_train;
        sum_rollout += o.sum_rollout;
        delta.merge(o.delta);
        ratio_m1.merge(o.ratio_m1);
        sum_abs_delta += o.sum_abs_delta;
        sum_k3 += o.sum_k3;
        sum_reverse += o.sum_reverse;
        sum_tv += o.sum_tv;
        // Ties go to the earlier token, so the location is split-independent.
        if (o.abs_max > abs_max ||
            (o.abs_max == abs_max && o.abs_max >= 0 &&
             (o.abs_max_at.sequence < abs_max_at.sequence ||
              (o.abs_max_at.sequence == abs_max_at.sequence && o.abs_max_at.position < abs_max_at.position)))) {
            abs_max = o.abs_max;
            abs_max_at = o.abs_max_at;
        }
        seq_log.merge(o.seq_log);
        seq_geo.merge(o.seq_geo);
        sum_train_ppl += o.sum_train_ppl;
        sum_rollout_ppl += o.sum_rollout_ppl;
        for (std::uint32_t i = 0; i < num_thresholds; ++i) above[i] += o.above[i];
    }

    /// SPEC's values from the sums (the formulas of the table above).
    panel finish() const {
        panel p;
        p.tokens = tokens;
        p.sequences = sequences();
        p.nonfinite_tokens = nonfinite_tokens;
        p.abs_delta_thresholds.assign(thresholds.begin(), thresholds.begin() + num_thresholds);
        p.frac_abs_delta_gt.assign(num_thresholds, panel::nan);
        if (tokens == 0) return p;
        const double n = static_cast<double>(tokens);
        const double s = static_cast<double>(sequences());
        p.delta_mean = delta.mean;
        p.delta_abs_mean = sum_abs_delta / n;
        p.delta_std = delta.stddev();
        p.delta_min = delta.min;
        p.delta_max = delta.max;
        p.delta_abs_max = abs_max;
        p.delta_abs_max_at = abs_max_at;
        p.ratio_mean = 1.0 + ratio_m1.mean;
        p.ratio_std = ratio_m1.stddev();
        p.ratio_min = 1.0 + ratio_m1.min;
        p.ratio_max = 1.0 + ratio_m1.max;
        p.kl_k1 = -delta.mean;
        // mean(delta^2) = var + mean^2 and mean(e (e + 2)) = 2 mean + mean^2 + var:
        // sums of non-negative parts, so no cancellation beyond that of mean(e).
        p.kl_k2 = 0.5 * (delta.variance() + delta.mean * delta.mean);
        p.kl_k3 = sum_k3 / n;
        p.kl_reverse = sum_reverse / n;
        p.chi2 = ratio_m1.mean * (2.0 + ratio_m1.mean) + ratio_m1.variance();
        p.tv = 0.5 * sum_tv / n;
        // sum rho = N (1 + mean e), sum rho^2 = N ((1 + mean e)^2 + var e)
        const double m1 = 1.0 + ratio_m1.mean;
        p.ess_fraction = m1 * m1 / (m1 * m1 + ratio_m1.variance());
        p.train_logprob_mean = sum_train / n;
        p.rollout_logprob_mean = sum_rollout / n;
        p.train_ppl = sum_train_ppl / s;
        p.rollout_ppl = sum_rollout_ppl / s;
        p.seq_log_ratio_mean = seq_log.mean;
        p.seq_log_ratio_std = seq_log.stddev();
        p.seq_log_ratio_min = seq_log.min;
        p.seq_log_ratio_max = seq_log.max;
        p.seq_geo_log_ratio_mean = seq_geo.mean;
        p.seq_geo_log_ratio_std = seq_geo.stddev();
        p.seq_geo_log_ratio_min = seq_geo.min;
        p.seq_geo_log_ratio_max = seq_geo.max;
        for (std::uint32_t i = 0; i < num_thresholds; ++i) p.frac_abs_delta_gt[i] = static_cast<double>(above[i]) / n;
        return p;
    }

    // ---- serialization: "LRPA", u16 version, then fixed little-endian fields
    // (the wire format: panel_wire.hpp).
    static constexpr std::uint16_t format_version = 1;
    template <class Self, class F>
    static void visit_fields(Self& a, F&& f);
    std::vector<std::uint8_t> serialize() const;
    static panel_accumulator deserialize(const void* data, std::size_t size);
    static panel_accumulator deserialize(const std::vector<std::uint8_t>& bytes) {
        return deserialize(bytes.data(), bytes.size());
    }

};

LOGRATIO_NAMESPACE_END

// The key spellings and the wire format, apart from the formulas above.
#include "panel_keys.hpp"
#include "panel_wire.hpp"
