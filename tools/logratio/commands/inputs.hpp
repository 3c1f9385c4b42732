#pragma once
// The input options shared by panel, quantiles and correct (one safetensors
// dump, or .npy files) and their loading into validated tensors.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/core/error.hpp>
#include <logratio/panel/panel_accumulator.hpp>

#include "../mapped_file.hpp"
#include "../npy.hpp"
#include "../panel_input.hpp"
#include "../safetensors.hpp"
#include "../tensor_names.hpp"

namespace logratio_cli {

struct input_args {
    std::string file, train, rollout, mask, offsets;
    std::string flavour;  ///< whose tensor names (and metrics): verl | slime | trl, or "" to detect
    tensor_keys keys;     ///< --train-key, --rollout-key, --mask-key: the file's own tensor names
};

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

/// The mapped files and tensors of one dump, from a safetensors file or .npy flags.
struct loaded_inputs {
    std::vector<std::unique_ptr<mapped_file>> files;
    std::optional<logratio_cli::safetensors_file> st;
    std::vector<logratio_cli::tensor> npys;
    logratio_cli::panel_tensors in;
};

inline void load_inputs(const input_args& a, loaded_inputs& L) {
    L.npys.reserve(4);
    if (!a.file.empty()) {
        if (!a.train.empty() || !a.rollout.empty() || !a.mask.empty() || !a.offsets.empty())
            throw logratio::shape_error("give either FILE.safetensors or --train/--rollout .npy files, not both");
        L.files.push_back(std::make_unique<mapped_file>(a.file));
        L.st = logratio_cli::parse_safetensors(*L.files.back());
        std::string how;
        logratio_cli::tensor_names names;
        L.in = logratio_cli::dump_tensors(*L.st, a.file, a.flavour, &names, &how, a.keys);
        if (!how.empty())
            std::fprintf(stderr, "logratio: %s's tensor names (%s): %s, %s, %s\n", names.label.c_str(), how.c_str(),
                         L.in.train->name.c_str(), L.in.rollout->name.c_str(),
                         L.in.mask ? L.in.mask->name.c_str() : "cu_seqlens");
        return;
    }
    if (a.train.empty() || a.rollout.empty())
        throw logratio::shape_error("need FILE.safetensors, or --train and --rollout .npy files");
    auto load = [&](const std::string& path, const char* name) {
        L.files.push_back(std::make_unique<mapped_file>(path));
        L.npys.push_back(logratio_cli::parse_npy(*L.files.back(), name));
        return &L.npys.back();
    };
    L.in.train = load(a.train, "train_logprobs");
    L.in.rollout = load(a.rollout, "rollout_logprobs");
    if (!a.mask.empty()) L.in.mask = load(a.mask, "mask");
    if (!a.offsets.empty()) L.in.offsets = load(a.offsets, "cu_seqlens");
}

inline logratio::nonfinite_policy policy(const std::string& s) {
    return s == "omit" ? logratio::nonfinite_policy::omit : logratio::nonfinite_policy::raise;
}

}  // namespace logratio_cli
