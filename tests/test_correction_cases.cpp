// The importance-sampling correction (correction.hpp) on small cases whose
// values are worked out by hand in the comments next to them (the formulas of
// correction_accumulator.hpp, verl's definitions), its option and input
// errors, and the token-level short cut against the scalar reference path.
// The kernels run through logratio::kernels (every SIMD level in ctest's
// per-level runs); the fixtures from verl are test_correction.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_correction_util.hpp"
#include "test_util.hpp"

#include <logratio/correction/correction.hpp>
#include <logratio/dispatch/kernels.hpp>

using logratio::correction_options;
using logratio::correction_result;
using test::as_map;

namespace {
// Two sequences, padded [2, 4]:
//   row 0: delta = ln 2, 0, -ln 2, (pad)      row 1: delta = ln 4, (pad x3)
// via l_E = -1 and l_T = -1 + delta.
struct tiny {
    std::vector<double> t, r;
    std::vector<std::uint8_t> m{1, 1, 1, 0, 1, 0, 0, 0};
    tiny() {
        const double d[8] = {std::log(2.0), 0.0, -std::log(2.0), 0.0, std::log(4.0), 0.0, 0.0, 0.0};
        for (double x : d) {
            r.push_back(-3.0);
            t.push_back(-3.0 + x);
        }
    }
    auto view() const { return logratio::padded(t, r, m, 2, 4); }
};
/// Hand-computed values, held tighter than doctest's default (~1.2e-5):
/// metrics (double) to 1e-12, weights (float32) to one float32 rounding.
doctest::Approx exact(double v) { return doctest::Approx(v).epsilon(1e-12); }
doctest::Approx exact_f(double v) { return doctest::Approx(v).epsilon(1.2e-7); }
double metric(const correction_result& r, const std::string& k) {
    for (const auto& e : logratio::correction_entries(r))
        if (e.first == k) return e.second;
    FAIL("no metric " << k);
    return 0;
}
}  // namespace

TEST_CASE("correction: hand-computed token TIS") {
    tiny x;
    correction_options o;
    o.is = logratio::is_options{logratio::is_level::token, 3.0};
    std::vector<float> w(8);
    std::vector<std::uint8_t> m(8);
    const auto r = logratio::kernels::correct(x.view(), o, w.data(), m.data());
    // rho = 2, 1, 0.5 | 4 -> truncated at 3; padding 0
    CHECK(w == std::vector<float>{2, 1, 0.5f, 0, 3, 0, 0, 0});
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 1, 0, 0, 0});
    CHECK(metric(r, "rollout_is_mean") == exact(7.5 / 4));  // before truncation
    CHECK(metric(r, "rollout_is_max") == exact(4));
    CHECK(metric(r, "rollout_is_min") == exact(0.5));
    CHECK(metric(r, "rollout_is_ratio_fraction_high") == exact(0.25));  // 4 > 3
    CHECK(metric(r, "rollout_is_ratio_fraction_low") == exact(0.0));    // none < 1/3
    // std and ESS on w' = clamp(w, 1/3, 3) = 2, 1, 0.5, 3: mean 1.625, E[w'^2] = 14.25/4
    const double m1 = 1.625, m2 = 14.25 / 4;
    CHECK(metric(r, "rollout_is_std") == exact(std::sqrt(m2 - m1 * m1)));
    CHECK(metric(r, "rollout_is_eff_sample_size") == exact(m1 * m1 / m2));
    // per-sequence means of w: 3.5/3 and 4
    CHECK(metric(r, "rollout_is_seq_mean") == exact((3.5 / 3 + 4) / 2));
    CHECK(metric(r, "rollout_is_seq_max") == exact(4));
    CHECK(metric(r, "rollout_is_seq_min") == exact(3.5 / 3));
    CHECK(metric(r, "rollout_is_seq_std") == exact(std::sqrt(2.0) / 2 * (4 - 3.5 / 3)));
    CHECK(metric(r, "rollout_is_seq_max_deviation") == exact(3));
    CHECK(metric(r, "rollout_is_seq_fraction_high") == exact(0.5));
    CHECK(metric(r, "rollout_is_post_max") == exact(3));
    CHECK(metric(r, "rollout_is_post_mean") == exact(6.5 / 4));
    CHECK(metric(r, "rollout_is_changed_fraction") == exact(0.25));
    // off-policy: kl = -sum delta / N = -ln 4 / 4
    CHECK(metric(r, "kl") == exact(-std::log(4.0) / 4));
    // chi2_token = E[rho^2] - 1 = (4 + 1 + 0.25 + 16) / 4 - 1
    CHECK(metric(r, "chi2_token") == exact(21.25 / 4 - 1));
    // chi2_seq: sequence sums 0 and ln 4 -> (1 + 16) / 2 - 1
    CHECK(metric(r, "chi2_seq") == exact(7.5));
    // k3_kl = mean(rho - 1 - delta)
    const double k3 = ((1 - std::log(2.0)) + 0 + (-0.5 + std::log(2.0)) + (3 - std::log(4.0))) / 4;
    CHECK(metric(r, "k3_kl") == exact(k3));
    // ppl: per-sequence mean l_T = -3 + 0 and -3 + ln 4; l_E = -3
    CHECK(metric(r, "training_log_ppl") == exact((3 + 3 - std::log(4.0)) / 2));
    CHECK(metric(r, "rollout_ppl") == exact(std::exp(3.0)));
    CHECK(metric(r, "log_ppl_diff") == exact(-std::log(4.0) / 2));
    CHECK(metric(r, "log_ppl_diff_min") == exact(-std::log(4.0)));
    CHECK(metric(r, "ppl_ratio") == exact((1 + 0.25) / 2));
}

