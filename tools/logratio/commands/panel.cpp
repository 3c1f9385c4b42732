// `logratio panel`: the ratio panel of one dump (table or SPEC's JSON keys),
// the numeric-vs-lag split with --old, a framework's mismatch metrics with
// --flavour, constant memory with --stream, every dump of a folder with --each.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/correction/flavour.hpp>
#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel_accumulator.hpp>

#include "../io/dumps.hpp"
#include "../io/stream_panel.hpp"
#include "../kernels.hpp"
#include "../output/atomic_file.hpp"
#include "../output/command_json.hpp"
#include "../output/panel_table.hpp"
#include "command.hpp"
#include "inputs.hpp"
#include "threads_option.hpp"

namespace logratio_cli {
namespace {

struct panel_args : input_args {
    std::string old;  ///< tensor (or .npy) of l_T under the rollout's weights
    bool json = false;
    bool no_quantiles = false;
    thread_count threads;  // --threads, or the usable CPUs
    std::vector<double> thresholds{1e-3, 0.01, 0.1, 1.0};
    std::string nonfinite = "raise";
    std::string each, csv, pattern;  ///< --each DIR: every dump's panel as a CSV table
    bool stream = false;             ///< constant memory (automatic above half of the RAM)
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

/// The old_logprobs tensor: --old names a tensor of the safetensors file
/// (or a .npy file with --train/--rollout); without --old a tensor named
/// old_logprobs is used when present.
const logratio_cli::tensor* find_old(const panel_args& a, loaded_inputs& L) {
    if (a.old.empty()) return L.st ? L.st->find("old_logprobs") : nullptr;
    if (L.st) {
        const auto* t = L.st->find(a.old);
        if (!t) throw logratio::shape_error(a.file + ": --old: no tensor '" + a.old + "'");
        return t;
    }
    return load_npy(L, a.old, "old_logprobs");
}

/// `logratio panel --each DIR --csv OUT`: the long table of every dump's panel.
int run_panel_each(const std::string& dir, const std::string& csv, const std::string& pattern,
                   const logratio::panel_options& opt, unsigned threads) {
    const auto ds = panels_of_directory(dir, pattern, opt, threads);
    const std::string text = panel_table_csv(ds);
    if (csv.empty() || csv == "-") std::cout << text;
    else {
        write_atomically(csv, text);
        std::fprintf(stderr, "wrote %zu panels to %s\n", ds.size(), csv.c_str());
    }
    return 0;
}

int run_panel(const panel_args& a) {
    logratio::panel_options opt;
    opt.abs_delta_thresholds = a.thresholds;
    opt.nonfinite = policy(a.nonfinite);
    if (!a.each.empty()) {
        if (!a.file.empty() || !a.train.empty()) throw logratio::shape_error("--each DIR replaces the input file");
        return run_panel_each(a.each, a.csv, a.pattern, opt, a.threads);
    }
    if (!a.csv.empty() || !a.pattern.empty()) throw logratio::shape_error("--csv and --pattern need --each DIR");
    loaded_inputs L;
    load_inputs(a, L);
    double bytes = 0;
    for (const auto& f : L.files) bytes += static_cast<double>(f->size());
    if (a.stream || bytes > logratio_cli::physical_memory_bytes() / 2) {
        if (!a.old.empty()) throw logratio::shape_error("--old is not available in streaming mode");
        if (a.flavour == "slime" || a.flavour == "trl")
            throw logratio::shape_error("--flavour " + a.flavour + ": its metrics are not available in streaming mode");
        const auto r = logratio_cli::stream_panel(L.in, opt);
        if (a.json) std::cout << panel_json_text(r.panel) << "\n";
        else print_table(r.panel);
        std::fprintf(stderr,
                     "logratio: streamed %.3g GB in chunks of whole sequences: quantile keys from KLL sketches "
                     "(normalized rank error <= %.2g, 99%%), every other key exact; peak RSS %.0f MiB\n",
                     bytes / 1e9, r.rank_error, logratio_cli::peak_rss_mib());
        return 0;
    }
    const logratio_cli::tensor* old = find_old(a, L);
    if (old) {
        if (old->type != L.in.train->type)
            throw logratio::shape_error(std::string("dtype mismatch: old_logprobs is ") +
                                        logratio_cli::dtype_label(old->type) + ", train_logprobs is " +
                                        logratio_cli::dtype_label(L.in.train->type));
        if (old->shape != L.in.train->shape)
            throw logratio::shape_error("shape mismatch: old_logprobs is " + old->shape_string() +
                                        ", train_logprobs is " + L.in.train->shape_string());
    }
    logratio::panel result;
    std::optional<logratio::mismatch_split> split;
    opt.flavour = a.flavour.empty() ? logratio::framework::verl : logratio::parse_framework(a.flavour);
    logratio::metric_entries framework_metrics;  // --flavour slime|trl: that framework's mismatch metrics
    logratio_cli::with_panel_view(L.in, [&](const auto& view) {
        result = a.no_quantiles ? logratio_cli::kernels::compute_panel(view, opt, a.threads)
                                : logratio_cli::kernels::compute_panel_with_quantiles(view, opt, a.threads);  // one pass
        framework_metrics = logratio::framework_mismatch_entries(view, opt.flavour);
        if (old) {
            using T = typename std::decay_t<decltype(view)>::value_type;
            std::vector<std::unique_ptr<unsigned char[]>> keep;
            split = logratio_cli::kernels::compute_mismatch_split(view, logratio_cli::input_detail::typed<T>(*old, keep), opt,
                                                          a.threads);
        }
    });
    if (a.json) {
        std::cout << panel_json_text(result, split ? &*split : nullptr, framework_metrics, a.flavour) << "\n";
        return 0;
    }
    print_table(result);
    if (!framework_metrics.empty()) {
        std::printf("\n%s's mismatch metrics\n", a.flavour.c_str());
        for (const auto& e : framework_metrics) std::printf("%-44s % .10g\n", e.first.c_str(), e.second);
    }
    if (split) {
        std::printf("\nnumeric mismatch vs policy lag (%llu tokens)\n", static_cast<unsigned long long>(split->tokens));
        std::printf("%-34s %14s %14s %14s %14s\n", "part", "delta_mean", "delta_abs_mean", "delta_std", "kl_k3");
        auto row = [](const char* name, const logratio::mismatch_part& p) {
            std::printf("%-34s % 14.6e % 14.6e % 14.6e % 14.6e\n", name, p.delta_mean, p.delta_abs_mean, p.delta_std,
                        p.kl_k3);
        };
        row("total   l_T(new) - l_E(old)", split->total);
        row("numeric l_T(old) - l_E(old)", split->numeric);
        row("lag     l_T(new) - l_T(old)", split->lag);
    }
    return 0;
}

}  // namespace

command_runner setup_panel(CLI::App& c) {
    auto args = std::make_shared<panel_args>();
    panel_args& a = *args;
    add_input_options(&c, a);
    c.add_flag("--json", a.json, "one JSON object with exactly SPEC's keys");
    c.add_flag("--no-quantiles", a.no_quantiles, "skip the exact-quantile pass (delta_q*, abs_delta_q*)");
    add_threads_option(c, a.threads, "threads for the one-pass panel");
    c.add_option("--thresholds", a.thresholds, "|delta| thresholds of frac_abs_delta_gt_* (at most 8)")
        ->delimiter(',');
    c.add_option("--nonfinite", a.nonfinite, "NaN/Inf log-probs: raise (default) or omit")
        ->check(CLI::IsMember({"raise", "omit"}));

    c.add_option("--flavour", a.flavour,
        "verl, slime or trl: read that framework's tensor names; slime / trl: add its mismatch metrics")
        ->check(CLI::IsMember({"verl", "slime", "trl"}));
    c.add_option("--old", a.old,
        "tensor (or .npy with --train) of the trainer's log-probs under the rollout's weights: "
        "split the mismatch into numeric and policy lag (default: a tensor named old_logprobs)");
    c.add_flag("--stream", a.stream,
        "constant memory for inputs of any size: chunks of sequences, quantiles from sketches "
        "(automatic above half of the RAM)");
    c.add_option("--each", a.each, "a directory of dumps: every file's panel, as a long CSV table");
    c.add_option("--csv", a.csv, "with --each: write the table here (atomically; default stdout)");
    c.add_option("--pattern", a.pattern,
        "with --each: path pattern such as '{group}/{run}/update_{update}.safetensors' "
        "(default: __metadata__ run/group/update)");
    return [args] { return run_panel(*args); };
}

}  // namespace logratio_cli
