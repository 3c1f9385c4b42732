// SIMD path vs the scalar reference path (and the naive long-double
// reference) on every element and mask type, on lengths around the lane
// count and chunk size, on misaligned starting pointers. The SIMD path is
// logratio::kernels (dispatch where it is built): ctest runs this binary
// once per x86-64 level the CPU has (LOGRATIO_SIMD=sse2/avx2/avx512).
#include "test_util.hpp"

#include <logratio/dispatch/kernels.hpp>

#include <memory>

namespace {

template <class T>
T from_double(double x) {
    if constexpr (std::is_same<T, logratio::bfloat16>::value) return logratio::to_bfloat16(static_cast<float>(x));
    else if constexpr (std::is_same<T, logratio::float16>::value) return logratio::to_float16(static_cast<float>(x));
    else return static_cast<T>(x);
}

template <class T, class M>
struct typed_data {
    std::vector<T> train, rollout;
    std::unique_ptr<M[]> mask;  // not std::vector: vector<bool> has no data()
};

// `offset` leading elements make the view start at a misaligned address.
template <class T, class M>
typed_data<T, M> convert(const test::synthetic& s, std::size_t offset) {
    typed_data<T, M> d;
    d.train.assign(offset, from_double<T>(0.0));
    d.rollout = d.train;
    d.mask.reset(new M[offset + s.train.size() + 1]());
    for (std::size_t i = 0; i < s.train.size(); ++i) {
        d.train.push_back(from_double<T>(s.train[i]));
        d.rollout.push_back(from_double<T>(s.rollout[i]));
        d.mask[offset + i] = static_cast<M>(s.mask[i]);
    }
    return d;
}

template <class T = double>
void check_same(const logratio::panel& a, const logratio::panel& b, const char* what) {
    std::map<std::string, double> want;
    for (const auto& e : logratio::panel_entries(b))
        if (e.second) want[e.first] = *e.second;
    CHECK(a.tokens == b.tokens);
    CHECK(a.sequences == b.sequences);
    // SPEC's tolerance: at AVX-512 the float32-lane loop (detail/panel_f32.hpp)
    // computes the divergence terms of float32/bf16/f16 inputs in float32
    // (bounds <= 6.6e-7, stated there); float64 inputs stay within ~1e-15
    test::check_entries(a, want, what, std::is_same<T, double>::value ? 1e-10 : 1e-6);
    if (a.tokens) {
        CHECK(a.delta_abs_max == b.delta_abs_max);
        CHECK(a.delta_abs_max_at.sequence == b.delta_abs_max_at.sequence);
        CHECK(a.delta_abs_max_at.position == b.delta_abs_max_at.position);
    }
}

// The SIMD panel of v: logratio::kernels for the masks dispatch holds (bytes,
// floats), the header-only kernel at this file's level for the others
// (bool masks are a header-only feature).
template <class T, class M>
logratio::panel simd_panel(const logratio::paired_view<T, M>& v) {
    if constexpr (std::is_same<M, std::uint8_t>::value || std::is_same<M, float>::value)
        return logratio::kernels::compute_panel(v);
    else
        return logratio::compute_panel(v);
}

template <class T, class M>
void simd_vs_scalar(std::size_t n, std::size_t offset, std::uint64_t seed) {
    CAPTURE(n);
    CAPTURE(offset);
    CAPTURE(logratio::dtype_name<T>());
    CAPTURE(logratio::dtype_name<M>());
    const auto s = test::make_synthetic(n, seed);
    const auto d = convert<T, M>(s, offset);
    // padded: rows of 37 tokens (not a multiple of any lane count) + remainder as a packed view
    const std::uint64_t cols = 37;
    const std::uint64_t rows = n / cols;
    auto pv = logratio::paired_view<T, M>::padded(d.train.data() + offset, d.rollout.data() + offset,
                                                  d.mask.get() + offset, rows, cols);
    check_same<T>(simd_panel(pv), logratio::accumulate_panel_scalar(pv).finish(), "padded");
    // packed: irregular sequence lengths covering all n tokens
    std::vector<std::int64_t> cu{0};
    std::mt19937_64 g(seed + 1);
    while (static_cast<std::size_t>(cu.back()) < n)
        cu.push_back(std::min<std::int64_t>(cu.back() + 1 + static_cast<std::int64_t>(g() % 700), n));
    if (n == 0) cu.push_back(0);
    auto kv = logratio::paired_view<T, M>::packed(d.train.data() + offset, d.rollout.data() + offset, n, cu.data(),
                                                  cu.size(), d.mask.get() + offset);
    const auto simd = simd_panel(kv);
    check_same<T>(simd, logratio::accumulate_panel_scalar(kv).finish(), "packed");
    const auto ref = test::reference_panel(kv);
    test::check_entries(simd, ref, "packed vs naive");
}

template <class T>
void all_masks(std::size_t n, std::size_t offset) {
    simd_vs_scalar<T, std::uint8_t>(n, offset, 7 + n);
    simd_vs_scalar<T, bool>(n, offset, 8 + n);
    simd_vs_scalar<T, float>(n, offset, 9 + n);
}

}  // namespace

