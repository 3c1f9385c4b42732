#include "flavour_args.hpp"

#include <string>

#include <logratio/core/error.hpp>

namespace logratio_cli {

void flavour_args::apply(logratio::correction_options& o) const {
    using logratio::error;
    if (mode.empty()) {
        if (any_mode_setting()) throw error("the slime / TRL settings (--tis-clip, --clip-max, ...) need --mode");
        o.flavour = flavour.empty() ? logratio::framework::verl : logratio::parse_framework(flavour);
        if (calculate_per_token_loss) {
            if (o.flavour != logratio::framework::slime) throw error("--calculate-per-token-loss is slime's");
            logratio::framework_mode m;
            m.calculate_per_token_loss = true;
            o.mode = m;
        }
        return;
    }
    logratio::framework_mode m = logratio::parse_mode(mode);
    o.flavour = m.fw;
    if (!flavour.empty() && logratio::parse_framework(flavour) != m.fw)
        throw error("--flavour " + flavour + " does not match --mode " + mode);
    auto only = [&](bool given, bool allowed, const char* flag) {
        if (given && !allowed) throw error(std::string(flag) + " does not apply to --mode " + mode);
    };
    const bool slime = m.fw == logratio::framework::slime;
    const bool tis = slime && m.slime != logratio::slime_kind::mis, mis = slime && !tis;
    only(tis_clip.has_value(), tis, "--tis-clip");
    only(tis_clip_low.has_value(), tis, "--tis-clip-low");
    only(tis_upper_bound || tis_lower_bound || use_rs || tis_batch_normalize, mis,
         "--tis-upper-bound / --tis-lower-bound / --use-rs / --tis-batch-normalize");
    only(rs_lower_bound || rs_upper_bound || rs_veto_threshold || !rs_level.empty(), mis && use_rs,
         "--rs-level / --rs-lower-bound / --rs-upper-bound / --rs-veto-threshold (they need --use-rs)");
    only(calculate_per_token_loss, slime, "--calculate-per-token-loss");
    only(clip_min || clip_max, !slime, "--clip-min / --clip-max");
    if (tis_clip) m.tis_clip = *tis_clip;
    if (tis_clip_low) m.tis_clip_low = *tis_clip_low;
    if (tis_upper_bound) m.tis_upper_bound = *tis_upper_bound;
    m.tis_lower_bound = tis_lower_bound;
    m.use_rs = use_rs;
    if (!rs_level.empty()) m.rs_level = logratio::parse_is_level(rs_level);
    m.rs_lower_bound = rs_lower_bound;
    m.rs_upper_bound = rs_upper_bound;
    m.rs_veto_threshold = rs_veto_threshold;
    m.tis_batch_normalize = tis_batch_normalize;
    m.calculate_per_token_loss = calculate_per_token_loss;
    if (clip_min) m.clip_min = clip_min;
    if (clip_max) m.clip_max = clip_max;
    o.mode = m;
}

logratio::correction_options flavour_options_from(const std::vector<std::string>& a) {
    flavour_args f;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string& k = a[i];
        auto next = [&]() -> const std::string& {
            if (i + 1 >= a.size()) throw logratio::error(k + " needs a value");
            return a[++i];
        };
        auto num = [&] { return std::stod(next()); };
        if (k == "--flavour") f.flavour = next();
        else if (k == "--mode") f.mode = next();
        else if (k == "--tis-clip") f.tis_clip = num();
        else if (k == "--tis-clip-low") f.tis_clip_low = num();
        else if (k == "--tis-upper-bound") f.tis_upper_bound = num();
        else if (k == "--tis-lower-bound") f.tis_lower_bound = num();
        else if (k == "--use-rs") f.use_rs = true;
        else if (k == "--rs-level") f.rs_level = next();
        else if (k == "--rs-lower-bound") f.rs_lower_bound = num();
        else if (k == "--rs-upper-bound") f.rs_upper_bound = num();
        else if (k == "--rs-veto-threshold") f.rs_veto_threshold = num();
        else if (k == "--tis-batch-normalize") f.tis_batch_normalize = true;
        else if (k == "--calculate-per-token-loss") f.calculate_per_token_loss = true;
        else if (k == "--clip-min") f.clip_min = num();
        else if (k == "--clip-max") f.clip_max = num();
        else throw logratio::error("unknown argument " + k);
    }
    logratio::correction_options o;
    f.apply(o);
    o.validate();
    return o;
}

}  // namespace logratio_cli
