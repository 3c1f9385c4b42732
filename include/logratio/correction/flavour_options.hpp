#pragma once
// Flavours: whose conventions the correction follows -- verl's (the default,
// correction_options' is / rejection / veto), slime's or TRL's -- and the
// slime and TRL modes by name, with their settings under the frameworks' own
// argument names:
//
//   slime (THUDM/slime 624b824a, slime/backends/megatron_utils/loss.py and
//   examples/train_infer_mismatch_helper/mis.py):
//     slime:tis                 vanilla_tis_function: w = clamp(rho, tis_clip_low, tis_clip)
//     slime:icepop              icepop_function: w = rho inside [tis_clip_low, tis_clip], else 0
//     slime:mis-<mode>-<level>  compute_mis_weights (custom TIS function of the MIS helper):
//                               mode truncate | clip | mask, level token | sequence | geometric,
//                               with use_rs / rs_level / rs bounds / rs_veto_threshold and
//                               tis_batch_normalize
//     (no mode)                 the mismatch metrics only (MIS helper with use_tis off)
//   TRL (huggingface/trl f2cd5771, trl/trainer/grpo_trainer.py, vllm_importance_sampling_mode):
//     trl:token_truncate | trl:token_mask | trl:sequence_truncate | trl:sequence_mask
//                               with clip_min / clip_max (vllm_importance_sampling_clip_{min,max})
//
// Loss denominators: with a flavour's weights w and mask m', normalise the
// policy loss as that framework does --
//   verl:  sum(loss * w * m') / sum(m')    (the modified mask m', rejections applied)
//   slime: per sample, sum(loss * w * m') / sum(m) with m the ORIGINAL loss mask
//          (loss.py 1080-1092: numerators use the modified mask, denominators
//          the per-rollout totals of the original masks), then the mean over samples
//          (or sum / sum of max(n, 1) with calculate_per_token_loss)
//   TRL:   the original completion_mask (TRL never changes it; rejected tokens
//          have w = 0)
#include <cmath>
#include <optional>
#include <string>

#include "../core/error.hpp"
#include "../core/framework.hpp"
#include "is_level.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// slime's kinds of correction.
enum class slime_kind { metrics_only, tis, icepop, mis };
/// The MIS helper's tis_mode.
enum class mis_bound { truncate, clip, mask };
/// TRL's vllm_importance_sampling_mode.
enum class trl_kind { token_truncate, token_mask, sequence_truncate, sequence_mask };

/// A slime or TRL mode and its settings (field names are the frameworks'
/// argument names; defaults are theirs).
struct framework_mode {
    framework fw = framework::slime;

    // ---- slime
    slime_kind slime = slime_kind::metrics_only;
    double tis_clip = 2.0;      ///< --tis-clip (tis, icepop)
    double tis_clip_low = 0.0;  ///< --tis-clip-low (tis, icepop); 0 is slime's default
    mis_bound tis_mode = mis_bound::truncate;
    is_level tis_level = is_level::token;
    double tis_upper_bound = 2.0;
    std::optional<double> tis_lower_bound;  ///< default 1 / tis_upper_bound
    bool use_rs = false;
    std::optional<is_level> rs_level;  ///< default tis_level
    std::optional<double> rs_lower_bound, rs_upper_bound;  ///< default the tis bounds
    std::optional<double> rs_veto_threshold;  ///< needs use_rs (as in mis.py)
    bool tis_batch_normalize = false;
    /// slime's calculate_per_token_loss: metrics are token means over the
    /// batch instead of means over samples of each sample's token mean.
    bool calculate_per_token_loss = false;

    // ---- TRL
    trl_kind trl = trl_kind::sequence_mask;
    std::optional<double> clip_min;           ///< vllm_importance_sampling_clip_min (default None)
    std::optional<double> clip_max = 3.0;     ///< vllm_importance_sampling_clip_max (default 3)

    double mis_lower() const noexcept { return tis_lower_bound ? *tis_lower_bound : 1.0 / tis_upper_bound; }
    double rs_lower() const noexcept { return rs_lower_bound ? *rs_lower_bound : mis_lower(); }
    double rs_upper() const noexcept { return rs_upper_bound ? *rs_upper_bound : tis_upper_bound; }
    is_level rs_at() const noexcept { return rs_level ? *rs_level : tis_level; }
    bool trl_sequence() const noexcept {
        return trl == trl_kind::sequence_truncate || trl == trl_kind::sequence_mask;
    }
    bool trl_masks() const noexcept { return trl == trl_kind::token_mask || trl == trl_kind::sequence_mask; }

    /// "slime:tis", "slime:mis-clip-sequence", "trl:token_mask", ...
    std::string name() const;
    void validate() const;
};

inline std::string framework_mode::name() const {
    if (fw == framework::trl) {
        static const char* k[] = {"token_truncate", "token_mask", "sequence_truncate", "sequence_mask"};
        return std::string("trl:") + k[static_cast<int>(trl)];
    }
    switch (slime) {
        case slime_kind::metrics_only: return "slime";
        case slime_kind::tis: return "slime:tis";
        case slime_kind::icepop: return "slime:icepop";
        case slime_kind::mis: break;
    }
    static const char* b[] = {"truncate", "clip", "mask"};
    return std::string("slime:mis-") + b[static_cast<int>(tis_mode)] + "-" + is_level_name(tis_level);
}

