// Every parallel path, at 1 to 4 threads: results do not depend on the thread
// count (outputs written per token are identical; the panel, its quantiles,
// the correction's metrics and the doctor's evidence bit for bit: the reductions run over blocks
// of the data, not over one part per thread).
// The `tsan` preset builds this suite with ThreadSanitizer: no data races.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/correction/correction.hpp>
#include <logratio/doctor/diagnose.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel.hpp>
#include <logratio/panel/panel_quantiles.hpp>

#include "dumps.hpp"
#include "test_util.hpp"

namespace {

struct batch {
    std::uint64_t B = 67, T = 301;
    std::vector<float> train, rollout, old;
    std::vector<std::uint8_t> mask;
    batch() : train(B * T), rollout(B * T), old(B * T), mask(B * T) {
        std::mt19937_64 g(3);
        std::student_t_distribution<double> heavy(3.0);
        std::uniform_int_distribution<std::uint64_t> len(1, T);
        for (std::uint64_t r = 0; r < B; ++r) {
            const std::uint64_t L = len(g);
            for (std::uint64_t t = 0; t < T; ++t) {
                const std::uint64_t i = r * T + t;
                rollout[i] = float(-std::fabs(heavy(g)) * 0.5);
                old[i] = float(std::min(0.0, rollout[i] + 0.01 * heavy(g)));
                train[i] = float(std::min(0.0, old[i] + 0.02 * heavy(g)));
                mask[i] = t < L;
            }
        }
    }
};

}  // namespace

TEST_CASE("threads: panel, split, correction and logits do not depend on the thread count") {
    const batch b;
    const auto v = logratio::paired_view<float>::padded(b.train.data(), b.rollout.data(), b.mask.data(), b.B, b.T);
    const auto p1 = logratio::compute_panel(v, {}, 1);
    const auto s1 = logratio::compute_mismatch_split(v, b.old.data(), {}, 1);
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::sequence, 3.0, 0.2, true);
    o.rejection = logratio::parse_rejection("token_k1,seq_mean_k3", "0.5_2,0.05");
    o.veto = 1e-3;
    std::vector<float> w1(v.size()), w(v.size());
    std::vector<std::uint8_t> k1(v.size()), k(v.size());
    const auto c1 = logratio::correct(v, o, w1.data(), k1.data(), 1);
    for (unsigned t = 2; t <= 4; ++t) {
        CAPTURE(t);
        const auto p = logratio::compute_panel(v, {}, t);
        const auto e1 = logratio::panel_entries(p1), e = logratio::panel_entries(p);
        for (std::size_t i = 0; i < e.size(); ++i)
            if (e1[i].second) CHECK_MESSAGE(test::spec_close(*e[i].second, *e1[i].second), e[i].first);
        const auto s = logratio::compute_mismatch_split(v, b.old.data(), {}, t);
        CHECK(test::spec_close(s.lag.delta_abs_mean, s1.lag.delta_abs_mean));
        CHECK(test::spec_close(s.numeric.kl_k3, s1.numeric.kl_k3));
        const auto c = logratio::correct(v, o, w.data(), k.data(), t);
        CHECK(k == k1);
        // per-token outputs are promised identical at any thread count: bit for bit
        REQUIRE(w.size() == w1.size());
        CHECK(std::memcmp(w.data(), w1.data(), w.size() * sizeof(float)) == 0);
        const auto m1 = logratio::correction_entries(c1), m = logratio::correction_entries(c);
        REQUIRE(m.size() == m1.size());
        for (std::size_t i = 0; i < m.size(); ++i) CHECK_MESSAGE(test::spec_close(m[i].second, m1[i].second), m[i].first);
    }
}

