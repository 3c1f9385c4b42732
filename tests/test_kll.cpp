// KLL sketch: the observed rank error of every returned quantile stays
// within the sketch's stated (proven, 99%) bound, for single streams and
// for merges of 2..64 sketches in different orders; serialization.
#include "sanitized.hpp"
#include "test_data.hpp"

#include <logratio/quantiles/kll_sketch.hpp>
#include <logratio/quantiles/quantiles.hpp>

namespace {

using sketch = logratio::kll_sketch<float>;
const std::vector<double> probes{0.0001, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};

// True normalized rank interval of value q in sorted data: [#<q, #<=q] / n.
double observed_error(const std::vector<float>& sorted, float q, double p) {
    const double lo = static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
    const double hi = static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
    const double n = static_cast<double>(sorted.size());
    const double target = p * n;
    if (target >= lo && target <= hi) return 0.0;
    return std::min(std::fabs(target - lo), std::fabs(target - hi)) / n;
}

// A fixed rank-error budget, independent of the sketch's own bound: every
// sketch checked here has k >= 200, whose stated 99% bounds are 0.0098-0.0128
// (capped at 0.015) and whose observed errors stay below ~0.004; every answer
// must be within 0.01. A sketch whose bound and answers drift together fails.
constexpr double fixed_eps = 0.01, bound_cap = 0.015;

void check_sketch(const sketch& s, std::vector<float> data, const std::string& what) {
    std::sort(data.begin(), data.end());
    CAPTURE(what);
    REQUIRE(s.n() == data.size());
    CHECK(s.min_value() == data.front());
    CHECK(s.max_value() == data.back());
    const double bound = s.normalized_rank_error();
    CHECK(bound > 0.0);
    CHECK(bound <= bound_cap);
    for (double p : probes) {
        CAPTURE(p);
        const double err = observed_error(data, s.quantile(p), p);
        CHECK_MESSAGE(err <= bound, "observed rank error " << err << " > bound " << bound);
        CHECK_MESSAGE(err <= fixed_eps, "observed rank error " << err << " > fixed " << fixed_eps);
        // rank(x) estimates the true fraction of values <= x within the bound too
        const float q = s.quantile(p);
        const double true_rank = static_cast<double>(std::upper_bound(data.begin(), data.end(), q) - data.begin()) /
                                 static_cast<double>(data.size());
        CHECK(std::fabs(s.rank(q) - true_rank) <= bound);
        CHECK(std::fabs(s.rank(q) - true_rank) <= fixed_eps);
    }
}

std::vector<float> draw(const std::string& dist, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<float> x(n);
    if (dist == "normal") {
        std::normal_distribution<float> d;
        for (auto& v : x) v = d(g);
    } else if (dist == "student_t2") {
        std::student_t_distribution<float> d(2.0f);
        for (auto& v : x) v = d(g);
    } else if (dist == "lognormal") {
        std::lognormal_distribution<float> d(0.0f, 2.0f);
        for (auto& v : x) v = d(g);
    } else if (dist == "ties") {
        std::uniform_int_distribution<int> d(0, 20);
        for (auto& v : x) v = static_cast<float>(d(g));
    } else {  // "sorted": adversarial order
        for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    }
    return x;
}

// Heavy-tailed delta of the medium fixture, resampled with a tiny jitter.
std::vector<float> fixture_deltas(std::size_t n) {
    logratio_cli::mapped_file f(test::data_path("medium/bf16.safetensors"));
    const auto st = logratio_cli::parse_safetensors(f);
    logratio_cli::panel_tensors in{st.find("train_logprobs"), st.find("rollout_logprobs"), st.find("mask"), nullptr};
    std::vector<float> base;
    logratio_cli::with_panel_view(in, [&](const auto& v) {
        logratio::quantile_workspace ws;
        logratio::gather_quantity(v, logratio::quantile_of::delta, {}, ws);
        base.assign(ws.values.begin(), ws.values.end());
    });
    REQUIRE(base.size() > 1000);
    std::mt19937_64 g(17);
    std::uniform_int_distribution<std::size_t> pick(0, base.size() - 1);
    std::normal_distribution<float> jitter(0.0f, 1e-4f);
    std::vector<float> x(n);
    for (auto& v : x) v = base[pick(g)] + jitter(g);
    return x;
}

}  // namespace

TEST_CASE("kll: single streams, batched and single updates, several distributions") {
    // sizes under the sanitizers: 500,000 and 2.5M values still compact
    // through many levels (about log2(n / k): 11 and 14); the bounds are the same
    for (const std::string dist : {"normal", "student_t2", "lognormal", "ties", "sorted"}) {
        const auto x = draw(dist, test::sized(2000000), 3);
        sketch batched(200), single(200, 99);
        batched.update(x.data(), x.size());
        for (float v : x) single.update(v);
        check_sketch(batched, x, dist + " batched");
        check_sketch(single, x, dist + " single");
    }
    const auto big = draw("student_t2", test::sized(10000000), 5);
    sketch s(200);
    s.update(big.data(), big.size());
    check_sketch(s, big, "10^7 student_t2");
    CHECK(s.num_retained() < 3 * 200 + 8 * s.num_levels());  // O(k + m log(n/k)) memory
}