TEST_CASE("simd vs scalar: every dtype, tail lengths, misaligned pointers") {
    for (std::size_t n : {0, 1, 7, 8, 9, 31, 511, 512, 513, 4099}) {
        for (std::size_t offset : {0, 1}) {
            all_masks<float>(n, offset);
            all_masks<double>(n, offset);
            all_masks<logratio::bfloat16>(n, offset);
            all_masks<logratio::float16>(n, offset);
        }
    }
}

TEST_CASE("simd vs scalar: 1000003 tokens") {
    simd_vs_scalar<float, std::uint8_t>(1000003, 1, 99);
    simd_vs_scalar<double, float>(1000003, 1, 97);
    simd_vs_scalar<logratio::bfloat16, bool>(1000003, 0, 98);
    simd_vs_scalar<logratio::float16, std::uint8_t>(1000003, 1, 96);
}

TEST_CASE("packed without a mask counts every token") {
    const auto s = test::make_synthetic(1000, 5);
    std::vector<std::int32_t> cu{0, 10, 10, 500, 1000};
    auto v = logratio::packed(s.train, s.rollout, cu);
    const auto p = logratio::kernels::compute_panel(v);
    CHECK(p.tokens == 1000);
    CHECK(p.sequences == 3);  // the empty sequence does not count
    test::check_entries(p, test::reference_panel(v), "packed, no mask");
}

TEST_CASE("float masks: 0, -0.0 and 1 at every path; NaN, fractional and negative values are errors") {
    // -0.0 == 0 leaves the token out; the direct AVX2/AVX-512 loads once
    // compared with an ordered != and mishandled NaN lanes, so a non-binary
    // value is refused at construction, naming row and column
    const auto s = test::make_synthetic(4099, 11);
    std::vector<float> t(s.train.begin(), s.train.end()), r(s.rollout.begin(), s.rollout.end());
    std::vector<float> m(t.size());
    const float values[] = {1.0f, 0.0f, 1.0f, 1.0f, -0.0f, 0.0f, 1.0f};
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = values[(k * 7 + k / 5) % 7];
    auto v = logratio::paired_view<float, float>::padded(t.data(), r.data(), m.data(), 4099 / 17, 17);
    std::uint64_t on = 0;
    for (std::size_t k = 0; k < 4099 / 17 * 17; ++k) on += m[k] != 0.0f;
    const auto p = logratio::kernels::compute_panel(v);
    CHECK(p.tokens == on);
    check_same<float>(p, logratio::accumulate_panel_scalar(v).finish(), "float mask");
    check_same<float>(logratio::compute_panel(v), logratio::accumulate_panel_scalar(v).finish(), "float mask, header-only");
    for (const float bad : {NAN, 0.5f, -2.0f, 1e-30f}) {
        auto mb = m;
        mb[3 * 17 + 5] = bad;
        using float_masked = logratio::paired_view<float, float>;
        CHECK_THROWS_WITH_AS(float_masked::padded(t.data(), r.data(), mb.data(), 4099 / 17, 17),
                             doctest::Contains("row 3, column 5"), logratio::value_error);
    }
}