namespace detail {
inline void need(bool ok, const std::string& mode, const std::string& what) {
    if (!ok) throw argument_error(concat(mode, ": ", what));
}
inline bool positive_finite(double x) { return x > 0.0 && std::isfinite(x); }
}  // namespace detail

inline void framework_mode::validate() const {
    using detail::need;
    using detail::positive_finite;
    const std::string n = name();
    if (fw == framework::verl) throw argument_error("framework_mode: verl has no named modes (use is / rejection / veto)");
    if (fw == framework::trl) {
        need(clip_min || clip_max, n, "give clip_min, clip_max or both");
        if (clip_max) need(positive_finite(*clip_max), n, detail::concat("clip_max = ", *clip_max, " must be > 0"));
        if (clip_min) need(*clip_min >= 0.0 && std::isfinite(*clip_min), n,
                           detail::concat("clip_min = ", *clip_min, " must be >= 0"));
        if (clip_min && clip_max)
            need(*clip_min <= *clip_max, n, detail::concat("clip_min ", *clip_min, " is above clip_max ", *clip_max));
        return;
    }
    if (slime == slime_kind::tis || slime == slime_kind::icepop) {
        need(positive_finite(tis_clip), n, detail::concat("tis_clip = ", tis_clip, " must be > 0"));
        need(tis_clip_low >= 0.0 && tis_clip_low <= tis_clip, n,
             detail::concat("tis_clip_low = ", tis_clip_low, " must be in [0, tis_clip = ", tis_clip, "]"));
    }
    if (slime != slime_kind::mis) return;
    need(positive_finite(tis_upper_bound), n, detail::concat("tis_upper_bound = ", tis_upper_bound, " must be > 0"));
    if (tis_mode != mis_bound::truncate)
        need(positive_finite(mis_lower()) && mis_lower() < tis_upper_bound, n,
             detail::concat("tis_lower_bound = ", mis_lower(), " must be > 0 and below tis_upper_bound"));
    if (use_rs)
        need(positive_finite(rs_lower()) && rs_lower() < rs_upper() && std::isfinite(rs_upper()), n,
             detail::concat("rs bounds [", rs_lower(), ", ", rs_upper(), "] must satisfy 0 < lower < upper"));
    if (rs_veto_threshold) {
        need(use_rs, n, "rs_veto_threshold needs use_rs (mis.py applies the veto inside rejection sampling)");
        need(positive_finite(*rs_veto_threshold), n, "rs_veto_threshold must be > 0");
    }
    need(!(tis_batch_normalize && tis_level == is_level::geometric), n,
         "tis_batch_normalize at geometric level: mis.py has none (it raises)");
}

/// Parses a mode name: slime:tis, slime:icepop, slime:mis-{truncate,clip,mask}-{token,sequence,geometric},
/// trl:{token,sequence}_{truncate,mask}. Settings keep the frameworks' defaults.
inline framework_mode parse_mode(const std::string& s) {
    framework_mode m;
    const auto colon = s.find(':');
    const std::string fw = s.substr(0, colon), rest = colon == std::string::npos ? "" : s.substr(colon + 1);
    const std::string expected =
        "expected slime:tis, slime:icepop, slime:mis-{truncate,clip,mask}-{token,sequence,geometric}, "
        "trl:token_truncate, trl:token_mask, trl:sequence_truncate or trl:sequence_mask";
    if (fw == "trl") {
        m.fw = framework::trl;
        if (rest == "token_truncate") m.trl = trl_kind::token_truncate;
        else if (rest == "token_mask") m.trl = trl_kind::token_mask;
        else if (rest == "sequence_truncate") m.trl = trl_kind::sequence_truncate;
        else if (rest == "sequence_mask") m.trl = trl_kind::sequence_mask;
        else throw argument_error(detail::concat("unknown mode '", s, "' (", expected, ")"));
        return m;
    }
    if (fw != "slime") throw argument_error(detail::concat("unknown mode '", s, "' (", expected, ")"));
    m.fw = framework::slime;
    if (rest == "tis") m.slime = slime_kind::tis;
    else if (rest == "icepop") m.slime = slime_kind::icepop;
    else {
        const auto d1 = rest.find('-'), d2 = rest.find('-', d1 == std::string::npos ? d1 : d1 + 1);
        const std::string head = rest.substr(0, d1);
        const std::string b = d1 == std::string::npos ? "" : rest.substr(d1 + 1, d2 == std::string::npos ? d2 : d2 - d1 - 1);
        const std::string lv = d2 == std::string::npos ? "" : rest.substr(d2 + 1);
        if (head != "mis" || (b != "truncate" && b != "clip" && b != "mask") ||
            (lv != "token" && lv != "sequence" && lv != "geometric"))
            throw argument_error(detail::concat("unknown mode '", s, "' (", expected, ")"));
        m.slime = slime_kind::mis;
        m.tis_mode = b == "truncate" ? mis_bound::truncate : b == "clip" ? mis_bound::clip : mis_bound::mask;
        m.tis_level = parse_is_level(lv);
    }
    return m;
}

LOGRATIO_NAMESPACE_END
