// The panel and its quantiles in one pass (panel/panel_quantiles.hpp)
// must equal the panel followed by the separate exact pass, bit for bit:
// every element type, both layouts, masked-out lanes, omitted tokens, heavy
// ties at zero, threads, and data whose sample predicts the wrong buckets
// (the fallback).
#include "sanitized.hpp"
#include "test_util.hpp"

#include <logratio/dispatch/kernels.hpp>
#include <logratio/panel/panel_quantiles.hpp>

namespace {

/// The fused call against compute_panel + add_panel_quantiles: quantiles
/// identical (exact selection), every panel entry within 1e-12 relative
/// (the hook does not change the kernel's arithmetic or its order, but the
/// two instantiations may contract multiply-adds differently: clang does).
template <class T, class M>
void check_fused(const logratio::paired_view<T, M>& v, const logratio::panel_options& o, unsigned threads) {
    CAPTURE(threads);
    logratio::panel want = logratio::kernels::compute_panel(v, o, threads);
    logratio::kernels::add_panel_quantiles(want, v, o.nonfinite);
    const logratio::panel got = logratio::kernels::compute_panel_with_quantiles(v, o, threads);
    CHECK(got.delta_quantiles == want.delta_quantiles);
    CHECK(got.abs_delta_quantiles == want.abs_delta_quantiles);
    const auto ge = logratio::panel_entries(got), we = logratio::panel_entries(want);
    REQUIRE(ge.size() == we.size());
    // At avx512 the panel alone runs float32/bf16/f16 inputs through its
    // float32-lane loop (detail/panel_f32.hpp), the fused pass through the
    // float64 lanes: the two agree within SPEC's 1e-6 there.
    const bool f32_lanes = !std::is_same<T, double>::value && std::string(logratio::kernels::simd_level()) == "avx512";
    const double rel = f32_lanes ? 1e-6 : 1e-12;
    for (std::size_t i = 0; i < ge.size(); ++i) {
        CAPTURE(ge[i].first);
        CHECK(ge[i].second.has_value() == we[i].second.has_value());
        if (ge[i].second && we[i].second && !std::isnan(*we[i].second))
            CHECK(test::spec_close(*ge[i].second, *we[i].second, rel, 1e-15));
    }
}

template <class T>
T convert(double x) {
    if constexpr (std::is_same<T, logratio::bfloat16>::value) return logratio::to_bfloat16(static_cast<float>(x));
    else if constexpr (std::is_same<T, logratio::float16>::value) return logratio::to_float16(static_cast<float>(x));
    else return static_cast<T>(x);
}

/// Log-probs with delta = `scale` * Student-t (3 dof), a share `zeros` of
/// exact ties, in type T, masked in with probability `keep`.
template <class T>
void make_data(std::size_t n, double scale, double zeros, double keep, std::uint64_t seed, std::vector<T>& t,
               std::vector<T>& r, std::vector<std::uint8_t>& m) {
    std::mt19937_64 g(seed);
    std::student_t_distribution<double> heavy(3.0);
    std::uniform_real_distribution<double> u(0, 1);
    t.resize(n);
    r.resize(n);
    m.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double lr = -0.05 - 3.0 * u(g);
        const double d = u(g) < zeros ? 0.0 : scale * heavy(g);
        r[i] = convert<T>(lr);
        t[i] = convert<T>(std::min(lr + d, -1e-3));
        if (u(g) < zeros) t[i] = r[i];
        m[i] = u(g) < keep;
    }
}

template <class T>
void check_type(double zeros) {
    for (std::size_t n : {std::size_t(3072), std::size_t(1) << 17}) {
        CAPTURE(n);
        std::vector<T> t, r;
        std::vector<std::uint8_t> m;
        make_data(n, 0.01, zeros, 0.8, 11 + n, t, r, m);
        // the fused path itself runs at 2^17 (at 3072 the margins store too much: the separate pass)
        if (n > 4096) CHECK(logratio::detail::plan_panel_quantiles(logratio::padded(t, r, m, n / 128, 128)).usable);
        for (unsigned threads : {1u, 2u}) {
            check_fused(logratio::padded(t, r, m, n / 128, 128), {}, threads);
            std::vector<std::int64_t> cu{0};
            for (std::size_t i = 777; i < n; i += 777 + i % 5) cu.push_back(static_cast<std::int64_t>(i));
            cu.push_back(static_cast<std::int64_t>(n));
            check_fused(logratio::packed(t, r, cu, m), {}, threads);
            check_fused(logratio::packed(t, r, cu), {}, threads);
        }
    }
}

}  // namespace