TEST_CASE("kll: heavy-tailed delta from the fixtures") {
    const auto x = fixture_deltas(3000000);
    sketch s(256);
    s.update(x.data(), x.size());
    check_sketch(s, x, "fixture delta");
}

TEST_CASE("kll: merges of 2..64 sketches in different orders stay within the bound") {
    const auto x = draw("lognormal", test::sized(4000000), 11);  // 1M under the sanitizers: 15,625 per sketch of 64
    for (std::size_t parts : {2, 3, 8, 64}) {
        CAPTURE(parts);
        std::vector<sketch> sk;
        const std::size_t per = x.size() / parts;
        for (std::size_t p = 0; p < parts; ++p) {
            sk.emplace_back(200, 1000 + p);
            const std::size_t b = p * per, e = p + 1 == parts ? x.size() : b + per;
            if (p % 2) sk.back().update(x.data() + b, e - b);
            else
                for (std::size_t i = b; i < e; ++i) sk.back().update(x[i]);
        }
        // left fold
        sketch left(200);
        for (const auto& s : sk) left.merge(s);
        check_sketch(left, x, "left fold");
        // tree (pairwise) in reverse order
        std::vector<sketch> level(sk.rbegin(), sk.rend());
        while (level.size() > 1) {
            std::vector<sketch> next;
            for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
                next.push_back(level[i]);
                next.back().merge(level[i + 1]);
            }
            if (level.size() % 2) next.push_back(level.back());
            level.swap(next);
        }
        check_sketch(level.front(), x, "tree");
    }
}

TEST_CASE("kll: small streams are exact; cdf and pmf") {
    sketch s(200);
    for (int i = 1; i <= 100; ++i) s.update(static_cast<float>(i));
    CHECK(s.normalized_rank_error() == 0.0);
    CHECK(s.quantile(0.5) == 50.0f);
    CHECK(s.quantile(0.0) == 1.0f);
    CHECK(s.quantile(1.0) == 100.0f);
    CHECK(s.rank(25.0f) == doctest::Approx(0.25));
    CHECK(s.rank(25.0f, false) == doctest::Approx(0.24));
    const auto c = s.cdf({10.0f, 50.0f});
    REQUIRE(c.size() == 3);
    CHECK(c[0] == doctest::Approx(0.1));
    CHECK(c[2] == 1.0);
    const auto m = s.pmf({10.0f, 50.0f});
    CHECK(m[1] == doctest::Approx(0.4));
    CHECK(m[2] == doctest::Approx(0.5));
    CHECK_THROWS_AS(s.cdf({5.0f, 5.0f}), logratio::argument_error);
    s.update(std::nanf(""));  // ignored
    CHECK(s.n() == 100);
    sketch e(200);
    CHECK(std::isnan(e.quantile(0.5)));  // the empty-input rule
    CHECK(std::isnan(e.rank(1.0)));
    CHECK_THROWS_AS(s.quantile(1.5), logratio::argument_error);
    CHECK_THROWS_AS(sketch(4), logratio::argument_error);
}

TEST_CASE("kll: serialize / deserialize; corrupt or truncated bytes are errors") {
    const auto x = draw("normal", 300000, 23);
    sketch s(128);
    s.update(x.data(), x.size());
    const auto bytes = s.serialize();
    const auto back = sketch::deserialize(bytes);
    CHECK(back.serialize() == bytes);
    CHECK(back.n() == s.n());
    CHECK(back.normalized_rank_error() == s.normalized_rank_error());
    for (double p : probes) CHECK(back.quantile(p) == s.quantile(p));
    // merging a deserialized sketch works like merging the original
    sketch m1(128), m2(128);
    m1.merge(s);
    m2.merge(back);
    CHECK(m1.serialize() == m2.serialize());

    for (std::size_t n = 0; n < bytes.size(); n += 7) {
        CAPTURE(n);
        CHECK_THROWS_AS(sketch::deserialize(bytes.data(), n), logratio::format_error);
    }
    auto bad = bytes;
    bad[0] = 'X';
    CHECK_THROWS_WITH_AS(sketch::deserialize(bad), doctest::Contains("magic"), logratio::format_error);
    bad = bytes;
    bad[6] = 8;  // value width: double
    CHECK_THROWS_AS(sketch::deserialize(bad), logratio::format_error);
    bad = bytes;
    bad[9] ^= 1;  // n
    CHECK_THROWS_WITH_AS(sketch::deserialize(bad), doctest::Contains("do not add up"), logratio::format_error);
    bad = bytes;
    bad.back() ^= 0x80;  // a value flips sign: out of order or out of range
    CHECK_THROWS_AS(sketch::deserialize(bad), logratio::format_error);
    CHECK_THROWS_AS(logratio::kll_sketch<double>::deserialize(bytes), logratio::format_error);
}
