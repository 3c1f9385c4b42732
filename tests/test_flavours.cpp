// The slime and TRL flavours of the correction (flavour.hpp) against the
// frameworks' own outputs.
//
// How each expected value was obtained: tests/data/<case>/{slime,trl}/<config>/
// are written by tests/gen_framework_reference.py, which runs slime's own
// functions (THUDM/slime 624b824a: vanilla_tis_function, icepop_function,
// compute_mis_weights_with_cp, get_sum_of_sample_mean,
// reduce_train_step_metrics) and TRL's own lines (huggingface/trl f2cd5771,
// grpo_trainer.py 2579-2624 and 2779-2813, cut out verbatim) in float32 on
// <case>/padded.safetensors (small, medium, and heavy_x5 / heavy_x20: delta
// scaled by 5 and 20; rejection: a batch where every rejection fires, and
// every mode with a rejection). args.json holds the `logratio correct` arguments of
// each configuration; metrics.json the framework's metrics under its names.
#include <cstring>
#include <filesystem>
#include <set>

#include "flavour_args.hpp"
#include "npy.hpp"
#include "test_correction_util.hpp"
#include "test_data.hpp"

#include <logratio/correction/correction.hpp>
#include <logratio/correction/flavour.hpp>
#include <logratio/dispatch/kernels.hpp>

