// C++20: views from std::span (this file is compiled with -std=c++20).
#include "test_util.hpp"

#include <span>

static_assert(__cplusplus >= 202002L, "compile this test as C++20");

TEST_CASE("views from std::span") {
    const auto s = test::make_synthetic(4 * 25, 3);
    std::span<const double> t(s.train), r(s.rollout);
    std::span<const std::uint8_t> m(s.mask);
    const auto a = logratio::compute_panel(logratio::padded(t, r, m, 4, 25));
    const auto b = logratio::compute_panel(logratio::padded(s.train, s.rollout, s.mask, 4, 25));
    CHECK(a.delta_mean == b.delta_mean);
    std::vector<std::int64_t> cu{0, 50, 100};
    const auto c = logratio::compute_panel(logratio::packed(t, r, std::span<const std::int64_t>(cu), m));
    CHECK(c.tokens == b.tokens);
}
