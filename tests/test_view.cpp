// Views: construction from pointers, containers and xtensor; shape and
// offset validation at construction.
#include "test_util.hpp"

#include <array>

#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include <logratio/adapt/xtensor.hpp>

TEST_CASE("padded view from pointer + shape, vector and xtensor agree") {
    const auto s = test::make_synthetic(6 * 50, 1);
    auto a = logratio::paired_view<double>::padded(s.train.data(), s.rollout.data(), s.mask.data(), 6, 50);
    auto b = logratio::padded(s.train, s.rollout, s.mask, 6, 50);
    const std::array<std::size_t, 2> shape{6, 50};
    auto xt_t = xt::adapt(s.train.data(), s.train.size(), xt::no_ownership(), shape);
    auto xt_r = xt::adapt(s.rollout.data(), s.rollout.size(), xt::no_ownership(), shape);
    xt::xtensor<std::uint8_t, 2> xt_m = xt::adapt(s.mask, shape);
    auto c = logratio::xt_padded(xt_t, xt_r, xt_m);
    CHECK(c.num_sequences() == 6);
    CHECK(c.cols() == 50);
    const auto pa = logratio::compute_panel(a), pb = logratio::compute_panel(b), pc = logratio::compute_panel(c);
    CHECK(pa.delta_mean == pb.delta_mean);
    CHECK(pa.delta_mean == pc.delta_mean);
    CHECK(pa.kl_k3 == pc.kl_k3);
}

TEST_CASE("packed view from xtensor, int32 offsets") {
    const auto s = test::make_synthetic(100, 2);
    xt::xtensor<double, 1> t = xt::adapt(s.train, std::array<std::size_t, 1>{100});
    xt::xtensor<double, 1> r = xt::adapt(s.rollout, std::array<std::size_t, 1>{100});
    xt::xtensor<std::int32_t, 1> cu = {0, 30, 100};
    auto v = logratio::xt_packed(t, r, cu);
    CHECK(v.num_sequences() == 2);
    CHECK(v.sequence_end(0) == 30);
    CHECK(logratio::compute_panel(v).tokens == 100);
    xt::xtensor<double, 2> wrong = xt::zeros<double>({10, 10});
    CHECK_THROWS_WITH_AS(logratio::xt_packed(wrong, wrong, cu), doctest::Contains("expected a 1-D tensor"),
                         logratio::shape_error);
}

TEST_CASE("offsets are validated at construction") {
    std::vector<float> t(10, -1.0f), r(10, -1.0f);
    using V = logratio::paired_view<float>;
    const std::int64_t not_zero[] = {1, 10};
    CHECK_THROWS_WITH_AS(V::packed(t.data(), r.data(), 10, not_zero, 2), "packed view: cu_seqlens[0] = 1, must be 0",
                         logratio::shape_error);
    const std::int32_t non_monotone[] = {0, 6, 4, 10};
    CHECK_THROWS_WITH_AS(V::packed(t.data(), r.data(), 10, non_monotone, 4),
                         "packed view: cu_seqlens is not monotone at index 2 (6 then 4)", logratio::shape_error);
    const std::int64_t short_end[] = {0, 4, 9};
    CHECK_THROWS_WITH_AS(V::packed(t.data(), r.data(), 10, short_end, 3),
                         "packed view: cu_seqlens[2] = 9 but the log-prob arrays hold 10 tokens", logratio::shape_error);
    const std::int64_t past_end[] = {0, 4, 11};
    CHECK_THROWS_AS(V::packed(t.data(), r.data(), 10, past_end, 3), logratio::shape_error);
    const std::int32_t negative[] = {0, -3, 10};
    CHECK_THROWS_AS(V::packed(t.data(), r.data(), 10, negative, 3), logratio::shape_error);
    CHECK_THROWS_AS(V::packed(t.data(), r.data(), 10, static_cast<const std::int64_t*>(nullptr), 0),
                    logratio::shape_error);
}

TEST_CASE("container sizes and shapes are validated") {
    std::vector<float> t(12, -1.0f), r(11, -1.0f);
    std::vector<std::uint8_t> m(12, 1);
    CHECK_THROWS_WITH_AS(logratio::padded(t, r, m, 3, 4), "rollout_logprobs: 11 elements, expected 12",
                         logratio::shape_error);
    CHECK_THROWS_WITH_AS(logratio::padded(t, t, m, 2, 4), "train_logprobs: 12 elements, expected 8",
                         logratio::shape_error);
    CHECK_THROWS_WITH_AS(logratio::paired_view<float>::padded(t.data(), t.data(), m.data(), 1ull << 40, 1ull << 40),
                         doctest::Contains("overflows 64 bits"), logratio::shape_error);
    CHECK_THROWS_AS(logratio::paired_view<float>::padded(nullptr, t.data(), m.data(), 3, 4), logratio::shape_error);
    // an empty view is valid, and empty
    auto e = logratio::paired_view<float>::padded(nullptr, nullptr, nullptr, 0, 0);
    CHECK(logratio::compute_panel(e).tokens == 0);
}

TEST_CASE("sequence range of accumulate_panel is checked") {
    std::vector<float> t(12, -1.0f);
    std::vector<std::uint8_t> m(12, 1);
    auto v = logratio::padded(t, t, m, 3, 4);
    CHECK_THROWS_AS(logratio::accumulate_panel_range(v, 2, 1), logratio::argument_error);
    CHECK_THROWS_AS(logratio::accumulate_panel_range(v, 0, 4), logratio::argument_error);
}