namespace {

namespace fs = std::filesystem;
using logratio::correction_options;
using logratio::correction_result;

// rejection: 23 x 61, its own seed, built so that every rejection fires
// (gen_framework_reference.py make_rejection), with more configurations.
const char* const cases[] = {"small", "medium", "heavy_x5", "heavy_x20", "rejection"};

std::vector<std::string> configs(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(test::data_path(dir))) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

struct array {
    logratio_cli::mapped_file file;
    logratio_cli::tensor t;
    explicit array(const std::string& p) : file(p), t(logratio_cli::parse_npy(file, p)) {}
    float f32(std::size_t i) const {
        float x;
        std::memcpy(&x, t.data + 4 * i, 4);
        return x;
    }
};

struct run {
    correction_result r;
    std::vector<float> w;
    std::vector<std::uint8_t> m, input_mask;
    std::uint64_t rows = 0, cols = 0;
};

run correct_file(const std::string& path, const correction_options& o) {
    logratio_cli::mapped_file file(path);
    const auto st = logratio_cli::parse_safetensors(file);
    run out;
    const logratio_cli::panel_tensors in{st.find("train_logprobs"), st.find("rollout_logprobs"), st.find("mask"),
                                         nullptr};
    out.rows = in.train->shape[0];
    out.cols = in.train->shape[1];
    logratio_cli::with_panel_view(in, [&](const auto& v) {
        out.w.assign(v.size(), -1.0f);
        out.m.assign(v.size(), 7);
        out.r = logratio::kernels::correct(v, o, out.w.data(), out.m.data());
        for (std::uint64_t i = 0; i < v.size(); ++i) out.input_mask.push_back(v.counts(i) ? 1 : 0);
    });
    return out;
}

/// The relative tolerance of a metric. 1e-6 (SPEC's) except where the
/// framework's float32 arithmetic is the limit (flavour.hpp's list):
/// the float32 cancellation of exp(x) - x - 1 and mean(rho^2) - 1 near 0,
/// and the float32 sequence sums that exp() turns into relative errors.
/// Measured worst cases on the four fixtures are in the comments.
double tolerance(const std::string& key, const std::string& config) {
    // float32 cancellation of mean_s l_E - mean_s l_T (1.5e-5, heavy_x20).
    if (key == "mis_log_ppl_diff" || key == "mis_log_ppl_abs_diff") return 5e-5;
    if (key == "mis_k3_kl") return 1e-5;  // float32 exp(d) - d - 1 (2.1e-6)
    if (key == "mis_chi2_token") return 1e-5;  // float32 mean(rho^2) - 1 near 0 (2.5e-6, rejection)
    const bool seq_level = config.find("sequence") != std::string::npos || config.find("geometric") != std::string::npos;
    // float32 sequence sums through exp() (1.5e-6 on the weights; chi2_seq 1.05e-6).
    if (key == "mis_chi2_seq" || (seq_level && key.find("fraction") == std::string::npos)) return 1e-5;
    return 1e-6;
}

/// Largest relative differences seen, per flavour (printed once).
std::map<std::string, double> worst;

void check_config(const std::string& fixture, const std::string& dir, bool slime) {
    CAPTURE(dir);
    const auto args = test::load_json(dir + "/args.json");
    const correction_options o =
        logratio_cli::flavour_options_from(args.at("logratio_args").get<std::vector<std::string>>());
    REQUIRE(o.flavour == (slime ? logratio::framework::slime : logratio::framework::trl));
    const run got = correct_file(fixture, o);
    const std::string config = fs::path(dir).filename().string();
    const std::map<std::string, double> ours = test::as_map(got.r);
    const auto want = test::load_json(dir + "/metrics.json");
    std::set<std::string> seen;
    for (auto it = want.begin(); it != want.end(); ++it) {
        const std::string key = it.key();
        CAPTURE(key);
        REQUIRE_MESSAGE(ours.count(key) == 1, "missing metric " << key);
        seen.insert(key);
        const double w = it.value().get<double>(), g = ours.at(key);
        const double tol = tolerance(key, config);
        CHECK_MESSAGE(test::spec_close(g, w, tol, 1e-9), key << ": " << g << " vs " << w << " (rel "
                                                            << test::rel_err(g, w) << ", tolerance " << tol << ")");
        if (std::fabs(w) > 1e-6) {
            double& x = worst[std::string(slime ? "slime " : "trl ") + key];
            x = std::max(x, test::rel_err(g, w));
        }
    }
    CHECK(seen.size() == ours.size());  // no metric of ours that the framework does not log
    // Weights: equal on the masked-in tokens (the frameworks multiply by the mask), 0 elsewhere.
    array wr(dir + "/weights.npy");
    const bool per_row = wr.t.numel() == got.rows;
    REQUIRE((per_row || wr.t.numel() == got.w.size()));
    const bool seq_level = config.find("sequence") != std::string::npos || config.find("geometric") != std::string::npos;
    double worst_w = 0;
    for (std::size_t i = 0; i < got.w.size(); ++i) {
        if (!got.input_mask[i]) {
            CHECK(got.w[i] == 0.0f);
            continue;
        }
        const double ref = wr.f32(per_row ? i / got.cols : i);
        if (ref == 0.0) CHECK(got.w[i] == 0.0f);
        else worst_w = std::max(worst_w, std::fabs(got.w[i] - ref) / std::fabs(ref));
    }
    // Two float32 roundings (2.5e-7), plus the frameworks' float32 delta
    // rounded to 0.5 ulp(delta): 1.2e-7 relative in exp(delta) when |delta|
    // is in [1, 2) (3.3e-7 on the rejection case); with batch normalisation
    // slime's float32 batch mean adds its own; sequence sums in float32 (1.8e-6).
    const bool bn = slime &&
                    args.at("slime_args").value("tis_batch_normalize", false);
    CHECK_MESSAGE(worst_w <= (seq_level ? 5e-6 : bn ? 6e-7 : 4e-7), "weights: worst relative difference " << worst_w);
    double& x = worst[std::string(slime ? "slime " : "trl ") + (seq_level ? "weights (sequence level)" : "weights")];
    x = std::max(x, worst_w);
    // Mask: slime's modified_response_masks (mask.npy, absent where it is the
    // input's); TRL never changes completion_mask.
    std::size_t mask_diff = 0;
    if (fs::exists(dir + "/mask.npy")) {
        array mr(dir + "/mask.npy");
        REQUIRE(mr.t.numel() == got.m.size());
        for (std::size_t i = 0; i < got.m.size(); ++i) mask_diff += got.m[i] != mr.t.data[i];
    } else {
        for (std::size_t i = 0; i < got.m.size(); ++i) mask_diff += got.m[i] != got.input_mask[i];
    }
    CHECK(mask_diff == 0);
}

}  // namespace

