// logratio: command-line tool over dumps of paired log-probs.
//
//   logratio panel FILE.safetensors [--json] [--threads N] [--no-quantiles]
//   logratio panel --train a.npy --rollout b.npy (--mask m.npy | --offsets o.npy) [--json]
//   logratio info
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <logratio/logratio.hpp>

#include "mapped_file.hpp"
#include "npy.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"

namespace {

using logratio_cli::mapped_file;

struct panel_args {
    std::string file, train, rollout, mask, offsets;
    bool json = false;
    bool no_quantiles = false;
    unsigned threads = 1;
    std::vector<double> thresholds{1e-3, 0.01, 0.1, 1.0};
    std::string nonfinite = "raise";
};

void print_table(const logratio::panel& p) {
    std::printf("%-26s %s\n", "metric", "value");
    for (const auto& e : logratio::panel_entries(p)) {
        if (e.second) std::printf("%-26s % .10g\n", e.first.c_str(), *e.second);
        else std::printf("%-26s %s\n", e.first.c_str(), "-");
    }
    if (p.tokens)
        std::printf("%-26s sequence %llu, position %llu\n", "delta_abs_max_at",
                    static_cast<unsigned long long>(p.delta_abs_max_at.sequence),
                    static_cast<unsigned long long>(p.delta_abs_max_at.position));
    if (p.nonfinite_tokens)
        std::printf("%-26s %llu\n", "nonfinite_tokens", static_cast<unsigned long long>(p.nonfinite_tokens));
}

void print_json(const logratio::panel& p) {
    nlohmann::ordered_json j;
    for (const auto& e : logratio::panel_entries(p)) {
        if (e.first == "tokens") j[e.first] = p.tokens;
        else if (e.first == "sequences") j[e.first] = p.sequences;
        else if (e.second) j[e.first] = *e.second;
        else j[e.first] = nullptr;
    }
    std::cout << j.dump(1) << "\n";
}

int run_panel(const panel_args& a) {
    logratio::panel_options opt;
    opt.abs_delta_thresholds = a.thresholds;
    opt.nonfinite = a.nonfinite == "omit" ? logratio::nonfinite_policy::omit : logratio::nonfinite_policy::raise;

    std::vector<std::unique_ptr<mapped_file>> files;
    std::optional<logratio_cli::safetensors_file> st;
    std::vector<logratio_cli::tensor> npys;
    npys.reserve(4);
    logratio_cli::panel_tensors in;
    if (!a.file.empty()) {
        if (!a.train.empty() || !a.rollout.empty() || !a.mask.empty() || !a.offsets.empty())
            throw logratio::shape_error("give either FILE.safetensors or --train/--rollout .npy files, not both");
        files.push_back(std::make_unique<mapped_file>(a.file));
        st = logratio_cli::parse_safetensors(*files.back());
        in.train = st->find("train_logprobs");
        in.rollout = st->find("rollout_logprobs");
        in.mask = st->find("mask");
        in.offsets = st->find("cu_seqlens");
        if (!in.train) throw logratio::shape_error(a.file + ": missing tensor 'train_logprobs'");
        if (!in.rollout) throw logratio::shape_error(a.file + ": missing tensor 'rollout_logprobs'");
    } else {
        if (a.train.empty() || a.rollout.empty())
            throw logratio::shape_error("need FILE.safetensors, or --train and --rollout .npy files");
        auto load = [&](const std::string& path, const char* name) {
            files.push_back(std::make_unique<mapped_file>(path));
            npys.push_back(logratio_cli::parse_npy(*files.back(), name));
            return &npys.back();
        };
        in.train = load(a.train, "train_logprobs");
        in.rollout = load(a.rollout, "rollout_logprobs");
        if (!a.mask.empty()) in.mask = load(a.mask, "mask");
        if (!a.offsets.empty()) in.offsets = load(a.offsets, "cu_seqlens");
    }
    logratio::panel result;
    logratio_cli::with_panel_view(in, [&](const auto& view) {
        result = logratio::compute_panel(view, opt, a.threads);
        if (!a.no_quantiles) logratio::add_panel_quantiles(result, view, opt.nonfinite);
    });
    if (a.json) print_json(result);
    else print_table(result);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"logratio: train-inference mismatch statistics over paired log-prob dumps"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LOGRATIO_VERSION_STRING);

    panel_args pa;
    auto* panel = app.add_subcommand("panel", "print the ratio panel (SPEC.md keys) of one dump");
    panel->add_option("file", pa.file, "safetensors file with train_logprobs, rollout_logprobs and mask or cu_seqlens");
    panel->add_option("--train", pa.train, ".npy file of trainer log-probs");
    panel->add_option("--rollout", pa.rollout, ".npy file of rollout log-probs");
    panel->add_option("--mask", pa.mask, ".npy mask (padded [B, T], or packed 1-D with --offsets)");
    panel->add_option("--offsets", pa.offsets, ".npy cu_seqlens (int32/int64, S+1 entries): packed layout");
    panel->add_flag("--json", pa.json, "one JSON object with exactly SPEC's keys");
    panel->add_flag("--no-quantiles", pa.no_quantiles, "skip the exact-quantile pass (delta_q*, abs_delta_q*)");
    panel->add_option("--threads", pa.threads, "threads for the one-pass panel")->check(CLI::Range(1u, 1024u));
    panel->add_option("--thresholds", pa.thresholds, "|delta| thresholds of frac_abs_delta_gt_* (at most 8)")
        ->delimiter(',');
    panel->add_option("--nonfinite", pa.nonfinite, "NaN/Inf log-probs: raise (default) or omit")
        ->check(CLI::IsMember({"raise", "omit"}));

    auto* info = app.add_subcommand("info", "print the version and the SIMD architecture of this binary");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        if (*panel) return run_panel(pa);
        if (*info) {
            std::printf("logratio %s\nsimd %s\n", LOGRATIO_VERSION_STRING, xsimd::default_arch::name());
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "logratio: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
