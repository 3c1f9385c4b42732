// `logratio doctor`: what is wrong with a dump's log-probs, with evidence
// (include/logratio/doctor/). Exit code 0 when no check fails, 3 when one
// does (a pipeline can gate on it), 1 on an input error.
//
//   logratio doctor FILE.safetensors [--json] [--old NAME] [--threads N]
//   logratio doctor --train a.npy --rollout b.npy (--mask m.npy | --offsets o.npy) [--old o.npy]
//   logratio doctor --each DIR [--pattern P] [--json]
//
// JSON: {"findings": [{"check", "severity", "summary", "evidence": {...}}],
// "breakdowns": {...}}; with --each: {"dumps": [{"path", "run", "update",
// "findings"}], "summary": [{"check", "warn", "fail", "touches"}]}.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/core/error.hpp>

#include "../io/dump_inputs.hpp"
#include "../output/command_json.hpp"
#include "command.hpp"
#include "doctor_scan.hpp"
#include "threads_option.hpp"

namespace logratio_cli {
namespace {

struct doctor_args {
    std::string file, train, rollout, mask, offsets, old, each, pattern;
    bool json = false;
    thread_count threads;  // --threads, or the usable CPUs
};

void add_doctor_options(CLI::App* c, doctor_args& a) {
    c->add_option("file", a.file, "safetensors file with train_logprobs, rollout_logprobs and mask or cu_seqlens");
    c->add_option("--train", a.train, ".npy file of trainer log-probs");
    c->add_option("--rollout", a.rollout, ".npy file of rollout log-probs");
    c->add_option("--mask", a.mask, ".npy mask (padded [B, T], or packed 1-D with --offsets)");
    c->add_option("--offsets", a.offsets, ".npy cu_seqlens (int32/int64, S+1 entries): packed layout");
    c->add_option("--old", a.old,
                  "tensor (or .npy with --train) of the trainer's log-probs under the rollout's weights: the "
                  "policy_lag check (default: a tensor named old_logprobs)");
    c->add_flag("--json", a.json, "one JSON object {findings, breakdowns}");
    add_threads_option(*c, a.threads, "threads");
    c->add_option("--each", a.each, "a directory of dumps: findings per dump and which runs/updates each touches");
    c->add_option("--pattern", a.pattern, "with --each: path pattern such as '{group}/{run}/update_{update}.safetensors'");
}

void print_findings(const logratio::doctor::diagnosis& d) {
    for (const auto& f : d.findings) {
        // "not assessed: why" under the severity "not assessed": the why once
        const std::string prefix = "not assessed: ";
        const bool na = f.level == logratio::doctor::severity::not_assessed && f.summary.rfind(prefix, 0) == 0;
        std::printf("%-19s %-12s %s\n", f.check.c_str(), logratio::doctor::severity_name(f.level),
                    f.summary.c_str() + (na ? prefix.size() : 0));
        if (logratio::doctor::raises(f.level))
            std::printf("%-32s check: %s\n", "", f.what_to_check.c_str());
    }
}

int run_doctor_each(const std::string& dir, const std::string& pattern, const std::string& old, bool json,
                           unsigned threads) {
    const auto ds = diagnose_directory(dir, pattern, old, threads);
    logratio::doctor::severity w = logratio::doctor::severity::ok;
    for (const auto& x : ds) w = std::max(w, x.d.worst());
    if (json) {
        std::cout << each_json_text(ds) << "\n";
        return doctor_exit(w);
    }
    std::printf("logratio doctor: %zu dumps under %s\n", ds.size(), dir.c_str());
    for (const auto& x : ds) {
        std::string raised;
        for (const auto& f : x.d.findings)
            if (logratio::doctor::raises(f.level))
                raised += (raised.empty() ? "" : ", ") + f.check + " (" + logratio::doctor::severity_name(f.level) + ")";
        std::printf("  %-40s %-5s %s\n", x.label.c_str(), logratio::doctor::severity_name(x.d.worst()),
                    raised.empty() ? "-" : raised.c_str());
    }
    std::printf("summary by check:\n");
    for (const auto& c : summarize_checks(ds)) {
        if (!c.warn && !c.fail) {
            std::printf("  %-19s ok in every dump\n", c.check.c_str());
            continue;
        }
        std::printf("  %-19s fail in %zu, warn in %zu dump(s); runs: %s; dumps: %s\n", c.check.c_str(), c.fail,
                    c.warn, c.runs.empty() ? "-" : label_list({c.runs.begin(), c.runs.end()}).c_str(),
                    label_list(c.dumps).c_str());
    }
    return doctor_exit(w);
}

int run_doctor(const doctor_args& a) {
    if (!a.each.empty()) {
        if (!a.file.empty() || !a.train.empty()) throw logratio::shape_error("--each DIR replaces the input file");
        return run_doctor_each(a.each, a.pattern, a.old, a.json, a.threads);
    }
    if (!a.pattern.empty()) throw logratio::shape_error("--pattern needs --each DIR");
    logratio::doctor::diagnosis d;
    std::string what;
    if (!a.file.empty()) {
        if (!a.train.empty() || !a.rollout.empty() || !a.mask.empty() || !a.offsets.empty())
            throw logratio::shape_error("give either FILE.safetensors or --train/--rollout .npy files, not both");
        d = diagnose_file(a.file, a.old, a.threads);
        what = a.file;
    } else {
        if (a.train.empty() || a.rollout.empty())
            throw logratio::shape_error("need FILE.safetensors, or --train and --rollout .npy files");
        loaded_inputs L;
        panel_tensors in;
        in.train = load_npy(L, a.train, "train_logprobs");
        in.rollout = load_npy(L, a.rollout, "rollout_logprobs");
        if (!a.mask.empty()) in.mask = load_npy(L, a.mask, "mask");
        if (!a.offsets.empty()) in.offsets = load_npy(L, a.offsets, "cu_seqlens");
        const tensor* old = a.old.empty() ? nullptr : load_npy(L, a.old, "old_logprobs");
        d = diagnose_tensors(in, old, a.threads);
        what = a.train;
    }
    if (a.json) {
        std::cout << diagnosis_json_text(d) << "\n";
        return doctor_exit(d.worst());
    }
    std::printf("logratio doctor: %s: %llu tokens in %llu sequences", what.c_str(),
                static_cast<unsigned long long>(d.tokens), static_cast<unsigned long long>(d.sequences));
    if (d.skipped_tokens) std::printf(" (%llu NaN or positive, skipped)", static_cast<unsigned long long>(d.skipped_tokens));
    std::printf("\n");
    print_findings(d);
    std::printf("verdict: %s\n", d.worst() == logratio::doctor::severity::fail ? "FAIL (exit 3)"
                                 : d.worst() == logratio::doctor::severity::warn ? "warnings"
                                                                                 : "no data bug found");
    return doctor_exit(d.worst());
}

}  // namespace

command_runner setup_doctor(CLI::App& c) {
    auto args = std::make_shared<doctor_args>();
    add_doctor_options(&c, *args);
    return [args] { return run_doctor(*args); };
}

}  // namespace logratio_cli