TEST_CASE("flavours: slime's and TRL's own outputs (metrics under their names, weights, masks)") {
    std::size_t n_slime = 0, n_trl = 0;
    for (const std::string c : cases) {
        const std::string fixture = test::data_path(c + "/padded.safetensors");
        for (const std::string& dir : configs(c + "/slime")) {
            check_config(fixture, dir, true);
            ++n_slime;
        }
        for (const std::string& dir : configs(c + "/trl")) {
            check_config(fixture, dir, false);
            ++n_trl;
        }
    }
    CHECK(n_slime >= 5 * 16 + 8);
    CHECK(n_trl >= 5 * 8 + 5);
    std::string report;
    for (const auto& e : worst) {
        std::ostringstream s;
        s << "  " << e.first << ": " << e.second << "\n";
        report += s.str();
    }
    MESSAGE("largest relative differences vs the frameworks:\n" << report);
}

TEST_CASE("flavours: slime's train_rollout_logprob_abs_diff with rejections is over the kept tokens") {
    // loss.py (624b824a) 1086-1092 then 1140: numerators over
    // modified_response_masks, denominators the original mask sums. A hand
    // case: one row of 4 tokens, |delta| = 0.1, 0.2, 3, 0.1; mis-mask-token
    // with bounds [0.5, 2] rejects the third (rho = e^3): (0.1 + 0.2 + 0.1) / 4.
    const std::vector<double> t{-1.0, -1.0, -1.0, -1.0}, r{-1.1, -0.8, -4.0, -0.9};
    const std::vector<std::uint8_t> mk{1, 1, 1, 1};
    const auto v = logratio::paired_view<double>::padded(t.data(), r.data(), mk.data(), 1, 4);
    const correction_options o = logratio_cli::flavour_options_from(
        {"--mode", "slime:mis-mask-token", "--tis-upper-bound", "2", "--tis-lower-bound", "0.5"});
    std::vector<float> w(4);
    std::vector<std::uint8_t> keep(4);
    const auto e = test::as_map(logratio::kernels::correct(v, o, w.data(), keep.data()));
    CHECK(keep == std::vector<std::uint8_t>{1, 1, 0, 1});
    CHECK(e.at("train_rollout_logprob_abs_diff") == doctest::Approx(0.4 / 4).epsilon(1e-12));
    // the MIS metrics stay over the original mask: mis_kl = mean(-delta) over all four
    CHECK(e.at("mis_kl") == doctest::Approx((-0.1 + 0.2 - 3.0 + 0.1) / 4).epsilon(1e-12));
    // and the rejection case has configurations whose mask changed (mask.npy)
    std::size_t with_mask = 0;
    for (const std::string& dir : configs("rejection/slime")) with_mask += fs::exists(dir + "/mask.npy") ? 1 : 0;
    CHECK(with_mask >= 12);
}

TEST_CASE("flavours: the same weights and metrics from the packed layout") {
    for (const std::string c : {"small", "medium"}) {
        for (const std::string fw : {"slime", "trl"}) {
            for (const std::string& dir : configs(c + "/" + fw)) {
                CAPTURE(dir);
                const auto args = test::load_json(dir + "/args.json");
                const correction_options o =
                    logratio_cli::flavour_options_from(args.at("logratio_args").get<std::vector<std::string>>());
                const run padded = correct_file(test::data_path(c + "/padded.safetensors"), o);
                logratio_cli::mapped_file file(test::data_path(c + "/packed.safetensors"));
                const auto st = logratio_cli::parse_safetensors(file);
                const logratio_cli::panel_tensors in{st.find("train_logprobs"), st.find("rollout_logprobs"),
                                                     st.find("mask"), st.find("cu_seqlens")};
                std::vector<float> w;
                std::vector<std::uint8_t> m;
                correction_result r;
                logratio_cli::with_panel_view(in, [&](const auto& v) {
                    w.assign(v.size(), -1.0f);
                    m.assign(v.size(), 7);
                    r = logratio::kernels::correct(v, o, w.data(), m.data());
                });
                // packed holds the masked-in tokens of each row, in order
                std::vector<float> pw;
                std::vector<std::uint8_t> pm;
                for (std::size_t i = 0; i < padded.w.size(); ++i)
                    if (padded.input_mask[i]) {
                        pw.push_back(padded.w[i]);
                        pm.push_back(padded.m[i]);
                    }
                REQUIRE(pw.size() == w.size());
                CHECK(pw == w);
                CHECK(pm == m);
                const auto a = logratio::correction_entries(padded.r), b = logratio::correction_entries(r);
                REQUIRE(a.size() == b.size());
                for (std::size_t k = 0; k < a.size(); ++k) {
                    CAPTURE(a[k].first);
                    CHECK(a[k].first == b[k].first);
                    CHECK(test::spec_close(b[k].second, a[k].second, 1e-12, 1e-15));
                }
            }
        }
    }
}