TEST_CASE("accuracy at |delta| ~ 1e-3: kl_k3, chi2, tv keep their digits") {
    // float32 inputs whose difference is ~1e-3; kl_k3 ~ 5e-7 per token
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    std::mt19937_64 g(3);
    std::uniform_real_distribution<double> u(-1.5e-3, 1.5e-3);
    for (int i = 0; i < 100000; ++i) {
        const float le = -0.25f - 0.001f * static_cast<float>(i % 100);
        r.push_back(le);
        t.push_back(static_cast<float>(le + u(g)));
        m.push_back(1);
    }
    auto v = logratio::padded(t, r, m, 1000, 100);
    const auto p = logratio::kernels::compute_panel(v);
    const auto ref = test::reference_panel(v);
    // float64 sums of the exact float32 deltas: kl_k2, delta_std as before;
    // the float32 lanes' divergence terms (AVX-512: detail/panel_f32.hpp)
    // within the bounds stated there (10.5u = 6.3e-7 for tv, the largest),
    // the float64 kernel's within 1e-9
    const bool f32 = std::string(logratio::kernels::simd_level()) == "avx512";
    for (const char* k : {"kl_k3", "chi2", "tv", "kl_k2", "kl_reverse", "ratio_std", "delta_std"}) {
        CAPTURE(k);
        const bool exact = std::string(k) == "kl_k2" || std::string(k) == "delta_std";
        CHECK(test::rel_err(test::entry(p, k), ref.at(k)) < (f32 && !exact ? 6.6e-7 : 1e-9));
    }
    test::check_entries(p, ref, "small delta");
    // one KL vocabulary: the panel's directions in logits.hpp's words
    CHECK(p.kl_rollout_train() == p.kl_k3);
    CHECK(p.kl_train_rollout() == p.kl_reverse);
    CHECK(p.kl_train_rollout() > 0.0);
}

TEST_CASE("a large constant offset does not destroy delta_std (shifted accumulation)") {
    std::vector<double> t, r;
    std::vector<std::uint8_t> m;
    for (int i = 0; i < 10000; ++i) {
        r.push_back(-3.0);
        t.push_back(-3.0 + 0.5 + 1e-7 * ((i * 7919) % 13 - 6));
        m.push_back(1);
    }
    auto v = logratio::padded(t, r, m, 100, 100);
    const auto p = logratio::kernels::compute_panel(v);
    const auto ref = test::reference_panel(v);
    CHECK(test::rel_err(p.delta_std, ref.at("delta_std")) < 1e-6);
    CHECK(test::rel_err(p.ratio_std, ref.at("ratio_std")) < 1e-6);
}

TEST_CASE("no masked-in token: tokens = sequences = 0 and nothing else") {
    std::vector<float> t(64, -1.0f), r(64, -1.1f);
    std::vector<std::uint8_t> m(64, 0);
    const auto p = logratio::kernels::compute_panel(logratio::padded(t, r, m, 8, 8));
    CHECK(p.tokens == 0);
    CHECK(p.sequences == 0);
    for (const auto& e : logratio::panel_entries(p)) {
        CAPTURE(e.first);
        if (e.first == "tokens" || e.first == "sequences") CHECK(*e.second == 0.0);
        else CHECK_FALSE(e.second.has_value());
    }
}

TEST_CASE("delta beyond the +-20 clamp: rho uses the clamped value, delta does not") {
    std::vector<double> t{-0.5, -30.0}, r{-30.0, -0.5};
    std::vector<std::uint8_t> m{1, 1};
    const auto p = logratio::kernels::compute_panel(logratio::padded(t, r, m, 1, 2));
    CHECK(p.delta_max == doctest::Approx(29.5));
    CHECK(p.ratio_max == doctest::Approx(std::exp(20.0)).epsilon(1e-12));
    CHECK(p.ratio_min == doctest::Approx(std::exp(-20.0)).epsilon(1e-12));
    CHECK(p.delta_abs_max_at.position == 0);
}

