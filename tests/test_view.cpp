// Views: construction from pointers, containers and xtensor; shape and
// offset validation at construction.
#include "test_util.hpp"

#include <array>

#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include <logratio/adapt/xtensor.hpp>
#include <logratio/core/visit.hpp>

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

TEST_CASE("visit_view: the one run-time dispatch gives the typed view the description names") {
    std::vector<float> t{-1.0f, -2.0f, -0.5f, -3.0f, -1.5f, -0.25f};
    std::vector<float> r{-1.1f, -2.0f, -0.5f, -2.5f, -1.5f, -0.5f};
    std::vector<std::uint8_t> m{1, 1, 0, 1, 1, 1};
    std::vector<float> mf{1, 1, 0, 1, 1, 1};
    const auto direct = logratio::compute_panel(logratio::padded(t, r, m, 2, 3));
    logratio::view_description d;
    d.train = t.data();
    d.rollout = r.data();
    d.mask = logratio::mask_type::bytes;
    d.mask_data = m.data();
    d.rows = 2;
    d.cols = 3;
    auto panel_of = [](const auto& v) { return logratio::compute_panel(v); };
    CHECK(logratio::visit_view(d, panel_of).delta_mean == direct.delta_mean);
    const bool byte_mask = logratio::visit_view(d, [](const auto& v) {
        return std::is_same<typename std::decay_t<decltype(v)>::mask_type, std::uint8_t>::value &&
               std::is_same<typename std::decay_t<decltype(v)>::value_type, float>::value;
    });
    CHECK(byte_mask);
    d.mask = logratio::mask_type::f32;  // the same mask as floats
    d.mask_data = mf.data();
    CHECK(logratio::visit_view(d, panel_of).delta_mean == direct.delta_mean);
    d.mask = logratio::mask_type::none;  // every token counts
    d.mask_data = nullptr;
    CHECK(logratio::visit_view(d, panel_of).tokens == 6);
    // packed, int32 offsets: the same six tokens as two sequences of 3
    const std::int32_t cu[] = {0, 3, 6};
    d.packed = true;
    d.tokens = 6;
    d.offsets = cu;
    d.offsets64 = false;
    d.num_offsets = 3;
    d.mask = logratio::mask_type::bytes;
    d.mask_data = m.data();
    CHECK(logratio::visit_view(d, panel_of).delta_mean == direct.delta_mean);
    // double values
    std::vector<double> td(t.begin(), t.end()), rd(r.begin(), r.end());
    d.values = logratio::value_type::f64;
    d.train = td.data();
    d.rollout = rd.data();
    CHECK(logratio::visit_view(d, panel_of).delta_mean == doctest::Approx(direct.delta_mean));
    const bool is_double = logratio::visit_value_type(logratio::value_type::f64, [](auto tag) {
        return std::is_same<decltype(tag), double>::value;
    });
    CHECK(is_double);
    d.num_offsets = 2;  // the last offset no longer covers the tokens: the view's own check
    CHECK_THROWS_AS(logratio::visit_view(d, panel_of), logratio::shape_error);
}

TEST_CASE("a one-byte mask is binary: the 8-byte word test finds a bad byte at every position") {
    // bytes_are_binary ORs whole words and then the tail: a bad byte in the
    // first, last or middle byte of a word and in the tail must all be found,
    // and the error must still name the first bad position.
    const std::uint64_t n = 19;
    std::vector<float> t(n, -1.0f), r(n, -1.0f);
    CHECK(logratio::detail::bytes_are_binary(std::vector<std::uint8_t>(n, 1).data(), n));
    CHECK(logratio::detail::bytes_are_binary(nullptr, 0));
    for (std::uint64_t at : {0u, 7u, 8u, 15u, 16u, 18u})
        for (int bad : {2, 255, 128}) {
            CAPTURE(at);
            CAPTURE(bad);
            std::vector<std::uint8_t> m(n, 1);
            m[at] = std::uint8_t(bad);
            CHECK_FALSE(logratio::detail::bytes_are_binary(m.data(), n));
            try {
                (void)logratio::paired_view<float>::padded(t.data(), r.data(), m.data(), 1, n);
                FAIL("no error for a mask byte of " << bad);
            } catch (const logratio::value_error& e) {
                CHECK(std::string(e.what()).find("column " + std::to_string(at) + " ") != std::string::npos);
            }
        }
}
