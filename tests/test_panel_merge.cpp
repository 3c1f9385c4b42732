// Accumulators as values: split/merge invariance, thread-count invariance,
// permutation of sequences, serialization round trip and corrupt bytes.
#include "test_util.hpp"

namespace {
std::map<std::string, double> values(const logratio::panel& p) {
    std::map<std::string, double> out;
    for (const auto& e : logratio::panel_entries(p))
        if (e.second) out[e.first] = *e.second;
    return out;
}
}  // namespace

TEST_CASE("split/merge invariance: any split of the sequences, merged in any order") {
    const auto s = test::make_synthetic(200000, 11);
    auto v = logratio::padded(s.train, s.rollout, s.mask, 2000, 100);
    const auto whole = logratio::compute_panel(v);
    std::mt19937_64 g(12);
    for (int trial = 0; trial < 10; ++trial) {
        std::vector<std::uint64_t> cut{0, v.num_sequences()};
        for (int k = 0; k < 1 + trial * 3; ++k) cut.push_back(g() % v.num_sequences());
        std::sort(cut.begin(), cut.end());
        std::vector<logratio::panel_accumulator> parts;
        for (std::size_t k = 0; k + 1 < cut.size(); ++k) parts.push_back(logratio::accumulate_panel_range(v, cut[k], cut[k + 1]));
        std::shuffle(parts.begin(), parts.end(), g);
        logratio::panel_accumulator acc{logratio::panel_options{}};
        for (const auto& p : parts) acc.merge(p);
        const auto merged = acc.finish();
        CAPTURE(trial);
        test::check_entries(merged, values(whole), "merged", 1e-9);
        CHECK(merged.delta_abs_max_at.sequence == whole.delta_abs_max_at.sequence);
        CHECK(merged.delta_abs_max_at.position == whole.delta_abs_max_at.position);
    }
}

TEST_CASE("thread-count invariance") {
    const auto s = test::make_synthetic(300007, 21);
    std::vector<std::int64_t> cu{0};
    while (cu.back() < 300007) cu.push_back(std::min<std::int64_t>(cu.back() + 333, 300007));
    auto v = logratio::packed(s.train, s.rollout, cu, s.mask);
    const auto one = logratio::compute_panel(v);
    for (unsigned t : {2u, 3u, 4u, 8u, 64u}) {
        CAPTURE(t);
        const auto p = logratio::compute_panel(v, {}, t);
        test::check_entries(p, values(one), "threads", 1e-9);
        CHECK(p.delta_abs_max_at.sequence == one.delta_abs_max_at.sequence);
    }
}

TEST_CASE("permuting the sequences changes nothing but the location") {
    const auto s = test::make_synthetic(50 * 64, 31);
    auto v = logratio::padded(s.train, s.rollout, s.mask, 50, 64);
    std::vector<int> order(50);
    for (int i = 0; i < 50; ++i) order[i] = 49 - i;
    test::synthetic q;
    for (int r : order)
        for (int c = 0; c < 64; ++c) {
            q.train.push_back(s.train[r * 64 + c]);
            q.rollout.push_back(s.rollout[r * 64 + c]);
            q.mask.push_back(s.mask[r * 64 + c]);
        }
    const auto a = logratio::compute_panel(v);
    const auto b = logratio::compute_panel(logratio::padded(q.train, q.rollout, q.mask, 50, 64));
    test::check_entries(b, values(a), "permuted", 1e-9);
    CHECK(b.delta_abs_max_at.sequence == 49 - a.delta_abs_max_at.sequence);
}

TEST_CASE("serialize / deserialize round trip, and corrupt bytes are errors") {
    const auto s = test::make_synthetic(10000, 41);
    const auto acc = logratio::accumulate_panel(logratio::padded(s.train, s.rollout, s.mask, 100, 100));
    const auto bytes = acc.serialize();
    const auto back = logratio::panel_accumulator::deserialize(bytes);
    CHECK(back.serialize() == bytes);
    test::check_entries(back.finish(), values(acc.finish()), "round trip", 0.0);

    // every truncation is a clear error
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        CAPTURE(n);
        CHECK_THROWS_AS(logratio::panel_accumulator::deserialize(bytes.data(), n), logratio::format_error);
    }
    auto bad = bytes;
    bad[0] = 'X';
    CHECK_THROWS_WITH_AS(logratio::panel_accumulator::deserialize(bad), doctest::Contains("magic"),
                         logratio::format_error);
    bad = bytes;
    bad[4] = 9;
    CHECK_THROWS_WITH_AS(logratio::panel_accumulator::deserialize(bad), doctest::Contains("version"),
                         logratio::format_error);
    bad = bytes;
    bad.push_back(0);
    CHECK_THROWS_WITH_AS(logratio::panel_accumulator::deserialize(bad), doctest::Contains("trailing"),
                         logratio::format_error);
    bad = bytes;
    bad[8] ^= 0x40;  // token count no longer matches the moments' counts
    CHECK_THROWS_AS(logratio::panel_accumulator::deserialize(bad), logratio::format_error);
    CHECK_THROWS_AS(logratio::panel_accumulator::deserialize(nullptr, 10), logratio::format_error);
}