TEST_CASE("simd vs scalar: batches with and without a |delta| past expm1_small_bound, clamped ones among them") {
    // The kernel takes expm1 without the reduction for batches whose |delta|
    // are all at most the bound (0.34), the full clamped expm1 otherwise:
    // deltas right at, below and above it, a few far past the clamp (+-25),
    // and large ones on masked-out tokens (which must not send a batch to
    // the full path's numbers: the lanes are 0 there).
    std::mt19937_64 g(41);
    std::normal_distribution<double> small(0.0, 0.05);
    const double edge[] = {0.34, -0.34, std::nextafter(0.34, 1.0), -std::nextafter(0.34, 1.0), 0.3399, -0.3401,
                           0.9, -2.5, 25.0, -25.0};
    const std::size_t n = 20011;
    std::vector<double> t(n), r(n);
    std::vector<std::uint8_t> m(n);
    std::size_t past = 0;
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = -30.0 - 0.5 * std::fabs(small(g));  // t = r + d stays negative for d = 25
        double d = std::max(-0.3, std::min(0.3, small(g)));
        if (g() % 50 == 0) d = edge[g() % 10];
        m[i] = g() % 7 != 0;
        t[i] = r[i] + d;
        if (std::fabs(t[i] - r[i]) > 0.34 && m[i]) ++past;
    }
    REQUIRE(past > 100);
    std::vector<std::int64_t> cu{0};
    while (static_cast<std::size_t>(cu.back()) < n)
        cu.push_back(std::min<std::int64_t>(cu.back() + 1 + static_cast<std::int64_t>(g() % 300), n));
    auto v = logratio::paired_view<double, std::uint8_t>::packed(t.data(), r.data(), n, cu.data(), cu.size(), m.data());
    const auto simd = logratio::kernels::compute_panel(v);
    const auto scalar = logratio::accumulate_panel_scalar(v).finish();
    std::map<std::string, double> want;
    for (const auto& e : logratio::panel_entries(scalar))
        if (e.second) want[e.first] = *e.second;
    test::check_entries(simd, want, "edge deltas", 1e-12);
    CHECK(simd.delta_abs_max == scalar.delta_abs_max);
    CHECK(simd.delta_abs_max_at.sequence == scalar.delta_abs_max_at.sequence);
    CHECK(simd.delta_abs_max_at.position == scalar.delta_abs_max_at.position);
    test::check_entries(simd, test::reference_panel(v), "edge deltas vs naive");
}