TEST_CASE("flavours: mode names, settings and their errors") {
    using logratio::parse_mode;
    CHECK(parse_mode("slime:tis").name() == "slime:tis");
    CHECK(parse_mode("slime:icepop").slime == logratio::slime_kind::icepop);
    const auto m = parse_mode("slime:mis-clip-geometric");
    CHECK(m.tis_mode == logratio::mis_bound::clip);
    CHECK(m.tis_level == logratio::is_level::geometric);
    CHECK(m.name() == "slime:mis-clip-geometric");
    CHECK(parse_mode("trl:sequence_mask").name() == "trl:sequence_mask");
    CHECK(parse_mode("trl:token_truncate").clip_max == 3.0);  // TRL's default
    CHECK_THROWS_WITH_AS(parse_mode("slime:mis-clip"), doctest::Contains("unknown mode 'slime:mis-clip'"),
                         logratio::argument_error);
    CHECK_THROWS_AS(parse_mode("trl:token"), logratio::argument_error);
    CHECK_THROWS_AS(parse_mode("verl:tis"), logratio::argument_error);
    auto with = [](const std::vector<std::string>& a) { return logratio_cli::flavour_options_from(a); };
    // slime's default lower clip 0 is allowed (the verl flavour's --is-lower 0 is not).
    CHECK_NOTHROW(with({"--mode", "slime:tis", "--tis-clip-low", "0"}));
    CHECK_THROWS_WITH(with({"--mode", "slime:tis", "--tis-clip-low", "3"}), doctest::Contains("tis_clip_low = 3"));
    CHECK_THROWS_WITH(with({"--mode", "slime:mis-clip-token", "--tis-upper-bound", "1", "--tis-lower-bound", "2"}),
                      doctest::Contains("tis_lower_bound"));
    CHECK_THROWS_WITH(with({"--mode", "slime:mis-mask-token", "--rs-veto-threshold", "1e-4"}),
                      doctest::Contains("need --use-rs"));
    CHECK_THROWS_WITH(with({"--mode", "trl:token_mask", "--clip-min", "2", "--clip-max", "1"}),
                      doctest::Contains("clip_min 2 is above clip_max 1"));
    CHECK_THROWS_WITH(with({"--mode", "slime:tis", "--clip-max", "2"}), doctest::Contains("does not apply"));
    CHECK_THROWS_WITH(with({"--flavour", "trl"}), doctest::Contains("flavour trl needs a mode"));
    // verl's options and a mode do not mix; flavours run on whole batches only.
    correction_options o = with({"--mode", "trl:token_mask"});
    o.is = logratio::is_options{};
    CHECK_THROWS_WITH(o.validate(), doctest::Contains("leave is, rejection and veto empty"));
    o.is.reset();
    const std::vector<float> t{-1.0f, -2.0f}, r{-1.1f, -1.9f};
    const std::vector<std::uint8_t> mk{1, 1};
    const auto v = logratio::paired_view<float>::padded(t.data(), r.data(), mk.data(), 1, 2);
    std::vector<float> w(2);
    std::vector<std::uint8_t> keep(2);
    CHECK_THROWS_WITH(logratio::correct_range(v, 0, 1, o, w.data(), keep.data()), doctest::Contains("use correct()"));
    // A hand case: trl:token_mask, clip_max 3 -- exp(0.1) and exp(-0.1) both kept, mean their mean.
    const auto res = logratio::kernels::correct(v, o, w.data(), keep.data());
    CHECK(w[0] == doctest::Approx(std::exp(0.1)).epsilon(1e-6));
    CHECK(w[1] == doctest::Approx(std::exp(-0.1)).epsilon(1e-6));
    CHECK(keep == mk);
    const std::map<std::string, double> e = test::as_map(res);
    CHECK(e.at("sampling/importance_sampling_ratio/mean") == doctest::Approx(std::cosh(0.1)).epsilon(1e-6));
    CHECK(e.at("sampling/sampling_logp_difference/max") == doctest::Approx(0.1).epsilon(1e-6));
}
