// The importance-sampling correction (correction.hpp).
//
// How each expected value was obtained:
//  * tests/data/*/verl/<config>/ are verl's own outputs
//    (compute_rollout_correction_and_rejection_mask at verl commit b178a3cd,
//    float64 inputs) on padded.safetensors, copied from the shared fixtures:
//    every metric verl reports, its response mask and its weights;
//  * the small hand cases below are worked out in the comments next to them
//    from the formulas of correction_accumulator.hpp (verl's definitions);
//  * the scalar path, the padded/packed layouts, range splits + merge and
//    serialization are checked against each other.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include "commands/correction_options_from_args.hpp"
#include "npy.hpp"
#include "test_correction_util.hpp"
#include "test_data.hpp"

#include <logratio/correction/correction.hpp>
#include <logratio/dispatch/kernels.hpp>

namespace {

namespace fs = std::filesystem;
using logratio::correction_options;
using logratio::correction_result;

struct loaded {
    logratio_cli::mapped_file file;
    logratio_cli::safetensors_file st;
    explicit loaded(const std::string& p) : file(p), st(logratio_cli::parse_safetensors(file)) {}
    logratio_cli::panel_tensors tensors() const {
        return {st.find("train_logprobs"), st.find("rollout_logprobs"), st.find("mask"), st.find("cu_seqlens")};
    }
};

struct outputs {
    correction_result r;
    std::vector<float> w;
    std::vector<std::uint8_t> m;
};

/// f(view) on a float32 fixture (every fixture here is one): the other
/// element types are not instantiated, which keeps this unit's header-only
/// kernels (the scalar path, correct_range) to one view type each.
template <class F>
void on_float_view(const loaded& in, F&& f) {
    logratio_cli::with_panel_view(in.tensors(), [&](const auto& v) {
        if constexpr (std::is_same_v<typename std::decay_t<decltype(v)>::value_type, float>)
            f(v);
        else
            FAIL("the fixture's log-probs are not float32");
    });
}

template <class F>
outputs run_on(const std::string& path, F&& f) {
    loaded in(path);
    outputs o;
    on_float_view(in, [&](const auto& v) {
        o.w.assign(v.size(), -1.0f);
        o.m.assign(v.size(), 7);
        o.r = f(v, o.w.data(), o.m.data());
    });
    return o;
}

using test::as_map;

/// verl returns its fraction metrics in float32 (see the fixtures' README).
bool verl_close(const std::string& key, double got, double want) {
    const bool fraction = key.find("fraction") != std::string::npos;
    return test::spec_close(got, want, fraction ? 2e-7 : 1e-6);
}

struct npy_array {
    logratio_cli::mapped_file file;
    logratio_cli::tensor t;
    explicit npy_array(const std::string& p) : file(p), t(logratio_cli::parse_npy(file, p)) {}
};

std::vector<std::string> verl_configs(const std::string& size) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(test::data_path(size + "/verl"))) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("correction: verl's own outputs on the fixtures (metrics, mask, weights)") {
    std::size_t configs = 0;
    for (const std::string size : {"small", "medium"}) {
        for (const std::string& dir : verl_configs(size)) {
            CAPTURE(dir);
            ++configs;
            const auto args = test::load_json(dir + "/args.json");
            // the tool's own option registration and mapping (commands/correct_options.cpp)
            const correction_options o = logratio_cli::correction_options_from_args(
                args.at("logratio_correct_args").get<std::vector<std::string>>());
            const outputs got = run_on(test::data_path(size + "/padded.safetensors"),
                                       [&](const auto& v, float* w, std::uint8_t* m) {
                                           return logratio::kernels::correct(v, o, o.is ? w : nullptr, m);
                                       });
            const auto ours = as_map(got.r);
            const auto want = test::load_json(dir + "/metrics.json");
            // verl metrics not compared (args.json says which and why)
            const auto skipped = args.value("metrics_not_compared", nlohmann::json::object());
            std::size_t n = 0;
            for (auto it = want.begin(); it != want.end(); ++it) {
                std::string key = it.key();
                REQUIRE(key.rfind("rollout_corr/", 0) == 0);
                key = key.substr(std::strlen("rollout_corr/"));
                CAPTURE(key);
                if (skipped.contains(key)) continue;
                REQUIRE_MESSAGE(ours.count(key) == 1, "missing metric " << key);
                const double w = it.value().get<double>();
                CHECK_MESSAGE(verl_close(key, ours.at(key), w), key << ": " << ours.at(key) << " vs verl " << w);
                ++n;
            }
            CHECK(n >= 13);
            // The response mask is verl's, entry for entry.
            npy_array mask(dir + "/response_mask.npy");
            REQUIRE(mask.t.numel() == got.m.size());
            std::size_t mask_diff = 0;
            for (std::size_t i = 0; i < got.m.size(); ++i) mask_diff += got.m[i] != mask.t.data[i];
            CHECK(mask_diff == 0);
            // The weights are verl's float32 weights (rounded from float64) bit for
            // bit; with batch normalisation (a division by a differently summed
            // mean) within one float32 ulp.
            if (fs::exists(dir + "/rollout_is_weights.npy")) {
                REQUIRE(o.is);
                npy_array wv(dir + "/rollout_is_weights.npy");
                REQUIRE(wv.t.type == logratio_cli::dtype::f32);
                REQUIRE(wv.t.numel() == got.w.size());
                std::size_t one_ulp = 0, more = 0;
                for (std::size_t i = 0; i < got.w.size(); ++i) {
                    std::int32_t a, b;
                    std::memcpy(&a, &got.w[i], 4);
                    std::memcpy(&b, wv.t.data + 4 * i, 4);
                    const std::int64_t ulps = std::abs(std::int64_t(a) - std::int64_t(b));
                    one_ulp += ulps == 1;
                    more += ulps > 1;
                }
                CHECK(more == 0);
                if (!o.is->batch_normalize) CHECK(one_ulp == 0);
                else MESSAGE(dir << ": " << one_ulp << " of " << got.w.size() << " weights one float32 ulp from verl's");
            }
        }
    }
    CHECK(configs == 46);  // 23 option sets on 2 fixtures
}

