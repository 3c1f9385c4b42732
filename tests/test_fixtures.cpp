// Every fixture of tests/data (copied from the shared fixtures: a real bf16
// vs float32 numerical mismatch): all SPEC keys, quantiles included, within
// SPEC's tolerance of the float64 reference in expected.json.
#include "test_data.hpp"

#include <logratio/dispatch/kernels.hpp>
#include <logratio/quantiles/quantiles.hpp>

namespace {

struct fixture_run {
    logratio::panel simd, scalar;
    std::map<std::string, double> naive;
};

fixture_run run_fixture(const std::string& path) {
    logratio_cli::mapped_file f(path);
    const auto st = logratio_cli::parse_safetensors(f);
    logratio_cli::panel_tensors in{st.find("train_logprobs"), st.find("rollout_logprobs"), st.find("mask"),
                                   st.find("cu_seqlens")};
    fixture_run r;
    logratio_cli::with_panel_view(in, [&](const auto& v) {
        r.simd = logratio::kernels::compute_panel(v);
        logratio::kernels::add_panel_quantiles(r.simd, v);
        r.scalar = logratio::accumulate_panel_scalar(v).finish();
        r.naive = test::reference_panel(v);
    });
    return r;
}

std::map<std::string, double> expected(const std::string& size, const std::string& kind) {
    const auto j = test::load_json(test::data_path(size + "/expected.json"));
    std::map<std::string, double> out;
    for (auto it = j.at(kind).begin(); it != j.at(kind).end(); ++it) out[it.key()] = it.value().get<double>();
    return out;
}

}  // namespace

TEST_CASE("fixtures: every SPEC key matches expected.json") {
    for (const std::string size : {"small", "medium"}) {
        for (const std::string kind : {"padded", "packed", "bf16"}) {
            const std::string label = size + "/" + kind;
            CAPTURE(label);
            const auto want = expected(size, kind);
            REQUIRE(want.size() >= 40);
            const auto r = run_fixture(test::data_path(label + ".safetensors"));
            // The JSON keys are exactly SPEC's (and exactly the fixture's).
            std::size_t n_entries = 0;
            for (const auto& e : logratio::panel_entries(r.simd)) {
                CHECK_MESSAGE(want.count(e.first) == 1, "unexpected key " << e.first);
                ++n_entries;
            }
            CHECK(n_entries == want.size());
            test::check_entries(r.simd, want, label + " simd");
            // The scalar reference path and the naive reference agree too.
            auto want_no_q = want;
            for (auto it = want_no_q.begin(); it != want_no_q.end();)
                it = it->first.find("_q") != std::string::npos ? want_no_q.erase(it) : std::next(it);
            test::check_entries(r.scalar, want_no_q, label + " scalar");
            for (const auto& w : want_no_q) {
                CAPTURE(w.first);
                CHECK(test::spec_close(r.naive.at(w.first), w.second));
            }
        }
    }
}

TEST_CASE("fixtures: padded and packed layouts of the same tokens agree, and locate the same max") {
    const auto a = run_fixture(test::data_path("medium/padded.safetensors"));
    const auto b = run_fixture(test::data_path("medium/packed.safetensors"));
    CHECK(a.simd.tokens == b.simd.tokens);
    CHECK(a.simd.delta_abs_max == b.simd.delta_abs_max);
    CHECK(a.simd.delta_abs_max_at.sequence == b.simd.delta_abs_max_at.sequence);
    CHECK(a.simd.delta_abs_max_at.position == b.simd.delta_abs_max_at.position);
}
