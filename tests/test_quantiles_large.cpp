// Large views take the sample-bracket path of the exact quantiles (AVX2 and
// AVX-512 builds): it must return exactly what radix select returns, for
// every method and quantity, with and without omitted NaNs, and for data
// that defeats the sample (falls back, still exact).
#include "sanitized.hpp"
#include "test_util.hpp"

#include <logratio/dispatch/kernels.hpp>
#include <logratio/quantiles/quantiles.hpp>

namespace {
/// The reference (gather, then radix select) of one view and quantity for
/// many methods and probability lists: gathered once, with the nonfinite
/// policy of `gather` (the reference does not depend on the SIMD level the
/// test runs at, and under the sanitizers the gather dominated the test).
struct reference_of {
    logratio::quantile_workspace ws;
    reference_of(const logratio::paired_view<float, std::uint8_t>& v, logratio::quantile_of what,
                 const logratio::quantile_options& gather = {}) {
        logratio::gather_quantity(v, what, gather, ws);
    }
    std::vector<double> operator()(const std::vector<double>& probs, const logratio::quantile_options& o) {
        return logratio::detail::quantiles_from(ws.values.data(), ws.values.size(), probs, o.method, ws, true);
    }
};

std::vector<double> reference(const logratio::paired_view<float, std::uint8_t>& v, logratio::quantile_of what,
                              const std::vector<double>& probs, const logratio::quantile_options& o) {
    return reference_of(v, what, o)(probs, o);
}
}  // namespace

TEST_CASE("quantiles of a large view equal radix select exactly") {
    // 1 << 20 under the sanitizers: the smallest view that takes the bracket path
    const std::size_t n = test::sized(std::size_t(3) << 20, 3);
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
        reference_of ref(v, what);
        for (const char* method : {"linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen"}) {
            CAPTURE(method);
            CAPTURE(static_cast<int>(what));
            logratio::quantile_options o;
            o.method = logratio::parse_quantile_method(method);
            CHECK(logratio::kernels::quantiles(v, what, probs, o) == ref(probs, o));
        }
    }
    // omitted NaNs
    auto t2 = t;
    for (std::size_t i = 5; i < n; i += 100003) t2[i] = std::nanf("");
    auto v2 = logratio::padded(t2, r, m, n / 1024, 1024);
    logratio::quantile_options omit;
    omit.nonfinite = logratio::nonfinite_policy::omit;
    CHECK(logratio::kernels::quantiles(v2, Q::delta, probs, omit) == reference(v2, Q::delta, probs, omit));
    CHECK_THROWS_AS(logratio::kernels::quantiles(v2, Q::delta, probs), logratio::value_error);
    // periodic data the systematic sample sees badly: still exact (fallback or not)
    std::vector<float> t3(n), r3(n, -1.0f);

    for (std::size_t i = 0; i < n; ++i)
        t3[i] = (i % (n >> 16) == (n >> 17)) ? -0.5f : -1.0f - 1e-3f * static_cast<float>(i % 7);
    auto v3 = logratio::padded(t3, r3, m, n / 1024, 1024);
    CHECK(logratio::kernels::quantiles(v3, Q::delta, probs) == reference(v3, Q::delta, probs, {}));
    // the panel's quantiles take the same path
    logratio::panel p;
    logratio::kernels::add_panel_quantiles(p, v);
    REQUIRE(p.delta_quantiles.size() == 7);
    CHECK(p.delta_quantiles[3].second == reference(v, Q::delta, {0.5}, {})[0]);
}

TEST_CASE("quantiles of a large view with heavy ties (bf16-like delta) equal radix select exactly") {
    // Few distinct values, delta = 0 alone ~20% of the tokens: the bracket
    // pass counts such heavy values instead of storing them (issue 18).
    const std::size_t n = std::size_t(1) << 20;  // the smallest view that takes the bracket path
    std::vector<float> t(n), r(n);
    std::vector<std::uint8_t> m(n);
    std::mt19937_64 g(18);
    std::student_t_distribution<float> heavy(1.5f);
    std::bernoulli_distribution keep(0.7);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = -0.25f * static_cast<float>(i % 13);
        const float d = std::round(0.02f * heavy(g) * 256.0f) / 256.0f;  // multiples of 2^-8
        t[i] = std::min(r[i] + d, 0.0f);
        m[i] = keep(g);
    }
    const std::vector<double> probs{0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.95, 0.99, 0.999, 1};
    using Q = logratio::quantile_of;
    auto v = logratio::padded(t, r, m, n / 1024, 1024);
    const std::vector<const char*> methods =
        test::sanitized ? std::vector<const char*>{"linear", "nearest", "inverted_cdf"}
                        : std::vector<const char*>{"linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen"};
    for (Q what : {Q::delta, Q::abs_delta, Q::ratio}) {
        reference_of ref(v, what);
        // every method's own ranks; under the sanitizers three (the same
        // passes over memory, each method only picks other ranks)
        for (const char* method : methods) {
            CAPTURE(method);
            CAPTURE(static_cast<int>(what));
            logratio::quantile_options o;
            o.method = logratio::parse_quantile_method(method);
            CHECK(logratio::kernels::quantiles(v, what, probs, o) == ref(probs, o));
        }
    }
    // ranks at the edges of the long runs of equal values (and next to them)
    logratio::quantile_workspace ws;
    logratio::gather_quantity(v, Q::delta, {}, ws);
    std::vector<double> sorted = ws.values;
    std::sort(sorted.begin(), sorted.end());
    const double last = static_cast<double>(sorted.size() - 1);
    std::vector<double> edges;
    for (std::size_t i = 0, run = 0; i < sorted.size(); ++i, ++run) {
        if (i > 0 && sorted[i] != sorted[i - 1]) {
            if (run > sorted.size() / 200) {
                for (double e : {double(i - run), double(i - 1)})
                    for (double k : {e - 1, e, e + 1}) edges.push_back(std::min(std::max(k, 0.0), last) / last);
            }
            run = 0;
        }
    }
    REQUIRE(edges.size() >= 30);
    reference_of ref(v, Q::delta);
    for (const char* method : {"linear", "lower", "higher"}) {
        logratio::quantile_options o;
        o.method = logratio::parse_quantile_method(method);
        CAPTURE(method);
        CHECK(logratio::kernels::quantiles(v, Q::delta, edges, o) == ref(edges, o));
        for (std::size_t k = 0; k < edges.size(); k += 6) {
            const std::vector<double> two{edges[k], edges[k + 1]};
            CHECK(logratio::kernels::quantiles(v, Q::delta, two, o) == ref(two, o));
        }
    }
}