TEST_CASE("panel with quantiles: float32, bf16, f16 and float64 inputs equal the separate pass") {
    SUBCASE("float32") { check_type<float>(0.0); }
    SUBCASE("bfloat16, heavy ties at zero") { check_type<logratio::bfloat16>(0.3); }
    SUBCASE("float16") { check_type<logratio::float16>(0.05); }
    SUBCASE("float64, exact zeros in a stored bucket, masked-out lanes") { check_type<double>(0.1); }
    SUBCASE("float64 without ties") { check_type<double>(0.0); }
}

TEST_CASE("panel with quantiles: omitted NaN/Inf tokens, raise, and views without tokens") {
    const std::size_t n = std::size_t(1) << 16;
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    make_data(n, 0.02, 0.0, 0.9, 5, t, r, m);
    for (std::size_t i = 3; i < n; i += 997) t[i] = (i % 2) ? std::nanf("") : -INFINITY;
    logratio::panel_options omit;
    omit.nonfinite = logratio::nonfinite_policy::omit;
    auto v = logratio::padded(t, r, m, n / 64, 64);
    check_fused(v, omit, 1);
    check_fused(v, omit, 2);
    CHECK_THROWS_AS(logratio::kernels::compute_panel_with_quantiles(v), logratio::value_error);
    std::vector<std::uint8_t> none(n, 0);
    const auto p = logratio::kernels::compute_panel_with_quantiles(logratio::padded(t, r, none, n / 64, 64), omit);
    CHECK(p.tokens == 0);
    CHECK(p.delta_quantiles.empty());
}

TEST_CASE("panel with quantiles: data the sample mispredicts falls back and stays exact") {
    // The sample reads blocks of sample_block positions at a fixed stride; outliers
    // placed only outside those blocks hold the lower quantiles, in buckets
    // the sample never saw.
    // large enough that the sample skips positions (2^20 under the
    // sanitizers: a stride of 256 positions per sampled block of 64)
    const std::size_t n = test::sized(std::size_t(1) << 22);
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    make_data(n, 0.01, 0.0, 1.0, 8, t, r, m);
    const auto geo = logratio::detail::sample_blocks(n);
    const std::size_t stride = geo.stride, first = geo.first;
    const std::size_t B = logratio::detail::delta_buckets::sample_block;
    REQUIRE(stride >= 2 * B);
    std::size_t outliers = 0;
    for (std::size_t i = 0; i < n; i += 7)
        if (i % stride < first || i % stride >= first + B) {
            t[i] = r[i] - 3.0f;  // beyond the sample's largest |delta| (the top |delta| margin reaches it)
            ++outliers;
        }
    REQUIRE(outliers > n / 16);  // the bottom tenth of delta: the lower quantiles lie among them
    auto v = logratio::padded(t, r, m, n / 64, 64);
    const auto plan = logratio::detail::plan_panel_quantiles(v);
    REQUIRE(plan.usable);
    std::size_t flagged = 0;  // the outliers' buckets were never predicted
    for (std::size_t i = 0; i < n; i += 7)
        if (i % stride < first || i % stride >= first + B)
            flagged += plan.flag[logratio::detail::delta_bucket(double(t[i]) - double(r[i]))];
    CHECK(flagged == 0);
    check_fused(v, {}, 1);
    check_fused(v, {}, 2);
}

TEST_CASE("panel with quantiles: a rank in an unstored bucket is reported, not guessed") {
    logratio::detail::panel_quantile_plan plan;
    plan.flag.assign(logratio::detail::delta_buckets::count, 0);
    plan.usable = true;
    logratio::detail::collected_deltas c;
    c.hist.assign(logratio::detail::delta_buckets::count, 0);
    c.hist[logratio::detail::delta_bucket(0.5)] = 10;
    logratio::panel p;
    p.tokens = 10;
    CHECK_FALSE(logratio::detail::resolve_panel_quantiles(p, c, plan));
    CHECK(p.delta_quantiles.empty());
    plan.flag[logratio::detail::delta_bucket(0.5)] = 1;
    std::vector<double> vals(10, 0.5);
    c.cand.emplace_back(vals.data(), vals.size());
    CHECK_FALSE(logratio::detail::resolve_panel_quantiles(p, c, plan));  // |delta|'s bucket needs both signs
    plan.flag[logratio::detail::delta_bucket(-0.5)] = 1;
    REQUIRE(logratio::detail::resolve_panel_quantiles(p, c, plan));
    CHECK(p.delta_quantiles.at(3).second == 0.5);
    vals.pop_back();  // one value fewer than the histogram counts: never a guess
    c.cand[0].second = vals.size();
    CHECK_FALSE(logratio::detail::resolve_panel_quantiles(p, c, plan));
}