TEST_CASE("correction: hand-computed sequence and geometric IS, lower truncation, batch normalisation") {
    tiny x;
    std::vector<float> w(8);
    std::vector<std::uint8_t> m(8);
    correction_options o;
    // sequence: w_0 = exp(0) = 1, w_1 = 4 -> truncated to 2
    o.is = logratio::is_options{logratio::is_level::sequence, 2.0};
    auto r = logratio::kernels::correct(x.view(), o, w.data(), m.data());
    CHECK(w == std::vector<float>{1, 1, 1, 0, 2, 0, 0, 0});
    CHECK(metric(r, "rollout_is_mean") == exact(7.0 / 4));  // token-weighted
    CHECK(metric(r, "rollout_is_max") == exact(4));
    CHECK(metric(r, "rollout_is_ratio_fraction_high") == exact(0.5));  // sequences
    CHECK(metric(r, "rollout_is_seq_mean") == exact(2.5));
    // geometric: lr = 0 and ln 4 (one token) -> same weights; batch normalised by the
    // sequence mean of truncated weights (1 + 2) / 2
    o.is = logratio::is_options{logratio::is_level::geometric, 2.0, std::nullopt, true};
    r = logratio::kernels::correct(x.view(), o, w.data(), m.data());
    CHECK(metric(r, "rollout_is_batch_norm_factor") == exact(1.5));
    CHECK(w[0] == exact_f(1 / 1.5));
    CHECK(w[4] == exact_f(2 / 1.5));
    // token level with lower truncation c_low = 0.8 and C = 3: 0.5 -> 0.8;
    // token batch-norm mean (2 + 1 + 0.8 + 3) / 4
    o.is = logratio::is_options{logratio::is_level::token, 3.0, 0.8, true};
    r = logratio::kernels::correct(x.view(), o, w.data(), m.data());
    const double f = 6.8 / 4;
    CHECK(metric(r, "rollout_is_batch_norm_factor") == exact(f));
    CHECK(w[2] == exact_f(0.8 / f));
    CHECK(metric(r, "rollout_is_post_mean") == exact(1.0));
    CHECK(metric(r, "rollout_is_ratio_fraction_low") == exact(0.25));  // 0.5 < c_low
}

