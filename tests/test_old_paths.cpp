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
