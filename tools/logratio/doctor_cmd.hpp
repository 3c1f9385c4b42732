#pragma once
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <logratio/doctor/diagnose.hpp>

#include "doctor_json.hpp"
#include "dumps.hpp"
#include "kernels.hpp"
#include "mapped_file.hpp"
#include "npy.hpp"
#include "panel_input.hpp"
#include "runs_output.hpp"
#include "safetensors.hpp"
#include "tensor_names.hpp"

namespace logratio_cli {

constexpr int doctor_fail_exit = 3;

struct doctor_args {
    std::string file, train, rollout, mask, offsets, old, each, pattern;
    bool json = false;
    unsigned threads = 1;
};

inline void add_doctor_options(CLI::App* c, doctor_args& a) {
    c->add_option("file", a.file, "safetensors file with train_logprobs, rollout_logprobs and mask or cu_seqlens");
    c->add_option("--train", a.train, ".npy file of trainer log-probs");
    c->add_option("--rollout", a.rollout, ".npy file of rollout log-probs");
    c->add_option("--mask", a.mask, ".npy mask (padded [B, T], or packed 1-D with --offsets)");
    c->add_option("--offsets", a.offsets, ".npy cu_seqlens (int32/int64, S+1 entries): packed layout");
    c->add_option("--old", a.old,
                  "tensor (or .npy with --train) of the trainer's log-probs under the rollout's weights: the "
                  "policy_lag check (default: a tensor named old_logprobs)");
    c->add_flag("--json", a.json, "one JSON object {findings, breakdowns}");
    c->add_option("--threads", a.threads, "threads")->check(CLI::Range(1u, 1024u));
    c->add_option("--each", a.each, "a directory of dumps: findings per dump and which runs/updates each touches");
    c->add_option("--pattern", a.pattern, "with --each: path pattern such as '{group}/{run}/update_{update}.safetensors'");
}

/// Diagnoses validated tensors; `old` (may be null) must match train's dtype and shape.
inline logratio::doctor::diagnosis diagnose_tensors(const panel_tensors& in, const tensor* old, unsigned threads) {
    if (old && in.train && (old->type != in.train->type || old->shape != in.train->shape))
        throw logratio::shape_error("old_logprobs is " + std::string(dtype_label(old->type)) + " " +
                                    old->shape_string() + ", train_logprobs is " + dtype_label(in.train->type) + " " +
                                    in.train->shape_string() + ": they must match");
    logratio::doctor::diagnosis d;
    with_panel_view(in, [&](const auto& view) {
        using T = typename std::decay_t<decltype(view)>::value_type;
        std::vector<std::unique_ptr<unsigned char[]>> keep;
        logratio::doctor::diagnose_options o;
        o.threads = threads;
        if (old) o.old_logprobs = input_detail::typed<T>(*old, keep);
        d = kernels::diagnose(view, o);
    });
    return d;
}

/// The diagnosis of one safetensors dump (old_name: tensor for policy_lag,
/// empty = old_logprobs when present). Errors name the file.
inline logratio::doctor::diagnosis diagnose_file(const std::string& path, const std::string& old_name,
                                                 unsigned threads = 1) {
    mapped_file f(path);
    const auto st = parse_safetensors(f);
    const panel_tensors in = dump_tensors(st, path, "");
    const tensor* old = st.find(old_name.empty() ? std::string("old_logprobs") : old_name);
    if (!old && !old_name.empty()) throw logratio::shape_error(path + ": --old: no tensor '" + old_name + "'");
    try {
        return diagnose_tensors(in, old, threads);
    } catch (const logratio::error& e) {
        throw logratio::error(path + ": " + e.what());
    }
}

inline void print_findings(const logratio::doctor::diagnosis& d, const std::string& indent = "") {
    for (const auto& f : d.findings) {
        std::printf("%s%-19s %-5s %s\n", indent.c_str(), f.check.c_str(), logratio::doctor::severity_name(f.level),
                    f.summary.c_str());
        if (f.level != logratio::doctor::severity::ok)
            std::printf("%s%-25s check: %s\n", indent.c_str(), "", f.what_to_check.c_str());
    }
}

inline std::string dump_json_text(const nlohmann::ordered_json& j) {
    return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

inline int doctor_exit(logratio::doctor::severity s) {
    return s == logratio::doctor::severity::fail ? doctor_fail_exit : 0;
}

}  // namespace logratio_cli

#include "doctor_each.hpp"

namespace logratio_cli {

/// Loads .npy inputs (train, rollout, mask, offsets, old) into tensors.
struct doctor_npy_inputs {
    std::vector<std::unique_ptr<mapped_file>> files;
    std::vector<tensor> tensors;
    const tensor* load(const std::string& path, const char* name) {
        files.push_back(std::make_unique<mapped_file>(path));
        tensors.push_back(parse_npy(*files.back(), name));
        return &tensors.back();
    }
};

inline int run_doctor(const doctor_args& a) {
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
        doctor_npy_inputs L;
        L.tensors.reserve(5);
        panel_tensors in;
        in.train = L.load(a.train, "train_logprobs");
        in.rollout = L.load(a.rollout, "rollout_logprobs");
        if (!a.mask.empty()) in.mask = L.load(a.mask, "mask");
        if (!a.offsets.empty()) in.offsets = L.load(a.offsets, "cu_seqlens");
        const tensor* old = a.old.empty() ? nullptr : L.load(a.old, "old_logprobs");
        d = diagnose_tensors(in, old, a.threads);
        what = a.train;
    }
    if (a.json) {
        std::cout << dump_json_text(diagnosis_json(d)) << "\n";
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

}  // namespace logratio_cli