TEST_CASE("float32 lanes: inexact, large and non-finite deltas through the float64 step, SPEC's tolerance") {
    // At AVX-512 (detail/panel_f32.hpp) a token whose float32 delta is not
    // exact, or |delta| > 0.5, or NaN/Inf, leaves the float32 lanes for the
    // float64 step, 8 pending at a time and at each sequence's end: log-probs
    // across many binades (most float32 differences inexact), some large
    // deltas, sequences of every length around 16 and 8.
    std::mt19937_64 g(53);
    std::normal_distribution<double> z(0.0, 1.0);
    const std::size_t n = 30011;
    std::vector<float> t(n), r(n);
    std::vector<std::uint8_t> m(n);
    std::size_t inexact = 0, large = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double le = -std::min(std::exp(2.5 * z(g)), 40.0);  // -0.0005 .. -40
        double d = 0.01 * z(g);
        if (g() % 40 == 0) d = 3.0 * z(g);
        r[i] = static_cast<float>(le);
        t[i] = std::min(static_cast<float>(le + d), 0.0f);
        m[i] = g() % 5 != 0;
        const float df = t[i] - r[i];
        if (m[i] && static_cast<double>(df) != static_cast<double>(t[i]) - static_cast<double>(r[i])) ++inexact;
        if (m[i] && std::fabs(df) > 0.5f) ++large;
    }
    REQUIRE(inexact > 300);
    REQUIRE(large > 100);
    std::vector<std::int64_t> cu{0};
    while (static_cast<std::size_t>(cu.back()) < n)
        cu.push_back(std::min<std::int64_t>(cu.back() + static_cast<std::int64_t>(g() % 40), n));
    const auto check = [&](const logratio::paired_view<float, std::uint8_t>& v, const logratio::panel_options& o) {
        const auto simd = logratio::kernels::compute_panel(v, o);
        const auto scalar = logratio::accumulate_panel_scalar(v, o).finish();
        check_same<float>(simd, scalar, "repair lanes");
        CHECK(simd.nonfinite_tokens == scalar.nonfinite_tokens);
        CHECK(simd.delta_min == scalar.delta_min);
        CHECK(simd.delta_max == scalar.delta_max);
        for (std::size_t k = 0; k < simd.frac_abs_delta_gt.size(); ++k) CHECK(simd.frac_abs_delta_gt[k] == scalar.frac_abs_delta_gt[k]);
        if (o.nonfinite == logratio::nonfinite_policy::raise)  // (the naive reference knows no omit)
            test::check_entries(simd, test::reference_panel(v, o.abs_delta_thresholds), "repair lanes vs naive");
    };
    using view = logratio::paired_view<float, std::uint8_t>;
    check(view::packed(t.data(), r.data(), n, cu.data(), cu.size(), m.data()), {});
    logratio::panel_options five;
    five.abs_delta_thresholds = {0.0, 1e-3, 0.0100001, 0.5, 2.0};  // not the compiled-in four
    check(view::padded(t.data(), r.data(), m.data(), n / 23, 23), five);
    // NaN and +-Inf among them: omitted and counted (an Inf is not a positive log-prob)
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (std::size_t i = 7; i < n; i += 97) (i % 2 ? t : r)[i] = bad[i % 3];
    logratio::panel_options omit;
    omit.nonfinite = logratio::nonfinite_policy::omit;
    check(view::packed(t.data(), r.data(), n, cu.data(), cu.size(), m.data()), omit);
    CHECK(logratio::kernels::compute_panel(view::packed(t.data(), r.data(), n, cu.data(), cu.size(), m.data()), omit)
              .nonfinite_tokens > 100);
}

TEST_CASE("float32 lanes: a positive log-prob on an exact small delta is named") {
    std::vector<float> t(1000, -0.5f), r(1000, -0.5f);
    std::vector<std::uint8_t> m(1000, 1);
    t[517] = r[517] = 0.25f;  // delta 0: the float32 lanes' token
    const auto v = logratio::padded(t, r, m, 10, 100);
    try {
        (void)logratio::kernels::compute_panel(v);
        FAIL("no error");
    } catch (const logratio::value_error& e) {
        CHECK(std::string(e.what()).find("row 5, column 17") != std::string::npos);
    }
}