TEST_CASE("delta buckets are monotone and keep every nonzero float difference out of the zero buckets") {
    std::vector<double> x{-INFINITY, -1e300, -3e19, -1.0, -1e-3, -1e-30, -1e-300, -4.9e-324, -0.0, 0.0,
                          4.9e-324, 1e-300, 1e-45, 1.4e-45, 1e-30, 1e-3, 1.0, 3e19, 1e300, INFINITY};
    std::mt19937_64 g(3);
    std::normal_distribution<double> nd(0, 1);
    for (int i = 0; i < 20000; ++i) x.push_back(nd(g) * std::pow(10.0, static_cast<double>(i % 40 - 30)));
    std::sort(x.begin(), x.end());
    for (std::size_t i = 1; i < x.size(); ++i) CHECK(logratio::detail::delta_bucket(x[i - 1]) <= logratio::detail::delta_bucket(x[i]));
    using B = logratio::detail::delta_buckets;
    const double tiny = std::ldexp(1.0, -149);  // the smallest nonzero difference of two floats
    CHECK(logratio::detail::delta_bucket(tiny) > B::zero_pos);
    CHECK(logratio::detail::delta_bucket(-tiny) < B::zero_neg);
    CHECK(logratio::detail::delta_bucket(0.0) == B::zero_pos);
    CHECK(logratio::detail::delta_bucket(-0.0) == B::zero_neg);
    CHECK(logratio::detail::delta_bucket(std::nan("")) < B::count);
}

TEST_CASE("huge arrays: writable to the last element; 2 MiB aligned when that large on Linux") {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(1) << 18, (std::size_t(1) << 19) + 3}) {
        CAPTURE(n);
        auto a = logratio::detail::make_huge_array<double>(n);
        REQUIRE(a != nullptr);
        for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<double>(i);
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += a[i];
        CHECK(s == static_cast<double>(n) * (static_cast<double>(n) - 1) / 2);
#if defined(__linux__)
        if (n * sizeof(double) >= (std::size_t(1) << 21))
            CHECK(reinterpret_cast<std::uintptr_t>(a.get()) % (std::uintptr_t(1) << 21) == 0);
#endif
    }
}

TEST_CASE("panel with quantiles: one workspace across calls, view sizes and threads equals a fresh one; its scratch is kept") {
    logratio::quantile_workspace ws;
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    std::size_t cap = 0;
    const std::size_t sizes[] = {std::size_t(1) << 20, 5120, std::size_t(1) << 20, 300032};
    for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t n = sizes[k];
        const unsigned threads = k == 2 ? 2u : 1u;
        CAPTURE(n);
        CAPTURE(threads);
        make_data<float>(n, 0.01, 0.02, 0.9, 7 + k, t, r, m);
        const auto v = logratio::padded(t, r, m, n / 128, 128);
        const logratio::panel reused = logratio::compute_panel_with_quantiles(v, {}, threads, ws);
        const logratio::panel fresh = logratio::compute_panel_with_quantiles(v, {}, threads);
        CHECK(reused.delta_quantiles == fresh.delta_quantiles);
        CHECK(reused.abs_delta_quantiles == fresh.abs_delta_quantiles);
        CHECK(reused.delta_quantiles.size() == 7);
        CHECK(reused.delta_std == fresh.delta_std);
        // reserved by the first call, grown only for more threads, never shrunk
        // (the bucket collector's arena, or the float32 interval pass's first part at AVX-512)
        const std::size_t held = ws.scratch.cap + (ws.f32.empty() ? 0 : ws.f32[0].cap);
        CHECK(held > 0);
        CHECK(held >= cap);
        cap = std::max(cap, held);
        const logratio::panel again = logratio::compute_panel_with_quantiles(v, {}, threads, ws);
        CHECK(again.delta_quantiles == fresh.delta_quantiles);
        CHECK(ws.scratch.cap + (ws.f32.empty() ? 0 : ws.f32[0].cap) == held);  // the same call again: nothing grows
    }
}
