// logratio: command-line tool over dumps of paired log-probs.
//
//   logratio panel FILE.safetensors [--json] [--threads N] [--no-quantiles]
//   logratio panel --train a.npy --rollout b.npy (--mask m.npy | --offsets o.npy) [--json]
//   logratio correct FILE.safetensors [--is L --is-threshold C [--is-lower c] [--batch-normalize]]
//                    [--rs OPTIONS --rs-threshold T[,T...] [--rs-threshold-lower L]] [--veto TAU]
//                    [--json] [--prefix P] [--out OUT.safetensors]
//   logratio logits FILE.safetensors [--temperature T] [--json] [--threads N]
//   logratio panel --each DIR [--csv OUT.csv] [--pattern P] [--threads N]
//   logratio runs TABLE.csv|DIR... [--metric NAME] [--compare A,B] [--json] [--html OUT.html]
//   logratio report TABLE.csv|DIR... [--metric NAME] [--compare A,B] [--html OUT.html] [--dump FILE]
//   logratio doctor FILE.safetensors [--json] | --each DIR     (exit 3 when a check fails)
//   logratio info
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <logratio/logratio.hpp>

#include "doctor_cmd.hpp"
#include "mapped_file.hpp"
#include "npy.hpp"
#include "panel_input.hpp"
#include "runs_cmd.hpp"
#include "safetensors.hpp"
#include "safetensors_writer.hpp"
#include "stream_panel.hpp"
#include "tensor_names.hpp"
#include "flavour_args.hpp"