TEST_CASE("correction: padded and packed layouts give bit-identical masks and weights; scalar path agrees") {
    for (const std::string& dir : verl_configs("medium")) {
        CAPTURE(dir);
        const auto args = test::load_json(dir + "/args.json");
        correction_options o =
            logratio_cli::correction_options_from_args(args.at("logratio_correct_args").get<std::vector<std::string>>());
        if (!o.is) o.is = logratio::is_options{logratio::is_level::geometric, 1.01, 0.995, true};
        auto simd = [&](const auto& v, float* w, std::uint8_t* m) { return logratio::kernels::correct(v, o, w, m); };
        const outputs pad = run_on(test::data_path("medium/padded.safetensors"), simd);
        const outputs pack = run_on(test::data_path("medium/packed.safetensors"), simd);
        // packed holds the masked-in tokens of the padded rows in order
        loaded in(test::data_path("medium/padded.safetensors"));
        const auto* mk = in.st.find("mask");
        std::size_t j = 0, diff = 0;
        for (std::size_t i = 0; i < pad.m.size(); ++i) {
            if (!mk->data[i]) {
                CHECK(pad.m[i] == 0);
                CHECK(pad.w[i] == 0.0f);
                continue;
            }
            REQUIRE(j < pack.m.size());
            diff += pad.m[i] != pack.m[j] || std::memcmp(&pad.w[i], &pack.w[j], 4) != 0;
            ++j;
        }
        CHECK(j == pack.m.size());
        CHECK(diff == 0);
        const auto a = as_map(pad.r), b = as_map(pack.r);
        for (const auto& e : a) {
            CAPTURE(e.first);
            CHECK(test::spec_close(b.at(e.first), e.second));
        }
        // scalar reference path
        const outputs sc = run_on(test::data_path("medium/padded.safetensors"),
                                  [&](const auto& v, float* w, std::uint8_t* m) {
                                      auto acc = logratio::correct_range_scalar(v, 0, v.num_sequences(), o, w, m);
                                      const double s = acc.weight_scale();
                                      logratio::scale_weights(w, 0, v.size(), s);
                                      return acc.finish();
                                  });
        CHECK(sc.m == pad.m);
        double worst = 0;
        for (std::size_t i = 0; i < sc.w.size(); ++i)
            worst = std::max(worst, std::fabs(double(sc.w[i]) - pad.w[i]) / std::max(1e-30, double(pad.w[i])));
        CHECK(worst <= 1.2e-7);
        const auto c = as_map(sc.r);
        for (const auto& e : a) {
            CAPTURE(e.first);
            CHECK(test::spec_close(c.at(e.first), e.second));
        }
    }
}

TEST_CASE("correction: range splits merge, through serialization, to the whole batch") {
    correction_options o;
    o.is = logratio::is_options{logratio::is_level::token, 1.5, std::nullopt, true};
    o.rejection = logratio::parse_rejection("token_k1,seq_mean_k3,seq_max_k2", "0.9_1.1,0.001,0.02");
    o.veto = 0.5;
    loaded in(test::data_path("medium/padded.safetensors"));
    on_float_view(in, [&](const auto& v) {
        std::vector<float> w1(v.size()), w2(v.size());
        std::vector<std::uint8_t> m1(v.size()), m2(v.size());
        const auto whole = logratio::correct_range(v, 0, v.num_sequences(), o, w1.data(), m1.data());
        const std::uint64_t S = v.num_sequences();
        for (std::uint64_t cut : {std::uint64_t(1), S / 3, S - 1}) {
            auto a = logratio::correct_range(v, 0, cut, o, w2.data(), m2.data());
            const auto b = logratio::correct_range(v, cut, S, o, w2.data(), m2.data());
            auto b2 = logratio::correction_accumulator::deserialize(b.serialize());
            a.merge(b2);
            CHECK(m1 == m2);
            CHECK(w1 == w2);
            const auto x = as_map(whole.finish()), y = as_map(a.finish());
            REQUIRE(x.size() == y.size());
            for (const auto& e : x) {
                CAPTURE(e.first);
                CHECK(test::spec_close(y.at(e.first), e.second));
            }
        }
        // threads: same metrics, same outputs
        std::vector<float> w3(v.size());
        std::vector<std::uint8_t> m3(v.size());
        const auto r1 = logratio::kernels::correct(v, o, w1.data(), m1.data(), 1);
        const auto r2 = logratio::kernels::correct(v, o, w3.data(), m3.data(), 2);
        CHECK(m1 == m3);
        CHECK(w1 == w3);
        const auto x = as_map(r1), y = as_map(r2);
        for (const auto& e : x) CHECK(test::spec_close(y.at(e.first), e.second));
    });
}
