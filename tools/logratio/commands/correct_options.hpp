#pragma once
// `logratio correct`'s options -- flags, their registration and the one
// mapping flags -> logratio::correction_options -- shared by the command
// (correct.cpp) and correction_options_from_args (correct_options.cpp), the
// tests' way to replay the CLI's arguments without compiling CLI11.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/correction/correction_options.hpp>
#include <logratio/correction/flavour_options.hpp>

#include "../flavour_args.hpp"
#include "inputs.hpp"
#include "threads_option.hpp"

namespace logratio_cli {

struct correct_args : input_args {
    logratio_cli::flavour_args fw;  ///< --mode and the slime / TRL settings (flavour_args.hpp)
    std::string is, rs, rs_threshold, out, prefix;
    std::string nonfinite = "raise";
    std::optional<double> is_threshold, is_lower, rs_lower, veto;
    bool batch_normalize = false, json = false;
    thread_count threads;  // --threads, or the usable CPUs
};

/// --flavour: the mode's framework when a mode is given.
inline std::string flavour_of(const correct_args& a) {
    if (!a.flavour.empty() || a.fw.mode.empty()) return a.flavour;
    return a.fw.mode.substr(0, a.fw.mode.find(':'));
}

inline logratio::correction_options correction_options_of(const correct_args& a) {
    logratio::correction_options o;
    if (!a.is.empty()) {
        logratio::is_options io;
        io.level = logratio::parse_is_level(a.is);
        if (a.is_threshold) io.upper = *a.is_threshold;
        io.lower = a.is_lower;
        io.batch_normalize = a.batch_normalize;
        o.is = io;
    } else if (a.is_threshold || a.is_lower || a.batch_normalize) {
        throw logratio::argument_error("--is-threshold, --is-lower and --batch-normalize need --is token|sequence|geometric");
    }
    if (!a.rs.empty()) {
        if (a.rs_threshold.empty()) throw logratio::argument_error("--rs needs --rs-threshold");
        o.rejection = logratio::parse_rejection(a.rs, a.rs_threshold, a.rs_lower);
    } else if (!a.rs_threshold.empty() || a.rs_lower) {
        throw logratio::argument_error("--rs-threshold and --rs-threshold-lower need --rs");
    }
    o.veto = a.veto;
    o.nonfinite = policy(a.nonfinite);
    logratio_cli::flavour_args fw = a.fw;
    fw.flavour = a.flavour;
    fw.apply(o);
    o.validate();
    return o;
}

/// `correct`'s --flavour, --mode and the slime / TRL settings, with the
/// frameworks' own argument names (README's table of modes).
inline void add_flavour_options(CLI::App* corr, correct_args& ca) {
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

/// Registers every option of `logratio correct` on c, bound to a.
inline void add_correct_options(CLI::App& c, correct_args& a) {
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
    c.add_option("--nonfinite", a.nonfinite,
                 "NaN/Inf log-probs: raise (default) or omit (masked out, counted as nonfinite_tokens)")
        ->check(CLI::IsMember({"raise", "omit"}));
    c.add_flag("--json", a.json, "one JSON object of the metrics (verl's names)");
    c.add_option("--prefix", a.prefix, "prefix of every metric name (verl logs them under rollout_corr/)");
    c.add_option("--out", a.out, "write the weights (F32) and the mask (U8) to this safetensors file, under the framework's names: "
                 "rollout_is_weights / response_mask (verl), importance_sampling_ratio / completion_mask (trl), "
                 "tis_weights, ice_weight or is_weights / modified_response_masks (slime)");
    add_threads_option(c, a.threads, "threads");
    add_flavour_options(&c, a);
}

}  // namespace logratio_cli
