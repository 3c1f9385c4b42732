// `logratio correct`: IS weights (TIS), rejection masks (MIS) and veto with
// verl's metrics, or slime's / TRL's modes (--mode), optionally written to
// a safetensors file.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <logratio/correction.hpp>
#include <logratio/version.hpp>

#include "../flavour_args.hpp"
#include "../kernels.hpp"
#include "../safetensors_writer.hpp"
#include "command.hpp"
#include "inputs.hpp"

namespace logratio_cli {
namespace {

struct correct_args : input_args {
    logratio_cli::flavour_args fw;  ///< --mode and the slime / TRL settings (flavour_args.hpp)
    std::string is, rs, rs_threshold, out, prefix;
    std::optional<double> is_threshold, is_lower, rs_lower, veto;
    bool batch_normalize = false, json = false;
    unsigned threads = 1;
};

/// --flavour: the mode's framework when a mode is given.
std::string flavour_of(const correct_args& a) {
    if (!a.flavour.empty() || a.fw.mode.empty()) return a.flavour;
    return a.fw.mode.substr(0, a.fw.mode.find(':'));
}

logratio::correction_options correction_options_of(const correct_args& a) {
    logratio::correction_options o;
    if (!a.is.empty()) {
        logratio::is_options io;
        io.level = logratio::parse_is_level(a.is);
        if (a.is_threshold) io.upper = *a.is_threshold;
        io.lower = a.is_lower;
        io.batch_normalize = a.batch_normalize;
        o.is = io;
    } else if (a.is_threshold || a.is_lower || a.batch_normalize) {
        throw logratio::error("--is-threshold, --is-lower and --batch-normalize need --is token|sequence|geometric");
    }
    if (!a.rs.empty()) {
        if (a.rs_threshold.empty()) throw logratio::error("--rs needs --rs-threshold");
        o.rejection = logratio::parse_rejection(a.rs, a.rs_threshold, a.rs_lower);
    } else if (!a.rs_threshold.empty() || a.rs_lower) {
        throw logratio::error("--rs-threshold and --rs-threshold-lower need --rs");
    }
    o.veto = a.veto;
    logratio_cli::flavour_args fw = a.fw;
    fw.flavour = a.flavour;
    fw.apply(o);
    o.validate();
    return o;
}

int run_correct(correct_args a) {
    a.flavour = flavour_of(a);
    const logratio::correction_options o = correction_options_of(a);
    loaded_inputs L;
    load_inputs(a, L);
    logratio::correction_result r;
    std::vector<float> weights;
    std::vector<std::uint8_t> mask;
    // slime / TRL modes always have weights; slime without a mode reports metrics only.
    const bool has_weights = o.is || (o.mode && o.mode->slime != logratio::slime_kind::metrics_only);
    logratio_cli::with_panel_view(L.in, [&](const auto& view) {
        if (has_weights) weights.resize(view.size());
        mask.resize(view.size());
        r = logratio_cli::kernels::correct(view, o, has_weights ? weights.data() : nullptr, mask.data(), a.threads);
    });
    if (!a.out.empty()) {
        const auto& shape = L.in.train->shape;
        std::vector<logratio_cli::output_tensor> t;
        if (has_weights) t.push_back({"rollout_is_weights", logratio_cli::dtype::f32, shape, weights.data(), 4 * weights.size()});
        t.push_back({"response_mask", logratio_cli::dtype::u8, shape, mask.data(), mask.size()});
        logratio_cli::write_safetensors(a.out, t, {{"producer", std::string("logratio ") + LOGRATIO_VERSION_STRING}});
    }
    const auto entries = logratio::correction_entries(r, a.prefix);
    if (a.json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::object();
        for (const auto& e : entries) j[e.first] = e.second;
        std::cout << j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return 0;
    }
    std::printf("correction of %llu tokens in %llu sequences\n", static_cast<unsigned long long>(r.tokens),
                static_cast<unsigned long long>(r.sequences));
    std::printf("%-50s %s\n", "metric", "value");
    for (const auto& e : entries) std::printf("%-50s % .10g\n", e.first.c_str(), e.second);
    if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
    return 0;
}

/// `correct`'s --flavour, --mode and the slime / TRL settings, with the
/// frameworks' own argument names (README's table of modes).
void add_flavour_options(CLI::App* corr, correct_args& ca) {
    corr->add_option("--flavour", ca.flavour, "verl (default), slime or trl: tensor names, metric names and aggregation")
        ->check(CLI::IsMember({"verl", "slime", "trl"}));
    corr->add_option("--mode", ca.fw.mode,
                     "slime:tis, slime:icepop, slime:mis-{truncate,clip,mask}-{token,sequence,geometric}, "
                     "trl:{token,sequence}_{truncate,mask}");
    corr->add_option("--tis-clip", ca.fw.tis_clip, "slime tis/icepop: upper clip (slime's --tis-clip, default 2)");
    corr->add_option("--tis-clip-low", ca.fw.tis_clip_low, "slime tis/icepop: lower clip (default 0)");
    corr->add_option("--tis-upper-bound", ca.fw.tis_upper_bound, "slime mis: tis_upper_bound (default 2)");
    corr->add_option("--tis-lower-bound", ca.fw.tis_lower_bound, "slime mis: tis_lower_bound (default 1/upper)");
    corr->add_flag("--use-rs", ca.fw.use_rs, "slime mis: use_rs (rejection band, optional veto)");
    corr->add_option("--rs-level", ca.fw.rs_level, "slime mis: rs_level token|sequence|geometric (default tis level)");
    corr->add_option("--rs-lower-bound", ca.fw.rs_lower_bound, "slime mis: rs_lower_bound (default the tis lower)");
    corr->add_option("--rs-upper-bound", ca.fw.rs_upper_bound, "slime mis: rs_upper_bound (default the tis upper)");
    corr->add_option("--rs-veto-threshold", ca.fw.rs_veto_threshold, "slime mis: rs_veto_threshold (needs --use-rs)");
    corr->add_flag("--tis-batch-normalize", ca.fw.tis_batch_normalize, "slime mis: tis_batch_normalize");
    corr->add_flag("--calculate-per-token-loss", ca.fw.calculate_per_token_loss,
                   "slime: metrics as token means over the batch (calculate_per_token_loss)");
    corr->add_option("--clip-min", ca.fw.clip_min, "trl: vllm_importance_sampling_clip_min (default none)");
    corr->add_option("--clip-max", ca.fw.clip_max, "trl: vllm_importance_sampling_clip_max (default 3)");
}

}  // namespace

command_runner setup_correct(CLI::App& c) {
    auto args = std::make_shared<correct_args>();
    correct_args& a = *args;
    add_input_options(&c, a);
    c.add_option("--is", a.is, "IS weight level: token, sequence or geometric")
        ->check(CLI::IsMember({"token", "sequence", "geometric"}));
    c.add_option("--is-threshold", a.is_threshold, "upper truncation C of the IS weights (default 2)");
    c.add_option("--is-lower", a.is_lower, "lower truncation c_low of the IS weights (two-sided clip)");
    c.add_flag("--batch-normalize", a.batch_normalize, "normalise the weights to mean 1 over the batch");
    c.add_option("--rs", a.rs, "rejection options, comma-separated, as verl's rollout_rs (e.g. token_k1,seq_max_k2)");
    c.add_option("--rs-threshold", a.rs_threshold,
        "thresholds as verl's rollout_rs_threshold: one, or one per option (k1: lower_upper or u)");
    c.add_option("--rs-threshold-lower", a.rs_lower, "lower ratio bound of the aliases token/sequence/geometric");
    c.add_option("--veto", a.veto, "reject a sequence if any token has rho below this");
    c.add_flag("--json", a.json, "one JSON object of the metrics (verl's names)");
    c.add_option("--prefix", a.prefix, "prefix of every metric name (verl logs them under rollout_corr/)");
    c.add_option("--out", a.out, "write rollout_is_weights (F32) and response_mask (U8) to this safetensors file");
    c.add_option("--threads", a.threads, "threads")->check(CLI::Range(1u, 1024u));
    add_flavour_options(&c, a);
    return [args] { return run_correct(*args); };
}

}  // namespace logratio_cli
