// The include paths of the last release still work: each top-level header
// forwards to its component folder (include/logratio/<component>/).
#include <logratio/correction.hpp>
#include <logratio/correction_accumulator.hpp>
#include <logratio/correction_options.hpp>
#include <logratio/dtype.hpp>
#include <logratio/error.hpp>
#include <logratio/flavour.hpp>
#include <logratio/flavour_options.hpp>
#include <logratio/is_level.hpp>
#include <logratio/kll_sketch.hpp>
#include <logratio/logits.hpp>
#include <logratio/mismatch_split.hpp>
#include <logratio/moments.hpp>
#include <logratio/panel.hpp>
#include <logratio/panel_accumulator.hpp>
#include <logratio/panel_stream.hpp>
#include <logratio/quantiles.hpp>
#include <logratio/runs.hpp>
#include <logratio/version.hpp>
#include <logratio/view.hpp>

#include <doctest/doctest.h>

TEST_CASE("the old include paths forward to the component folders") {
    std::vector<float> t{-1.0f, -2.0f}, r{-1.5f, -2.0f};
    std::vector<std::uint8_t> m{1, 1};
    const auto p = logratio::compute_panel(logratio::padded(t, r, m, 1, 2));
    CHECK(p.tokens == 2);
    CHECK(p.delta_mean == doctest::Approx(0.25));
}

// The function names of the last release still work (deprecated for one
// release) and give the same numbers as the new names.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("the old function names forward to the new ones") {
    std::vector<float> t{-1.0f, -2.0f}, r{-1.5f, -2.0f}, old{-1.2f, -2.1f};
    std::vector<std::uint8_t> m{1, 1};
    const auto v = logratio::padded(t, r, m, 1, 2);
    const auto a = logratio::split_mismatch(v, old.data());
    const auto b = logratio::compute_mismatch_split(v, old.data());
    CHECK(a.tokens == b.tokens);
    CHECK(a.numeric.delta_mean == b.numeric.delta_mean);
    CHECK(a.lag.kl_k3 == b.lag.kl_k3);

    std::vector<float> z{0.5f, -1.0f, 2.0f, 0.25f}, y{0.4f, -1.1f, 2.2f, 0.0f};
    const std::int64_t tok[2] = {1, 0};
    const logratio::logits_view<float> zv(z.data(), 2, 2), yv(y.data(), 2, 2);
    logratio::logits_row x[2], w[2], xs[2], ws[2];
    logratio::compute_logits(zv, yv, tok, x);
    logratio::compare_logits(zv, yv, tok, w);
    logratio::compute_logits_scalar(zv, yv, tok, xs);
    logratio::compare_logits_scalar(zv, yv, tok, ws);
    for (int i = 0; i < 2; ++i) {
        CHECK(x[i].kl_train_rollout == w[i].kl_train_rollout);
        CHECK(xs[i].tv == ws[i].tv);
    }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