TEST_CASE("correction: hand-computed rejection options, chains, aliases and veto") {
    tiny x;
    std::vector<std::uint8_t> m(8);
    auto run = [&](const std::string& rs, const std::string& thr, std::optional<double> veto = std::nullopt,
                   std::optional<double> alias_lower = std::nullopt) {
        correction_options o;
        o.rejection = logratio::parse_rejection(rs, thr, alias_lower);
        o.veto = veto;
        return logratio::kernels::correct(x.view(), o, static_cast<float*>(nullptr), m.data());
    };
    // token_k1 with [1/1.5, 1.5]: k1 = -delta = -ln2, 0, ln2 | -ln4: only the middle token passes
    auto r = run("token_k1", "1.5");
    CHECK(m == std::vector<std::uint8_t>{0, 1, 0, 0, 0, 0, 0, 0});
    CHECK(metric(r, "rollout_rs_token_k1_masked_fraction") == exact(0.75));
    CHECK(metric(r, "rollout_rs_token_k1_seq_masked_fraction") == exact(1.0));
    CHECK(metric(r, "rollout_rs_token_k1_fraction_high") == exact(0.25));  // ln2 > ln1.5
    CHECK(metric(r, "rollout_rs_token_k1_fraction_low") == exact(0.5));
    CHECK(metric(r, "rollout_rs_token_k1_mean") == exact(-std::log(4.0) / 4));
    CHECK(metric(r, "rollout_rs_token_k1_min") == exact(-std::log(4.0)));
    CHECK(metric(r, "rollout_rs_token_k1_seq_mean") == exact(-std::log(4.0) / 2));  // 0 and -ln4
    // IcePop band "0.3_2.5" on mu/pi: keeps k1 in [ln .3, ln 2.5] -> rejects only -ln 4
    r = run("token_k1", "0.3_2.5");
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    // alias `token` bounds pi/mu to [0.3, 2.5] (lower given): rejects rho = 4 as well
    r = run("token", "2.5", std::nullopt, 0.3);
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    // alias `token` 2.5 / lower 0.6: pi/mu = 0.5 < 0.6 is rejected too
    r = run("token", "2.5", std::nullopt, 0.6);
    CHECK(m == std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0, 0, 0});
    // seq_sum_k1 with [1/2, 2]: sums 0 and -ln4 -> second sequence out
    r = run("seq_sum_k1", "2");
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    CHECK(metric(r, "rollout_rs_seq_sum_k1_masked_fraction") == exact(0.25));
    CHECK(metric(r, "rollout_rs_seq_sum_k1_seq_masked_fraction") == exact(0.5));
    CHECK(metric(r, "rollout_rs_seq_sum_k1_mean") == exact(-std::log(4.0) / 4));  // token-weighted
    // seq_max_k2: max dc^2/2 = ln2^2/2 = 0.24 and ln4^2/2 = 0.96; threshold 0.5
    r = run("seq_max_k2", "0.5");
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    CHECK(metric(r, "rollout_rs_seq_max_k2_max") == exact(0.5 * std::log(4.0) * std::log(4.0)));
    // seq_mean_k3: mean of rho - 1 - delta: (1 - ln2 + 0 - 0.5 + ln2) / 3 = 1/6 and 3 - ln4 = 1.61
    r = run("seq_mean_k3", "0.2");
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    CHECK(metric(r, "rollout_rs_seq_mean_k3_seq_min") == exact(1.0 / 6));
    // chain: token_k2 (dc^2/2 <= 0.3 keeps row 0) AND seq_sum_k3 <= 1 (row 1 out)
    r = run("token_k2,seq_sum_k3", "0.3,1");
    CHECK(m == std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0, 0});
    CHECK(metric(r, "rollout_rs_masked_fraction") == exact(0.25));
    CHECK(metric(r, "rollout_rs_seq_masked_fraction") == exact(0.5));
    // veto 0.6: rho = 0.5 < 0.6 in row 0 -> whole row 0 rejected
    r = run("token_k3", "100", 0.6);
    CHECK(m == std::vector<std::uint8_t>{0, 0, 0, 0, 1, 0, 0, 0});
    CHECK(metric(r, "rollout_is_veto_fraction") == exact(0.5));
    CHECK(metric(r, "rollout_is_catastrophic_token_fraction") == exact(0.25));
    CHECK(metric(r, "rollout_rs_masked_fraction") == exact(0.0));  // the veto is not RS
}