TEST_CASE("merging accumulators with different thresholds is an error") {
    logratio::panel_options a, b;
    b.abs_delta_thresholds = {0.5};
    logratio::panel_accumulator x(a), y(b);
    CHECK_THROWS_AS(x.merge(y), logratio::argument_error);
    b.abs_delta_thresholds = std::vector<double>(9, 0.1);
    CHECK_THROWS_AS(logratio::panel_accumulator{b}, logratio::argument_error);
    b.abs_delta_thresholds = {-1.0};
    CHECK_THROWS_AS(logratio::panel_accumulator{b}, logratio::argument_error);
}

TEST_CASE("bad values: NaN, Inf and positive log-probs name the tensor, row and column") {
    std::vector<float> t(40, -1.0f), r(40, -1.25f);
    std::vector<std::uint8_t> m(40, 1);
    m[13] = 0;
    t[13] = std::nanf("");  // masked out: ignored
    auto run = [&] { return logratio::compute_panel(logratio::padded(t, r, m, 4, 10)); };
    CHECK_NOTHROW(run());
    r[27] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH_AS(run(), "rollout_logprobs: non-finite log-prob nan at row 2, column 7 (flat index 27)",
                         logratio::value_error);
    r[27] = -1.0f;
    t[5] = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(run(), doctest::Contains("train_logprobs: non-finite log-prob inf at row 0, column 5"),
                         logratio::value_error);
    t[5] = -std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(run(), doctest::Contains("non-finite log-prob -inf at row 0, column 5"),
                         logratio::value_error);
    t[5] = 0.5f;
    CHECK_THROWS_WITH_AS(run(), doctest::Contains("train_logprobs: positive log-prob 0.5"), logratio::value_error);
    t[5] = 5e-7f;  // within the tolerance
    CHECK_NOTHROW(run());
    bool thrown = false;
    try {
        t[5] = 0.5f;
        run();
    } catch (const logratio::value_error& e) {
        thrown = true;
        CHECK(e.tensor() == "train_logprobs");
        CHECK(e.sequence() == 0);
        CHECK(e.position() == 5);
    }
    CHECK_MESSAGE(thrown, "a positive log-prob was accepted");
}

TEST_CASE("nonfinite policy omit: counted, left out, same panel as without them") {
    std::vector<double> t(30, -1.0), r(30, -1.5);
    std::vector<std::uint8_t> m(30, 1);
    for (int i = 0; i < 30; ++i) t[i] = -1.0 - 0.01 * i;
    t[3] = std::numeric_limits<double>::quiet_NaN();
    r[17] = -std::numeric_limits<double>::infinity();
    logratio::panel_options o;
    o.nonfinite = logratio::nonfinite_policy::omit;
    const auto p = logratio::compute_panel(logratio::padded(t, r, m, 3, 10), o);
    CHECK(p.nonfinite_tokens == 2);
    CHECK(p.tokens == 28);
    auto m2 = m;
    m2[3] = m2[17] = 0;
    const auto q = logratio::compute_panel(logratio::padded(t, r, m2, 3, 10));
    test::check_entries(p, values(q), "omit", 0.0);
    // positive log-probs stay errors under omit
    t[4] = 1.0;
    CHECK_THROWS_AS(logratio::compute_panel(logratio::padded(t, r, m, 3, 10), o), logratio::value_error);
}

TEST_CASE("packed layout errors name the sequence and position") {
    std::vector<float> t(10, -1.0f), r(10, -1.0f);
    std::vector<std::int64_t> cu{0, 4, 10};
    r[6] = 2.0f;
    CHECK_THROWS_WITH_AS(logratio::compute_panel(logratio::packed(t, r, cu)),
                         doctest::Contains("rollout_logprobs: positive log-prob 2 (> 1e-06) at sequence 1, position 2"),
                         logratio::value_error);
}