namespace {

using logratio_cli::mapped_file;

struct input_args {
    std::string file, train, rollout, mask, offsets;
    std::string flavour;  ///< whose tensor names (and metrics): verl | slime | trl, or "" to detect
};

struct panel_args : input_args {
    std::string old;  ///< tensor (or .npy) of l_T under the rollout's weights
    bool json = false;
    bool no_quantiles = false;
    unsigned threads = 1;
    std::vector<double> thresholds{1e-3, 0.01, 0.1, 1.0};
    std::string nonfinite = "raise";
    std::string each, csv, pattern;  ///< --each DIR: every dump's panel as a CSV table
    bool stream = false;             ///< constant memory (automatic above half of the RAM)
};

struct correct_args : input_args {
    logratio_cli::flavour_args fw;  ///< --mode and the slime / TRL settings (flavour_args.hpp)
    std::string is, rs, rs_threshold, out, prefix;
    std::optional<double> is_threshold, is_lower, rs_lower, veto;
    bool batch_normalize = false, json = false;
    unsigned threads = 1;
};

struct logits_args {
    std::string file;
    double temperature = 1.0;
    bool json = false;
    unsigned threads = 1;
};

struct quantile_args : input_args {
    bool json = false;
    std::string of = "delta", method = "linear", nonfinite = "raise";
    std::vector<double> q{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    unsigned sketch = 0;
};

void add_input_options(CLI::App* c, input_args& a) {
    c->add_option("file", a.file, "safetensors file with train_logprobs, rollout_logprobs and mask or cu_seqlens");
    c->add_option("--train", a.train, ".npy file of trainer log-probs");
    c->add_option("--rollout", a.rollout, ".npy file of rollout log-probs");
    c->add_option("--mask", a.mask, ".npy mask (padded [B, T], or packed 1-D with --offsets)");
    c->add_option("--offsets", a.offsets, ".npy cu_seqlens (int32/int64, S+1 entries): packed layout");
}

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
    std::cout << j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

/// The mapped files and tensors of one dump, from a safetensors file or .npy flags.
struct loaded_inputs {
    std::vector<std::unique_ptr<mapped_file>> files;
    std::optional<logratio_cli::safetensors_file> st;
    std::vector<logratio_cli::tensor> npys;
    logratio_cli::panel_tensors in;
};

void load_inputs(const input_args& a, loaded_inputs& L) {
    L.npys.reserve(4);
    if (!a.file.empty()) {
        if (!a.train.empty() || !a.rollout.empty() || !a.mask.empty() || !a.offsets.empty())
            throw logratio::shape_error("give either FILE.safetensors or --train/--rollout .npy files, not both");
        L.files.push_back(std::make_unique<mapped_file>(a.file));
        L.st = logratio_cli::parse_safetensors(*L.files.back());
        std::string how;
        logratio_cli::tensor_names names;
        L.in = logratio_cli::dump_tensors(*L.st, a.file, a.flavour, &names, &how);
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

logratio::nonfinite_policy policy(const std::string& s) {
    return s == "omit" ? logratio::nonfinite_policy::omit : logratio::nonfinite_policy::raise;
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
    L.files.push_back(std::make_unique<mapped_file>(a.old));
    L.npys.push_back(logratio_cli::parse_npy(*L.files.back(), "old_logprobs"));
    return &L.npys.back();
}

nlohmann::ordered_json part_json(const logratio::mismatch_part& p) {
    return {{"delta_mean", p.delta_mean}, {"delta_abs_mean", p.delta_abs_mean}, {"delta_std", p.delta_std},
            {"kl_k3", p.kl_k3}};
}

int run_panel(const panel_args& a) {
    logratio::panel_options opt;
    opt.abs_delta_thresholds = a.thresholds;
    opt.nonfinite = policy(a.nonfinite);
    if (!a.each.empty()) {
        if (!a.file.empty() || !a.train.empty()) throw logratio::shape_error("--each DIR replaces the input file");
        return logratio_cli::run_panel_each(a.each, a.csv, a.pattern, opt, a.threads);
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
        if (a.json) print_json(r.panel);
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
        result = logratio::compute_panel(view, opt, a.threads);
        framework_metrics = logratio::framework_mismatch_entries(view, opt.flavour);
        if (!a.no_quantiles) logratio::add_panel_quantiles(result, view, opt.nonfinite);
        if (old) {
            using T = typename std::decay_t<decltype(view)>::value_type;
            std::vector<std::unique_ptr<unsigned char[]>> keep;
            split = logratio::split_mismatch(view, logratio_cli::input_detail::typed<T>(*old, keep), opt, a.threads);
        }
    });
    if (a.json) {
        if (!split && framework_metrics.empty()) {
            print_json(result);
            return 0;
        }
        // SPEC's keys, then the numeric-vs-lag split under one extra key.
        nlohmann::ordered_json j = nlohmann::ordered_json::parse([&] {
            std::ostringstream os;
            std::streambuf* prev = std::cout.rdbuf(os.rdbuf());
            print_json(result);
            std::cout.rdbuf(prev);
            return os.str();
        }());
        if (split)
            j["mismatch_split"] = {{"total", part_json(split->total)},
                                   {"numeric", part_json(split->numeric)},
                                   {"lag", part_json(split->lag)}};
        if (!framework_metrics.empty()) {  // under one extra key named by the flavour
            nlohmann::ordered_json f = nlohmann::ordered_json::object();
            for (const auto& e : framework_metrics) f[e.first] = e.second;
            j[a.flavour] = f;
        }
        std::cout << j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
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
        if (tt->type == logratio_cli::dtype::i64)
            logratio::compute_logits(z, y, aligned_copy<std::int64_t>(*tt, keep), rows.data(), o, a.threads);
        else
            logratio::compute_logits(z, y, aligned_copy<std::int32_t>(*tt, keep), rows.data(), o, a.threads);
    };
    switch (tz->type) {
        case logratio_cli::dtype::f32: run(float{}); break;
        case logratio_cli::dtype::f64: run(double{}); break;
        case logratio_cli::dtype::bf16: run(logratio::bfloat16{}); break;
        case logratio_cli::dtype::f16: run(logratio::float16{}); break;
        default:
            throw logratio::shape_error(std::string("train_logits: dtype ") + logratio_cli::dtype_label(tz->type) +
                                        " is not F32/F64/F16/BF16");
    }
    if (a.json) {
        nlohmann::ordered_json j;
        auto column = [&](const char* k, auto get) {
            nlohmann::ordered_json arr = nlohmann::ordered_json::array();
            for (const auto& r : rows) arr.push_back(get(r));
            j[k] = std::move(arr);
        };
        using R = logratio::logits_row;
        column("train_entropy", [](const R& r) { return r.train_entropy; });
        column("rollout_entropy", [](const R& r) { return r.rollout_entropy; });
        column("kl_train_rollout", [](const R& r) { return r.kl_train_rollout; });
        column("kl_rollout_train", [](const R& r) { return r.kl_rollout_train; });
        column("tv", [](const R& r) { return r.tv; });
        column("train_logprob", [](const R& r) { return r.train_logprob; });
        column("rollout_logprob", [](const R& r) { return r.rollout_logprob; });
        column("argmax_match", [](const R& r) { return r.argmax_match; });
        column("sampled_prob_gap", [](const R& r) { return r.sampled_prob_gap; });
        std::cout << j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
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
        r = logratio::correct(view, o, has_weights ? weights.data() : nullptr, mask.data(), a.threads);
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

int run_quantiles(const quantile_args& a) {
    loaded_inputs L;
    load_inputs(a, L);
    const auto what = logratio::parse_quantile_of(a.of);
    logratio::quantile_options qo;
    qo.method = logratio::parse_quantile_method(a.method);
    qo.nonfinite = policy(a.nonfinite);
    std::vector<double> values;
    double bound = 0;
    std::uint64_t count = 0;
    logratio_cli::with_panel_view(L.in, [&](const auto& view) {
        logratio::quantile_workspace ws;
        if (a.sketch == 0) {
            values = logratio::quantiles(view, what, a.q, qo, ws);
            count = ws.values.size();
            return;
        }
        if (a.sketch < logratio::kll_sketch<double>::min_k || a.sketch > 65535)
            throw logratio::shape_error(logratio::detail::concat("--sketch K: K = ", a.sketch, " must be in [8, 65535]"));
        logratio::gather_quantity(view, what, qo, ws);
        logratio::kll_sketch<double> sk(static_cast<std::uint16_t>(a.sketch));
        sk.update(ws.values.data(), ws.values.size());
        count = sk.n();
        if (count) values = sk.quantiles(a.q);
        bound = sk.normalized_rank_error();
    });
    if (a.json) {
        nlohmann::ordered_json j;
        j["of"] = a.of;
        j["method"] = a.method;
        nlohmann::ordered_json q = nlohmann::ordered_json::object();
        for (std::size_t i = 0; i < a.q.size(); ++i)
            q[logratio::format_g(a.q[i])] = values.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(values[i]);
        j["quantiles"] = q;
        if (a.sketch) {
            j["k"] = a.sketch;
            j["rank_error_bound"] = bound;
        }
        std::cout << j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return 0;
    }
    std::printf("%s quantiles (%s) of %llu tokens\n", a.of.c_str(), a.sketch ? "kll sketch" : a.method.c_str(),
                static_cast<unsigned long long>(count));
    for (std::size_t i = 0; i < a.q.size(); ++i) {
        if (values.empty()) std::printf("  q%-10s -\n", logratio::format_g(a.q[i]).c_str());
        else std::printf("  q%-10s % .10g\n", logratio::format_g(a.q[i]).c_str(), values[i]);
    }
    if (a.sketch) std::printf("  k %u, rank_error_bound %.6g (99%% confidence)\n", a.sketch, bound);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"logratio: train-inference mismatch statistics over paired log-prob dumps"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LOGRATIO_VERSION_STRING);

    panel_args pa;
    auto* panel = app.add_subcommand("panel", "print the ratio panel (SPEC.md keys) of one dump");
    add_input_options(panel, pa);
    panel->add_flag("--json", pa.json, "one JSON object with exactly SPEC's keys");
    panel->add_flag("--no-quantiles", pa.no_quantiles, "skip the exact-quantile pass (delta_q*, abs_delta_q*)");
    panel->add_option("--threads", pa.threads, "threads for the one-pass panel")->check(CLI::Range(1u, 1024u));
    panel->add_option("--thresholds", pa.thresholds, "|delta| thresholds of frac_abs_delta_gt_* (at most 8)")
        ->delimiter(',');
    panel->add_option("--nonfinite", pa.nonfinite, "NaN/Inf log-probs: raise (default) or omit")
        ->check(CLI::IsMember({"raise", "omit"}));

    panel->add_option("--flavour", pa.flavour,
                      "verl, slime or trl: read that framework's tensor names; slime / trl: add its mismatch metrics")
        ->check(CLI::IsMember({"verl", "slime", "trl"}));
    panel->add_option("--old", pa.old,
                      "tensor (or .npy with --train) of the trainer's log-probs under the rollout's weights: "
                      "split the mismatch into numeric and policy lag (default: a tensor named old_logprobs)");
    panel->add_flag("--stream", pa.stream,
                    "constant memory for inputs of any size: chunks of sequences, quantiles from sketches "
                    "(automatic above half of the RAM)");
    panel->add_option("--each", pa.each, "a directory of dumps: every file's panel, as a long CSV table");
    panel->add_option("--csv", pa.csv, "with --each: write the table here (atomically; default stdout)");
    panel->add_option("--pattern", pa.pattern,
                      "with --each: path pattern such as '{group}/{run}/update_{update}.safetensors' "
                      "(default: __metadata__ run/group/update)");

    correct_args ca;
    auto* corr = app.add_subcommand("correct", "IS weights (TIS), rejection masks (MIS) and veto, with verl's metrics");
    add_input_options(corr, ca);
    corr->add_option("--is", ca.is, "IS weight level: token, sequence or geometric")
        ->check(CLI::IsMember({"token", "sequence", "geometric"}));
    corr->add_option("--is-threshold", ca.is_threshold, "upper truncation C of the IS weights (default 2)");
    corr->add_option("--is-lower", ca.is_lower, "lower truncation c_low of the IS weights (two-sided clip)");
    corr->add_flag("--batch-normalize", ca.batch_normalize, "normalise the weights to mean 1 over the batch");
    corr->add_option("--rs", ca.rs, "rejection options, comma-separated, as verl's rollout_rs (e.g. token_k1,seq_max_k2)");
    corr->add_option("--rs-threshold", ca.rs_threshold,
                     "thresholds as verl's rollout_rs_threshold: one, or one per option (k1: lower_upper or u)");
    corr->add_option("--rs-threshold-lower", ca.rs_lower, "lower ratio bound of the aliases token/sequence/geometric");
    corr->add_option("--veto", ca.veto, "reject a sequence if any token has rho below this");
    corr->add_flag("--json", ca.json, "one JSON object of the metrics (verl's names)");
    corr->add_option("--prefix", ca.prefix, "prefix of every metric name (verl logs them under rollout_corr/)");
    corr->add_option("--out", ca.out, "write rollout_is_weights (F32) and response_mask (U8) to this safetensors file");
    corr->add_option("--threads", ca.threads, "threads")->check(CLI::Range(1u, 1024u));
    add_flavour_options(corr, ca);

    logits_args la;
    auto* logit = app.add_subcommand("logits", "exact entropy, KL both ways, TV and log-probs from full logits");
    logit->add_option("file", la.file, "safetensors with train_logits, rollout_logits [N, V] and tokens [N]")->required();
    logit->add_option("--temperature", la.temperature, "divide the logits by T (default 1)");
    logit->add_flag("--json", la.json, "per-token values as JSON arrays");
    logit->add_option("--threads", la.threads, "threads")->check(CLI::Range(1u, 1024u));

    quantile_args qa;
    auto* quant = app.add_subcommand("quantiles", "exact (or sketched) quantiles of delta, |delta| or the ratio");
    add_input_options(quant, qa);
    quant->add_option("--of", qa.of, "delta (default), abs_delta or ratio")
        ->check(CLI::IsMember({"delta", "abs_delta", "ratio"}));
    quant->add_option("--q", qa.q, "probabilities in [0, 1], comma-separated")->delimiter(',');
    quant->add_option("--method", qa.method, "numpy.quantile method (default linear)");
    quant->add_option("--sketch", qa.sketch, "use a KLL sketch with this k instead, and print rank_error_bound");
    quant->add_option("--nonfinite", qa.nonfinite, "NaN/Inf log-probs: raise (default) or omit")
        ->check(CLI::IsMember({"raise", "omit"}));
    quant->add_flag("--json", qa.json, "one JSON object {of, method, quantiles{p: value}} (+ k, rank_error_bound)");

    logratio_cli::runs_args ra, rp;
    auto* runs = app.add_subcommand("runs", "per-run trends, group means and a two-group comparison (scipy's numbers)");
    logratio_cli::add_runs_options(runs, ra, false);
    auto* report = app.add_subcommand("report", "one-screen verdict and a self-contained HTML report");
    logratio_cli::add_runs_options(report, rp, true);

    logratio_cli::doctor_args da;
    auto* doctor = app.add_subcommand("doctor", "find the cause of a mismatch: misaligned, filled or processed "
                                                "log-probs, one-sided temperature, desync, hot spots (exit 3 on a fail)");
    logratio_cli::add_doctor_options(doctor, da);

    auto* info = app.add_subcommand("info", "print the version and the SIMD architecture of this binary");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        if (*panel) return run_panel(pa);
        if (*quant) return run_quantiles(qa);
        if (*corr) return run_correct(ca);
        if (*logit) return run_logits(la);
        if (*runs) return logratio_cli::run_runs(ra);
        if (*report) return logratio_cli::run_report(rp);
        if (*doctor) return logratio_cli::run_doctor(da);
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