TEST_CASE("correction: invalid options and inputs get clear errors") {
    using logratio::parse_rejection;
    CHECK_THROWS_WITH_AS(parse_rejection("token_k4", "1"), doctest::Contains("unknown rejection option 'token_k4'"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("seq_max_k1", "1"), doctest::Contains("unknown rejection option"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token_k1", "1.1_0.9"), doctest::Contains("above the upper"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token_k2", "0.1_0.2"), doctest::Contains("single upper bound"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token_k2,token_k3", "1,2,3"), doctest::Contains("3 given for 2"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token_k2", "-1"), doctest::Contains("must be positive"), logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token_k2", "abc"), doctest::Contains("invalid numeric threshold"),
                         logratio::argument_error);
    CHECK_THROWS_WITH_AS(parse_rejection("token,token_k1", "2"), doctest::Contains("are the same option"),
                         logratio::argument_error);
    CHECK(parse_rejection("token_k2,token_k2", "1").size() == 1);  // duplicates dropped, as verl
    CHECK_THROWS_WITH_AS(logratio::parse_is_level("tokens"), doctest::Contains("unknown IS level"), logratio::argument_error);
    correction_options o;
    o.is = logratio::is_options{logratio::is_level::token, 0.0};
    CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("must be a positive"), logratio::argument_error);
    o.is = logratio::is_options{logratio::is_level::token, 2.0, 3.0};
    CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("above the upper threshold"), logratio::argument_error);
    o.is = logratio::is_options{};
    o.veto = -1;
    CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("veto threshold"), logratio::argument_error);
    o.veto.reset();
    // positive log-prob and NaN name the tensor and position; an all-masked batch is an error
    tiny x;
    x.t[1] = 0.5;  // row 0, column 1
    std::vector<float> w(8);
    std::vector<std::uint8_t> m(8);
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(x.view(), o, w.data(), m.data()),
                         doctest::Contains("train_logprobs: positive log-prob 0.5 (> 1e-06) at row 0, column 1"),
                         logratio::value_error);
    tiny y;
    y.r[4] = std::nan("");
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(y.view(), o, w.data(), m.data()),
                         doctest::Contains("rollout_logprobs: non-finite log-prob nan at row 1, column 0"),
                         logratio::value_error);
    // the empty-input rule: no masked-in token is not an error; every metric is NaN
    tiny z;
    z.m.assign(8, 0);
    const correction_result e = logratio::kernels::correct(z.view(), o, w.data(), m.data());
    CHECK(e.tokens == 0);
    REQUIRE(e.is);
    CHECK(std::isnan(e.is->mean));
    CHECK(std::isnan(e.is->seq_std));
    CHECK(std::isnan(e.offpolicy.kl));
    CHECK(std::isnan(e.offpolicy.chi2_seq));
    for (const auto& kv : logratio::correction_entries(e, "")) {
        CAPTURE(kv.first);
        CHECK(std::isnan(kv.second));
    }
    std::vector<float> small(3);
    CHECK_THROWS_WITH_AS(logratio::correct(tiny().view(), o, small, m), doctest::Contains("rollout_is_weights: 3 elements"),
                         logratio::shape_error);
    // corrupt serialized state
    auto bytes = logratio::correct_range(tiny().view(), 0, 2, o, w.data(), m.data()).serialize();
    bytes.resize(bytes.size() - 3);
    CHECK_THROWS_AS(logratio::correction_accumulator::deserialize(bytes), logratio::format_error);
}