TEST_CASE("threads: logits rows and dump directories") {
    const std::uint64_t N = 9, V = 4099;
    std::vector<float> z(N * V), y(N * V);
    std::vector<std::int32_t> tok(N);
    std::mt19937_64 g(5);
    std::normal_distribution<float> n(0.0f, 2.0f), s(0.0f, 0.05f);
    for (std::uint64_t i = 0; i < N * V; ++i) {
        z[i] = n(g);
        y[i] = z[i] + s(g);
    }
    for (std::uint64_t i = 0; i < N; ++i) tok[i] = std::int32_t((i * 131) % V);
    const logratio::logits_view<float> zv(z.data(), N, V), yv(y.data(), N, V);
    std::vector<logratio::logits_row> r1(N), r3(N);
    logratio::compare_logits(zv, yv, tok.data(), r1.data(), {}, 1);
    logratio::compare_logits(zv, yv, tok.data(), r3.data(), {}, 3);
    // rows are independent: every per-row output bit-identical at 1 and 3 threads
    auto bits = [](double x) {
        std::uint64_t u;
        std::memcpy(&u, &x, sizeof u);
        return u;
    };
    for (std::uint64_t i = 0; i < N; ++i) {
        CAPTURE(i);
        const logratio::logits_row &p = r1[i], &q = r3[i];
        for (auto f : {&logratio::logits_row::train_entropy, &logratio::logits_row::rollout_entropy,
                       &logratio::logits_row::kl_train_rollout, &logratio::logits_row::kl_rollout_train,
                       &logratio::logits_row::tv, &logratio::logits_row::train_logprob,
                       &logratio::logits_row::rollout_logprob, &logratio::logits_row::sampled_prob_gap})
            CHECK(bits(p.*f) == bits(q.*f));
        CHECK(p.argmax_match == q.argmax_match);
        CHECK(p.train_argmax == q.train_argmax);
        CHECK(p.rollout_argmax == q.rollout_argmax);
    }
    // the bundled experiment's dumps, one file at a time or three
    const std::string dir = std::string(LOGRATIO_TEST_DATA) + "/../../examples/data/runs";
    const auto a = logratio_cli::panels_of_directory(dir, "", {}, 1);
    const auto c = logratio_cli::panels_of_directory(dir, "", {}, 3);
    REQUIRE(a.size() == c.size());
    REQUIRE(a.size() == 240);
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].path == c[i].path);
        CHECK(a[i].panel.delta_abs_mean == c[i].panel.delta_abs_mean);
        // async dumps carry old_logprobs (the numeric-vs-lag split), sync ones do not
        CHECK(a[i].split.has_value() == (a[i].path.find("/async/") != std::string::npos));
    }
}

TEST_CASE("threads: more than one block (2^20 tokens each): bit-identical results at 1 to 4 threads") {
    // 1,100 rows of 2,048: three blocks of the threaded reductions
    // (detail/parallel.hpp), so the threads get different runs of blocks.
    const std::uint64_t B = 1100, T = 2048;
    std::vector<float> train(B * T), rollout(B * T);
    std::vector<std::uint8_t> mask(B * T);
    std::mt19937_64 g(11);
    std::student_t_distribution<double> heavy(3.0);
    for (std::size_t i = 0; i < train.size(); ++i) {
        rollout[i] = float(-std::fabs(heavy(g)) * 0.5);
        train[i] = float(std::min(0.0, rollout[i] + 0.02 * heavy(g)));
        mask[i] = (i * 2654435761u) % 10 < 8;
    }
    const auto v = logratio::paired_view<float>::padded(train.data(), rollout.data(), mask.data(), B, T);
    REQUIRE(logratio::detail::split_blocks(v).size() - 1 == 3);
    const auto e1 = logratio::panel_entries(logratio::compute_panel(v, {}, 1));
    const auto q1 = logratio::panel_entries(logratio::compute_panel_with_quantiles(v, {}, 1));
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 2.0, 0.5, true);
    o.rejection = logratio::parse_rejection("token_k1", "0.5_2");
    const auto c1 = logratio::correction_entries(logratio::correct(v, o, static_cast<float*>(nullptr), nullptr, 1));
    const auto bits = [](double x) {
        std::uint64_t u;
        std::memcpy(&u, &x, 8);
        return u;
    };
    const auto same = [&](const auto& a, const auto& b) {
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CAPTURE(a[i].first);
            CHECK(a[i].first == b[i].first);
            CHECK(bool(a[i].second) == bool(b[i].second));
            if (a[i].second && b[i].second) CHECK(bits(*a[i].second) == bits(*b[i].second));
        }
    };
    const auto evidence = [&](unsigned t) {
        logratio::doctor::diagnose_options d;
        d.threads = t;
        std::vector<std::pair<std::string, std::uint64_t>> out;
        for (const auto& f : logratio::doctor::diagnose(v, d).findings)
            for (const auto& e : f.evidence) out.emplace_back(f.check + "." + e.key + e.text, bits(e.value));
        return out;
    };
    const auto d1 = evidence(1);
    REQUIRE(d1.size() > 10);
    for (unsigned t = 2; t <= 4; ++t) {
        CAPTURE(t);
        CHECK(evidence(t) == d1);
        same(logratio::panel_entries(logratio::compute_panel(v, {}, t)), e1);
        same(logratio::panel_entries(logratio::compute_panel_with_quantiles(v, {}, t)), q1);
        const auto c = logratio::correction_entries(logratio::correct(v, o, static_cast<float*>(nullptr), nullptr, t));
        REQUIRE(c.size() == c1.size());
        for (std::size_t i = 0; i < c.size(); ++i) CHECK_MESSAGE(bits(c[i].second) == bits(c1[i].second), c[i].first);
    }
}