TEST_CASE("float32 lanes: shifted narrow and constant deltas (spreads from the shifted sums), long rows' counts") {
    // The float32 loop (detail/panel_f32.hpp at AVX-512) derives sum k3 and
    // sum d^2 from its shifted sums once per sequence and counts thresholds
    // in 16-bit fields moved every 64 batches: deltas near 0.3 with a spread
    // of 1e-3 (chi2, ratio_std where the shifts carry most of the value), a
    // constant delta (every spread exactly 0 in the float64 kernel), rows
    // of 5000 tokens (counts past one field's range), thresholds at and
    // next to the data's float values.
    std::mt19937_64 g(71);
    std::normal_distribution<double> z(0.0, 1.0);
    const std::size_t rows = 7, cols = 5000, n = rows * cols;
    std::vector<float> t(n), r(n), tc(n);
    std::vector<std::uint8_t> m(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = -static_cast<float>(1.0 + 0.25 * (i % 8));  // exact float32 deltas below 0.5 (a few inexact)
        t[i] = static_cast<float>(r[i] + 0.3 + 1e-3 * z(g));
        tc[i] = r[i] + 0.25f;  // delta exactly 0.25 everywhere
        m[i] = g() % 7 != 0;
    }
    logratio::panel_options o;
    o.abs_delta_thresholds = {0.25, static_cast<double>(std::nextafter(0.25f, 0.0f)), 0.3, 0.3000001};
    using view = logratio::paired_view<float, std::uint8_t>;
    const auto narrow = view::padded(t.data(), r.data(), m.data(), rows, cols);
    const auto simd = logratio::kernels::compute_panel(narrow, o);
    check_same<float>(simd, logratio::accumulate_panel_scalar(narrow, o).finish(), "narrow shifted");
    test::check_entries(simd, test::reference_panel(narrow, o.abs_delta_thresholds), "narrow shifted vs naive");
    const auto scalar = logratio::accumulate_panel_scalar(narrow, o).finish();
    for (std::size_t k = 0; k < simd.frac_abs_delta_gt.size(); ++k) CHECK(simd.frac_abs_delta_gt[k] == scalar.frac_abs_delta_gt[k]);
    const auto constant = view::padded(tc.data(), r.data(), m.data(), rows, cols);
    const auto c = logratio::kernels::compute_panel(constant, o);
    check_same<float>(c, logratio::accumulate_panel_scalar(constant, o).finish(), "constant");
    CHECK(test::entry(c, "delta_std") == 0.0);
    CHECK(std::fabs(test::entry(c, "ratio_std")) < 1e-12);
    CHECK(test::spec_close(test::entry(c, "kl_k3"), std::expm1(0.25) - 0.25));
    CHECK(c.frac_abs_delta_gt[0] == 0.0);  // |delta| > 0.25: none
    CHECK(c.frac_abs_delta_gt[1] == 1.0);  // > the float below 0.25: all
}

TEST_CASE("float32 lanes: eight thresholds (any-count loop, both count words), rows past the counts' move") {
    // The float32 loop counts |delta| > threshold j in 16-bit field j % 4 of
    // count word j / 4, moved into the range's counters every 64 batches and
    // at each row's end: 8 thresholds (the loop for any number of them, both
    // words), rows of 3001 tokens (moves inside a row, a partial last batch),
    // deltas spread over every threshold; counts equal the scalar path's.
    std::mt19937_64 g(72);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    const std::size_t rows = 5, cols = 3001, n = rows * cols;
    std::vector<float> t(n), r(n);
    std::vector<std::uint8_t> m(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = -static_cast<float>(1.0 + 0.5 * (i % 3));
        t[i] = static_cast<float>(r[i] + u(g) * u(g) * 2.0);
        m[i] = g() % 5 != 0;
    }
    logratio::panel_options o;
    o.abs_delta_thresholds = {1e-4, 1e-3, 0.01, 0.03, 0.05, 0.1, 0.2, 0.4};
    const auto v = logratio::paired_view<float, std::uint8_t>::padded(t.data(), r.data(), m.data(), rows, cols);
    const auto simd = logratio::kernels::compute_panel(v, o);
    const auto scalar = logratio::accumulate_panel_scalar(v, o).finish();
    check_same<float>(simd, scalar, "eight thresholds");
    REQUIRE(simd.frac_abs_delta_gt.size() == 8);
    for (std::size_t k = 0; k < 8; ++k) CHECK(simd.frac_abs_delta_gt[k] == scalar.frac_abs_delta_gt[k]);
    std::uint64_t above_01 = 0, kept = 0;  // one count by hand: |delta| > 0.1
    for (std::size_t i = 0; i < n; ++i)
        if (m[i]) {
            ++kept;
            above_01 += std::fabs(static_cast<double>(t[i]) - static_cast<double>(r[i])) > 0.1;
        }
    CHECK(simd.frac_abs_delta_gt[5] == static_cast<double>(above_01) / static_cast<double>(kept));
    CHECK(above_01 > 1000);  // the field would have wrapped at 8 bits within a row
}