TEST_CASE("correction: the token-level short cut gives the full step's numbers next to every threshold") {
    // Deltas mostly small (every batch inside the interval where no
    // threshold acts: the short cut), plus tokens planted 1e-6 and 1e-11 on
    // either side of each bound of the interval, past |delta| = 20, and
    // masked-out garbage: the SIMD kernel (short cut + full step) must give
    // the scalar reference path's masks, weights and metrics.
    struct opts {
        const char* what;
        correction_options o;
    };
    std::vector<opts> sets(4);
    sets[0].what = "TIS 2 + token_k1 0.5_2 + token_k3 0.01 + veto 1e-4";
    sets[0].o.is = logratio::is_options{logratio::is_level::token, 2.0};
    sets[0].o.rejection = logratio::parse_rejection("token_k1,token_k3", "0.5_2,0.01");
    sets[0].o.veto = 1e-4;
    sets[1].what = "TIS [0.8, 1.5] + token_k2 0.02, batch normalised";
    sets[1].o.is = logratio::is_options{logratio::is_level::token, 1.5, 0.8, true};
    sets[1].o.rejection = logratio::parse_rejection("token_k2", "0.02");
    sets[2].what = "token_k1 band 0.9_1.1 only";
    sets[2].o.rejection = logratio::parse_rejection("token_k1", "0.9_1.1");
    sets[3].what = "TIS 3 + veto 0.5";
    sets[3].o.is = logratio::is_options{logratio::is_level::token, 3.0};
    sets[3].o.veto = 0.5;

    const std::size_t rows = 48, len = 203;  // odd length: every row ends in a partial batch
    for (const opts& s : sets) {
        CAPTURE(s.what);
        const auto in = logratio::detail::inside_interval(s.o);
        REQUIRE(in.lo < -0.01);  // typical deltas lie inside: the short cut runs
        REQUIRE(in.hi > 0.01);
        std::mt19937_64 g(42);
        std::normal_distribution<double> nd(0.0, 0.003);
        std::uniform_int_distribution<std::size_t> pos(0, len - 1);
        std::vector<double> t(rows * len), r(rows * len);
        std::vector<std::uint8_t> m(rows * len, 1);
        for (std::size_t i = 0; i < t.size(); ++i) {
            r[i] = -2.0 - 0.001 * static_cast<double>(i % 97);
            t[i] = r[i] + nd(g);
        }
        const double planted[] = {in.lo - 1e-6, in.lo + 1e-6, in.lo - 1e-11, in.lo + 1e-11,
                                  in.hi - 1e-6, in.hi + 1e-6, in.hi - 1e-11, in.hi + 1e-11,
                                  -25.0,        22.0};
        for (std::size_t row = 0; row < rows; row += 2) {  // odd rows stay all inside
            for (double d : planted) {
                const std::size_t i = row * len + pos(g);
                r[i] = -30.0;
                t[i] = std::min(-30.0 + d, 0.0);
            }
            const std::size_t j = row * len + pos(g);  // masked out: never read
            m[j] = 0;
            t[j] = std::numeric_limits<double>::quiet_NaN();
        }
        for (std::size_t row = 1; row < rows; row += 4) m[row * len + 5] = 0;  // masked out inside a batch
        const auto v = logratio::padded(t, r, m, rows, len);
        std::vector<float> w1(t.size()), w2(t.size());
        std::vector<std::uint8_t> m1(t.size()), m2(t.size());
        const correction_result fast = logratio::kernels::correct(v, s.o, w1.data(), m1.data());
        auto acc = logratio::correct_range_scalar(v, 0, v.num_sequences(), s.o, w2.data(), m2.data());
        logratio::scale_weights(w2.data(), 0, v.size(), acc.weight_scale());
        const correction_result ref = acc.finish();
        CHECK(m1 == m2);
        double worst = 0;
        for (std::size_t i = 0; i < w1.size(); ++i) {
            if (w2[i] == 0.0f) CHECK(w1[i] == 0.0f);
            worst = std::max(worst, std::fabs(double(w1[i]) - w2[i]) / std::max(1e-30, double(w2[i])));
        }
        CHECK(worst <= 1.2e-7);
        const auto a = as_map(fast), b = as_map(ref);
        REQUIRE(a.size() == b.size());
        for (const auto& e : b) {
            CAPTURE(e.first);
            CHECK(test::spec_close(a.at(e.first), e.second));
        }
    }
}

TEST_CASE("correction: bad input inside the short cut's interval is still named") {
    // Rows long enough for whole batches: a positive log-prob pair with a
    // small delta lies inside the interval (the short cut takes its batch),
    // a NaN does not (the full step takes it); both must name tensor, row
    // and column.
    correction_options o;
    o.is = logratio::is_options{logratio::is_level::token, 2.0};
    o.rejection = logratio::parse_rejection("token_k1,token_k3", "0.5_2,0.01");
    o.veto = 1e-4;
    const std::size_t rows = 3, len = 64;
    std::vector<double> t(rows * len, -1.0), r(rows * len, -1.001);
    std::vector<std::uint8_t> m(rows * len, 1);
    std::vector<float> w(t.size());
    std::vector<std::uint8_t> mo(t.size());
    auto bad_t = t, bad_r = r;
    bad_t[2 * len + 37] = 0.5;  // both positive, delta = 0.01: inside the interval
    bad_r[2 * len + 37] = 0.49;
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::padded(bad_t, bad_r, m, rows, len), o, w.data(), mo.data()),
                         doctest::Contains("train_logprobs: positive log-prob 0.5 (> 1e-06) at row 2, "
                                           "column 37"),
                         logratio::value_error);
    auto nan_t = t;
    nan_t[len + 40] = std::nan("");
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::padded(nan_t, r, m, rows, len), o, w.data(), mo.data()),
                         doctest::Contains("train_logprobs: non-finite log-prob nan at row 1, column 40"),
                         logratio::value_error);
}

