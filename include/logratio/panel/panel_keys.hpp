#pragma once
// The panel's SPEC key spellings: panel_entries() gives the finished panel
// as (key, value) pairs in SPEC's order -- what every JSON, CSV and Python
// dict of a panel is written from.
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "panel_accumulator.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Formats a threshold or probability as SPEC spells it in a key (%g).
inline std::string format_g(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

/// The panel as (SPEC key, value) pairs in SPEC's order; absent values
/// (N = 0) are std::nullopt. The one place where key spellings live.
inline std::vector<std::pair<std::string, std::optional<double>>> panel_entries(const panel& p) {
    std::vector<std::pair<std::string, std::optional<double>>> out;
    auto put = [&](std::string key, double v) {
        out.emplace_back(std::move(key), p.tokens == 0 ? std::nullopt : std::optional<double>(v));
    };
    out.emplace_back("tokens", static_cast<double>(p.tokens));
    out.emplace_back("sequences", static_cast<double>(p.sequences));
    put("delta_mean", p.delta_mean);
    put("delta_abs_mean", p.delta_abs_mean);
    put("delta_std", p.delta_std);
    put("delta_min", p.delta_min);
    put("delta_max", p.delta_max);
    put("delta_abs_max", p.delta_abs_max);
    put("ratio_mean", p.ratio_mean);
    put("ratio_std", p.ratio_std);
    put("ratio_min", p.ratio_min);
    put("ratio_max", p.ratio_max);
    put("kl_k1", p.kl_k1);
    put("kl_k2", p.kl_k2);
    put("kl_k3", p.kl_k3);
    put("kl_reverse", p.kl_reverse);
    put("chi2", p.chi2);
    put("tv", p.tv);
    put("ess_fraction", p.ess_fraction);
    put("train_logprob_mean", p.train_logprob_mean);
    put("rollout_logprob_mean", p.rollout_logprob_mean);
    put("train_ppl", p.train_ppl);
    put("rollout_ppl", p.rollout_ppl);
    put("seq_log_ratio_mean", p.seq_log_ratio_mean);
    put("seq_log_ratio_std", p.seq_log_ratio_std);
    put("seq_log_ratio_min", p.seq_log_ratio_min);
    put("seq_log_ratio_max", p.seq_log_ratio_max);
    put("seq_geo_log_ratio_mean", p.seq_geo_log_ratio_mean);
    put("seq_geo_log_ratio_std", p.seq_geo_log_ratio_std);
    put("seq_geo_log_ratio_min", p.seq_geo_log_ratio_min);
    put("seq_geo_log_ratio_max", p.seq_geo_log_ratio_max);
    for (std::size_t i = 0; i < p.abs_delta_thresholds.size(); ++i)
        put("frac_abs_delta_gt_" + format_g(p.abs_delta_thresholds[i]), p.frac_abs_delta_gt[i]);
    for (const auto& q : p.delta_quantiles) put("delta_q" + format_g(q.first), q.second);
    for (const auto& q : p.abs_delta_quantiles) put("abs_delta_q" + format_g(q.first), q.second);
    return out;
}

LOGRATIO_NAMESPACE_END
