// `logratio logits`: exact entropy, KL both ways, TV and log-probs per row
// from full logits.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/core/visit.hpp>
#include <logratio/logits/logits.hpp>

#include "../io/mapped_file.hpp"
#include "../io/panel_input.hpp"
#include "../io/safetensors.hpp"
#include "../kernels.hpp"
#include "../output/command_json.hpp"
#include "command.hpp"
#include "threads_option.hpp"

namespace logratio_cli {
namespace {

struct logits_args {
    std::string file;
    double temperature = 1.0;
    bool json = false;
    thread_count threads;  // --threads, or the usable CPUs
};

template <class T>
const T* aligned_copy(const logratio_cli::tensor& t, std::vector<std::unique_ptr<unsigned char[]>>& keep) {
    return logratio_cli::input_detail::typed<T>(t, keep);
}

int run_logits(const logits_args& a) {
    mapped_file f(a.file);
    const auto st = logratio_cli::parse_safetensors(f);
    const auto* tz = st.find("train_logits");
    const auto* ty = st.find("rollout_logits");
    const auto* tt = st.find("tokens");
    if (!tz) throw logratio::shape_error(a.file + ": missing tensor 'train_logits'");
    if (!ty) throw logratio::shape_error(a.file + ": missing tensor 'rollout_logits'");
    if (!tt) throw logratio::shape_error(a.file + ": missing tensor 'tokens'");
    if (tz->shape.size() != 2) throw logratio::shape_error("train_logits must be [N, V], is " + tz->shape_string());
    if (ty->type != tz->type)
        throw logratio::shape_error(std::string("dtype mismatch: train_logits is ") + logratio_cli::dtype_label(tz->type) +
                                    ", rollout_logits is " + logratio_cli::dtype_label(ty->type));
    if (ty->shape != tz->shape)
        throw logratio::shape_error("shape mismatch: train_logits is " + tz->shape_string() + ", rollout_logits is " +
                                    ty->shape_string());
    if (tt->shape.size() != 1 || tt->shape[0] != tz->shape[0])
        throw logratio::shape_error("shape mismatch: tokens is " + tt->shape_string() + ", expected [" +
                                    std::to_string(tz->shape[0]) + "]");
    if (tt->type != logratio_cli::dtype::i32 && tt->type != logratio_cli::dtype::i64)
        throw logratio::shape_error(std::string("tokens: dtype ") + logratio_cli::dtype_label(tt->type) +
                                    ", must be I32 or I64");
    const std::uint64_t N = tz->shape[0], V = tz->shape[1];
    std::vector<logratio::logits_row> rows(N);
    std::vector<std::unique_ptr<unsigned char[]>> keep;
    auto run = [&](auto tag) {
        using T = decltype(tag);
        logratio::logits_view<T> z(aligned_copy<T>(*tz, keep), N, V), y(aligned_copy<T>(*ty, keep), N, V);
        const logratio::logits_options o{a.temperature};
        if (tt->type == logratio_cli::dtype::i64) {
            logratio_cli::kernels::compare_logits(z, y, aligned_copy<std::int64_t>(*tt, keep), rows.data(), o, a.threads);
        } else {  // I32 ids widened once (the kernels take int64)
            const std::int32_t* t32 = aligned_copy<std::int32_t>(*tt, keep);
            const std::vector<std::int64_t> t64(t32, t32 + N);
            logratio_cli::kernels::compare_logits(z, y, t64.data(), rows.data(), o, a.threads);
        }
    };
    logratio::visit_value_type(logratio_cli::input_detail::value_type_of(*tz), run);
    if (a.json) {
        std::cout << logits_json_text(rows) << "\n";
        return 0;
    }
    const auto s = logratio::summarize_logits(rows.data(), N);
    std::printf("logits of %llu rows x %llu vocabulary entries (temperature %g)\n", static_cast<unsigned long long>(N),
                static_cast<unsigned long long>(V), a.temperature);
    std::printf("%-28s %s\n", "metric", "value");
    const std::pair<const char*, double> e[] = {
        {"train_entropy_mean", s.train_entropy_mean},       {"train_entropy_max", s.train_entropy_max},
        {"rollout_entropy_mean", s.rollout_entropy_mean},   {"rollout_entropy_max", s.rollout_entropy_max},
        {"kl_train_rollout_mean", s.kl_train_rollout_mean}, {"kl_train_rollout_max", s.kl_train_rollout_max},
        {"kl_rollout_train_mean", s.kl_rollout_train_mean}, {"kl_rollout_train_max", s.kl_rollout_train_max},
        {"kl_rollout_train_q50", s.kl_rollout_train_q50},   {"kl_rollout_train_q90", s.kl_rollout_train_q90},
        {"kl_rollout_train_q99", s.kl_rollout_train_q99},   {"tv_mean", s.tv_mean},
        {"tv_max", s.tv_max},                               {"argmax_match_fraction", s.argmax_match_fraction},
        {"sampled_prob_gap_mean", s.sampled_prob_gap_mean}, {"sampled_prob_gap_abs_mean", s.sampled_prob_gap_abs_mean}};
    for (const auto& x : e) std::printf("%-28s % .10g\n", x.first, x.second);
    return 0;
}

}  // namespace

command_runner setup_logits(CLI::App& c) {
    auto args = std::make_shared<logits_args>();
    logits_args& a = *args;
    c.add_option("file", a.file, "safetensors with train_logits, rollout_logits [N, V] and tokens [N]")->required();
    c.add_option("--temperature", a.temperature, "divide the logits by T (default 1)");
    c.add_flag("--json", a.json, "per-token values as JSON arrays");
    add_threads_option(c, a.threads, "threads");
    return [args] { return run_logits(*args); };
}

}  // namespace logratio_cli