TEST_CASE("correction: float, bool and int32 masks give the byte mask's weights, mask and metrics bit for bit") {
    // A mask is binary (0 or 1, -0.0 is 0; anything else is an error at the
    // view's construction, test_view): whatever its type, the same tokens,
    // so the same bits. Padded and packed, verl's
    // and slime's flavour (whose pass re-reads the mask), 1 and 3 threads;
    // float masks through logratio::kernels (dispatch holds byte and float
    // masks), bool and int32 ones through the scalar path.
    const std::size_t rows = 3, len = 5003;
    const std::size_t n = rows * len - 1;
    std::vector<float> t(rows * len), r(rows * len), fm(rows * len);
    std::vector<std::uint8_t> bm(rows * len);
    std::vector<std::int32_t> im(rows * len);
    std::vector<char> bools(rows * len);
    const float values[] = {0.0f, 1.0f, 1.0f, 0.0f, 1.0f, -0.0f, 1.0f, 1.0f, 0.0f, 1.0f};
    for (std::size_t i = 0; i < t.size(); ++i) {
        r[i] = -0.5f - 0.001f * static_cast<float>(i % 97);
        t[i] = r[i] + 0.02f * std::sin(static_cast<float>(i));
        fm[i] = values[(i * 7) % 10];
        bm[i] = fm[i] != 0.0f;
        im[i] = static_cast<std::int32_t>(bm[i]);
        bools[i] = static_cast<char>(bm[i]);
    }
    const bool* bp = reinterpret_cast<const bool*>(bools.data());
    const std::vector<std::int64_t> cu{0, 1000, 7000, static_cast<std::int64_t>(n)};
    using PV = logratio::paired_view<float, std::uint8_t>;
    const PV pad = PV::padded(t.data(), r.data(), bm.data(), rows, len);
    const PV pack = PV::packed(t.data(), r.data(), n, cu.data(), cu.size(), bm.data());
    for (const char* flavour : {"verl", "slime"}) {
        correction_options o;
        if (std::string(flavour) == "verl") {
            o.is = logratio::is_options{logratio::is_level::token, 2.0, std::nullopt, true};
            o.rejection = logratio::parse_rejection("token_k1,seq_max_k3", "0.99_1.01,0.01");
        } else {
            o.flavour = logratio::framework::slime;
        }
        for (unsigned threads : {1u, 3u}) {
            CAPTURE(flavour);
            CAPTURE(threads);
            std::vector<float> w0(t.size()), w1(t.size());
            std::vector<std::uint8_t> k0(t.size()), k1(t.size());
            // f(view, weights, mask) on the byte view and on the other one: the same bits
            const auto same = [&](const PV& bytes, const auto& other, auto&& f) {
                const auto a = as_map(f(bytes, w0.data(), k0.data()));
                const auto b = as_map(f(other, w1.data(), k1.data()));
                CHECK(std::memcmp(w0.data(), w1.data(), 4 * w0.size()) == 0);
                CHECK(k0 == k1);
                REQUIRE(a.size() == b.size());
                for (const auto& e : a) {
                    CAPTURE(e.first);
                    CHECK(std::memcmp(&e.second, &b.at(e.first), 8) == 0);
                }
            };
            const auto simd = [&](const auto& v, float* w, std::uint8_t* k) {
                return logratio::kernels::correct(v, o, w, k, threads);
            };
            const auto scalar = [&](const auto& v, float* w, std::uint8_t* k) {
                return logratio::correct_scalar(v, o, w, k, threads);
            };
            same(pad, logratio::paired_view<float, float>::padded(t.data(), r.data(), fm.data(), rows, len), simd);
            same(pack, logratio::paired_view<float, float>::packed(t.data(), r.data(), n, cu.data(), cu.size(), fm.data()),
                 simd);
            same(pad, logratio::paired_view<float, float>::padded(t.data(), r.data(), fm.data(), rows, len), scalar);
            same(pad, logratio::paired_view<float, bool>::padded(t.data(), r.data(), bp, rows, len), scalar);
            same(pack,
                 logratio::paired_view<float, std::int32_t>::packed(t.data(), r.data(), n, cu.data(), cu.size(), im.data()),
                 scalar);
        }
    }
}
