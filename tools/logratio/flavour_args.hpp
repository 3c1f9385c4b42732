#pragma once
// The slime / TRL mode flags of `logratio correct` (each framework's own
// argument names, dashed) and their mapping onto correction_options
// (flavour_args.cpp). Shared by commands/correct_options.hpp (CLI11 binds
// the fields), the Python module and the tests (which read the committed
// args.json lists).
#include <optional>
#include <string>
#include <vector>

#include <logratio/correction/correction_options.hpp>

namespace logratio_cli {

struct flavour_args {
    std::string flavour;  ///< verl | slime | trl (default: the mode's, else verl)
    std::string mode;     ///< slime:tis, slime:icepop, slime:mis-<bound>-<level>, trl:<mode>
    // slime
    std::optional<double> tis_clip, tis_clip_low;
    std::optional<double> tis_upper_bound, tis_lower_bound, rs_lower_bound, rs_upper_bound, rs_veto_threshold;
    std::string rs_level;
    bool use_rs = false, tis_batch_normalize = false, calculate_per_token_loss = false;
    // TRL
    std::optional<double> clip_min, clip_max;

    bool any_mode_setting() const {
        return tis_clip || tis_clip_low || tis_upper_bound || tis_lower_bound || rs_lower_bound || rs_upper_bound ||
               rs_veto_threshold || !rs_level.empty() || use_rs || tis_batch_normalize || clip_min || clip_max;
    }

    /// Sets o.flavour and o.mode; throws logratio::error on settings that
    /// do not belong to the mode.
    void apply(logratio::correction_options& o) const;
};

/// The same from an argument list (tests: the args.json lists).
logratio::correction_options flavour_options_from(const std::vector<std::string>& a);

}  // namespace logratio_cli
