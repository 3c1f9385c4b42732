// Large views take the sample-bracket path of the exact quantiles (AVX2 and
// AVX-512 builds): it must return exactly what radix select returns, for
// every method and quantity, with and without omitted NaNs, and for data
// that defeats the sample (falls back, still exact).
#include "test_util.hpp"

namespace {
std::vector<double> reference(const logratio::paired_view<float, std::uint8_t>& v, logratio::quantile_of what,
                              const std::vector<double>& probs, const logratio::quantile_options& o) {
    logratio::quantile_workspace ws;
    logratio::gather_quantity(v, what, o, ws);
    return logratio::detail::quantiles_from(ws.values.data(), ws.values.size(), probs, o.method, ws, true);
}
}  // namespace

TEST_CASE("quantiles of a large view equal radix select exactly") {
    const std::size_t n = std::size_t(3) << 20;
    std::vector<float> t(n), r(n);
    std::vector<std::uint8_t> m(n);
    std::mt19937_64 g(77);
    std::student_t_distribution<float> heavy(2.5f);
    std::bernoulli_distribution keep(0.8);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = -0.5f - 0.001f * static_cast<float>(i % 1000);
        t[i] = std::min(r[i] + 0.01f * heavy(g), 0.0f);
        m[i] = keep(g);
    }
    const std::vector<double> probs{0, 0.0001, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1};
    using Q = logratio::quantile_of;
    auto v = logratio::padded(t, r, m, n / 1024, 1024);
    for (Q what : {Q::delta, Q::abs_delta, Q::ratio}) {
        for (const char* method : {"linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen"}) {
            CAPTURE(method);
            CAPTURE(static_cast<int>(what));
            logratio::quantile_options o;
            o.method = logratio::parse_quantile_method(method);
            CHECK(logratio::quantiles(v, what, probs, o) == reference(v, what, probs, o));
        }
    }
    // omitted NaNs
    auto t2 = t;
    for (std::size_t i = 5; i < n; i += 100003) t2[i] = std::nanf("");
    auto v2 = logratio::padded(t2, r, m, n / 1024, 1024);
    logratio::quantile_options omit;
    omit.nonfinite = logratio::nonfinite_policy::omit;
    CHECK(logratio::quantiles(v2, Q::delta, probs, omit) == reference(v2, Q::delta, probs, omit));
    CHECK_THROWS_AS(logratio::quantiles(v2, Q::delta, probs), logratio::value_error);
    // periodic data the systematic sample sees badly: still exact (fallback or not)
    std::vector<float> t3(n), r3(n, -1.0f);
    for (std::size_t i = 0; i < n; ++i) t3[i] = (i % (n >> 16) == (n >> 17)) ? -0.5f : -1.0f - 1e-3f * static_cast<float>(i % 7);
    auto v3 = logratio::padded(t3, r3, m, n / 1024, 1024);
    CHECK(logratio::quantiles(v3, Q::delta, probs) == reference(v3, Q::delta, probs, {}));
    // the panel's quantiles take the same path
    logratio::panel p;
    logratio::add_panel_quantiles(p, v);
    REQUIRE(p.delta_quantiles.size() == 7);
    CHECK(p.delta_quantiles[3].second == reference(v, Q::delta, {0.5}, {})[0]);
}
