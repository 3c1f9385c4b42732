#pragma once
// The input options shared by panel, quantiles and correct (one safetensors
// dump, or .npy files); their loading into validated tensors is
// io/dump_inputs.hpp.
#include <string>

#include <CLI/CLI.hpp>
#include <logratio/panel/panel_accumulator.hpp>

#include "../io/dump_inputs.hpp"

namespace logratio_cli {

inline void add_input_options(CLI::App* c, input_args& a) {
    c->add_option("file", a.file, "safetensors file with train_logprobs, rollout_logprobs and mask or cu_seqlens");
    c->add_option("--train", a.train, ".npy file of trainer log-probs");
    c->add_option("--rollout", a.rollout, ".npy file of rollout log-probs");
    c->add_option("--mask", a.mask, ".npy mask (padded [B, T], or packed 1-D with --offsets)");
    c->add_option("--offsets", a.offsets, ".npy cu_seqlens (int32/int64, S+1 entries): packed layout");
    c->add_option("--train-key", a.keys.train, "name of the trainer log-probs tensor in FILE (default: detected)");
    c->add_option("--rollout-key", a.keys.rollout, "name of the rollout log-probs tensor in FILE (default: detected)");
    c->add_option("--mask-key", a.keys.mask, "name of the mask tensor in FILE (default: detected)");
}

inline logratio::nonfinite_policy policy(const std::string& s) {
    return s == "omit" ? logratio::nonfinite_policy::omit : logratio::nonfinite_policy::raise;
}

}  // namespace logratio_cli
