// The float32 interval pass of the fused panel quantiles
// (quantiles/f32_intervals.hpp, f32_interval_select.hpp): the AVX-512 pass
// against its one-token reference (counts and stored tokens identical, in
// every tail length, with and without a mask, omitting NaN/Inf), the bin
// search against a plain count, and the selection against a sort. Built at
// x86-64-v4 (skipped, exit 77, on a CPU without AVX-512).
#include "test_util.hpp"

#include <logratio/panel/panel_quantiles.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <typeinfo>
#include <limits>
#include <random>
#include <vector>

namespace {

namespace D = logratio::detail;

/// Log-probs with delta = 0.01 * Student-t (3 dof), some exact ties, some
/// NaN/Inf when `bad`, masked in with probability 0.8.
void make_tokens(std::size_t n, std::uint64_t seed, bool bad, std::vector<float>& t, std::vector<float>& r,
                 std::vector<std::uint8_t>& m) {
    std::mt19937_64 g(seed);
    std::student_t_distribution<double> heavy(3.0);
    std::uniform_real_distribution<double> u(0, 1);
    t.resize(n);
    r.resize(n);
    m.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = static_cast<float>(-0.05 - 3.0 * u(g));
        t[i] = u(g) < 0.1 ? r[i] : std::min(r[i] + static_cast<float>(0.01 * heavy(g)), -1e-3f);
        if (bad && u(g) < 0.01) t[i] = u(g) < 0.5 ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::infinity();
        m[i] = u(g) < 0.8;
    }
}

/// The intervals the fused pass would use for these tokens.
D::f32_interval_set plan_for(const logratio::paired_view<float, std::uint8_t>& v) {
    const D::f32_key_sample s = D::sample_f32_keys(v);
    D::f32_interval_set set;
    double share = 0;
    REQUIRE(D::plan_f32_intervals(s, logratio::default_delta_probs(), logratio::default_abs_delta_probs(), set, share));
    CHECK(share > 0.0);
    CHECK(share < 0.25);
    return set;
}

struct pass_result {
    D::f32_interval_counts c;
    std::vector<float> t, r;
};

pass_result run_pass(const logratio::paired_view<float, std::uint8_t>& v, std::uint64_t b, std::uint64_t e, bool omit,
                     const D::f32_interval_set& set, bool simd) {
    pass_result p;
    p.t.assign(e - b + 64, 0.0f);
    p.r.assign(e - b + 64, 0.0f);
    p.c.t = p.t.data();
    p.c.r = p.r.data();
    if (simd) D::count_intervals_avx512(v, b, e, omit, set, p.c);
    else D::count_intervals_scalar(v, b, e, omit, set, p.c);
    return p;
}

}  // namespace

TEST_CASE("f32 interval pass: AVX-512 equals the one-token reference at every tail, mask and policy") {
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    const std::size_t n = std::size_t(1) << 17;
    make_tokens(n, 5, true, t, r, m);
    for (bool masked : {true, false}) {
        const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(n)};
        const auto v = masked ? logratio::packed(t, r, cu, m) : logratio::packed(t, r, cu);
        std::vector<float> tf, rf;  // finite copies for the sample
        std::vector<std::uint8_t> mf;
        make_tokens(n, 5, false, tf, rf, mf);
        const D::f32_interval_set set = plan_for(logratio::padded(tf, rf, mf, n / 128, 128));
        for (std::uint64_t len : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(15), std::uint64_t(16),
                                  std::uint64_t(17), std::uint64_t(31), std::uint64_t(32), std::uint64_t(33),
                                  std::uint64_t(1000), std::uint64_t(20000), std::uint64_t(n - 7)}) {
            CAPTURE(masked);
            CAPTURE(len);
            const std::uint64_t b = 7;
            const pass_result s = run_pass(v, b, b + len, true, set, false);
            const pass_result x = run_pass(v, b, b + len, true, set, true);
            CHECK(x.c.tokens == s.c.tokens);
            CHECK(x.c.used == s.c.used);
            for (int j = 0; j < D::f32_delta_intervals; ++j) CHECK(x.c.ge_d[j] == s.c.ge_d[j]);
            for (int j = 0; j < D::f32_abs_intervals; ++j) CHECK(x.c.ge_a[j] == s.c.ge_a[j]);
            bool same = true;
            for (std::size_t i = 0; i < s.c.used; ++i) same = same && x.t[i] == s.t[i] && x.r[i] == s.r[i];
            CHECK(same);
            if (len > 10000) CHECK(s.c.used > 0);
        }
    }
}

TEST_CASE("f32 interval pass: counts at or above each interval equal a plain count over the exact keys") {
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    const std::size_t n = std::size_t(1) << 16;
    make_tokens(n, 9, false, t, r, m);
    const auto v = logratio::padded(t, r, m, n / 128, 128);
    const D::f32_interval_set set = plan_for(v);
    // more than 4000 flushes of the 4-bit counters (2^21 tokens in one call) exercise the 16-bit drain
    std::vector<float> tb, rb;
    std::vector<std::uint8_t> mb;
    for (int k = 0; k < 32; ++k) {
        tb.insert(tb.end(), t.begin(), t.end());
        rb.insert(rb.end(), r.begin(), r.end());
        mb.insert(mb.end(), m.begin(), m.end());
    }
    const auto big = logratio::padded(tb, rb, mb, tb.size() / 128, 128);
    const pass_result x = run_pass(big, 0, big.size(), false, set, true);
    std::uint64_t tokens = 0, ge_d[D::f32_delta_intervals] = {}, ge_a[D::f32_abs_intervals] = {};
    for (std::size_t i = 0; i < tb.size(); ++i) {
        if (!mb[i]) continue;
        const float c = tb[i] - rb[i];
        ++tokens;
        for (int j = 0; j < D::f32_delta_intervals; ++j) ge_d[j] += D::f32_order_key(c) >= set.lo_d[j];
        for (int j = 0; j < D::f32_abs_intervals; ++j) ge_a[j] += D::f32_abs_key(c) >= set.lo_a[j];
    }
    CHECK(x.c.tokens == tokens);
    for (int j = 0; j < D::f32_delta_intervals; ++j) CHECK(x.c.ge_d[j] == ge_d[j]);
    for (int j = 0; j < D::f32_abs_intervals; ++j) CHECK(x.c.ge_a[j] == ge_a[j]);
}

TEST_CASE("f32 interval selection: numpy's linear quantiles of the exact deltas, or a reported miss") {
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    const std::size_t n = std::size_t(1) << 17;
    make_tokens(n, 13, false, t, r, m);
    const auto v = logratio::padded(t, r, m, n / 128, 128);
    const D::f32_interval_set set = plan_for(v);
    pass_result x = run_pass(v, 0, v.size(), false, set, true);
    std::vector<double> d, a;
    for (std::size_t i = 0; i < n; ++i)
        if (m[i]) {
            d.push_back(static_cast<double>(t[i]) - static_cast<double>(r[i]));
            a.push_back(std::fabs(d.back()));
        }
    const auto& dp = logratio::default_delta_probs();
    const auto& ap = logratio::default_abs_delta_probs();
    std::vector<double> qd, qa;
    REQUIRE(D::resolve_f32_intervals(set, {&x.c}, d.size(), dp, ap, qd, qa));
    CHECK(qd == logratio::quantiles(d.begin(), d.end(), dp));
    CHECK(qa == logratio::quantiles(a.begin(), a.end(), ap));
    // a token total that is not the panel's, or intervals that hold no rank: no answer, not a guess
    CHECK_FALSE(D::resolve_f32_intervals(set, {&x.c}, d.size() + 1, dp, ap, qd, qa));
    D::f32_interval_set off = set;
    for (int j = 0; j < D::f32_delta_intervals; ++j) off.lo_d[j] = off.hi_d[j] = std::numeric_limits<std::int32_t>::max();
    pass_result y = run_pass(v, 0, v.size(), false, off, true);
    CHECK_FALSE(D::resolve_f32_intervals(off, {&y.c}, d.size(), dp, ap, qd, qa));
}

namespace {

/// The float whose delta order key is o (f32_order_key is its own inverse on the bits).
float float_of_order_key(std::int32_t o) {
    const std::int32_t b = o ^ static_cast<std::int32_t>(static_cast<std::uint32_t>(o >> 31) >> 1);
    float c;
    std::memcpy(&c, &b, 4);
    return c;
}

/// Keys at and next to every interval bound of a set (both sides, both
/// signs), the extremes, NaNs of either sign, infinities, zeros and subnormals.
std::vector<float> edge_floats(const D::f32_interval_set& s) {
    std::vector<std::int32_t> keys{std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), -1, 0, 1};
    const auto near = [&](std::int32_t k) {
        for (std::int64_t d : {-1, 0, 1})
            keys.push_back(static_cast<std::int32_t>(std::clamp<std::int64_t>(k + d, std::numeric_limits<std::int32_t>::min(),
                                                                              std::numeric_limits<std::int32_t>::max())));
    };
    for (int j = 0; j < D::f32_delta_intervals; ++j) near(s.lo_d[j]), near(s.hi_d[j]);
    std::vector<float> out;
    for (std::int32_t k : keys) out.push_back(float_of_order_key(k));
    for (int j = 0; j < D::f32_abs_intervals; ++j)
        for (std::int32_t k : {s.lo_a[j] - 1, s.lo_a[j], s.hi_a[j] - 1, s.hi_a[j]}) {
            float c;
            std::memcpy(&c, &k, 4);
            out.push_back(c);
            out.push_back(-c);
        }
    const float inf = std::numeric_limits<float>::infinity();
    for (float c : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), 0.0f,
                    -0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()})
        out.push_back(c);
    return out;
}

/// stored_bin_pairs of arch A equals the one-token reference on (t, r), at every length up to 40 and in full.
template <class A>
void check_bins_equal(const std::vector<float>& t, const std::vector<float>& r, const D::f32_interval_set& s) {
    D::f32_bins<D::f32_delta_intervals> bd(s.lo_d, s.hi_d, 2 * D::f32_key_half, -(D::f32_key_half << 16));
    D::f32_bins<D::f32_abs_intervals> ba(s.lo_a, s.hi_a, D::f32_key_half, 0);
    std::vector<std::uint32_t> want(t.size()), got(t.size() + 1, 0xdeadbeefu);
    D::stored_bin_pairs<D::scalar_bins>(t.data(), r.data(), t.size(), bd, ba, want.data());
    D::stored_bin_pairs<A>(t.data(), r.data(), t.size(), bd, ba, got.data());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < t.size(); ++i) bad += got[i] != want[i];
    CHECK(bad == 0);
    CHECK(got[t.size()] == 0xdeadbeefu);  // nothing written past n
    for (std::size_t n = 0; n <= std::min<std::size_t>(40, t.size()); ++n) {
        std::vector<std::uint32_t> part(n + 1, 0xdeadbeefu);
        D::stored_bin_pairs<A>(t.data() + 3 % (t.size() - n + 1), r.data() + 3 % (t.size() - n + 1), n, bd, ba, part.data());
        bool same = part[n] == 0xdeadbeefu;
        for (std::size_t i = 0; i < n; ++i) same = same && part[i] == want[i + 3 % (t.size() - n + 1)];
        CHECK(same);
    }
}

template <class A>
void check_resolve_equal(const logratio::paired_view<float, std::uint8_t>& v, const D::f32_interval_set& set, bool omit,
                         const std::vector<double>& d, const std::vector<double>& a) {
    pass_result x = run_pass(v, 0, v.size(), omit, set, true);
    std::vector<double> qd, qa;
    REQUIRE(D::resolve_f32_intervals<A>(set, {&x.c}, d.size(), logratio::default_delta_probs(),
                                        logratio::default_abs_delta_probs(), qd, qa));
    CHECK(qd == logratio::quantiles(d.begin(), d.end(), logratio::default_delta_probs()));
    CHECK(qa == logratio::quantiles(a.begin(), a.end(), logratio::default_abs_delta_probs()));
}

/// Each instruction set the machine has (xsimd's run-time check), then the reference.
template <class F>
void for_each_lanes(F&& f) {
    const auto have = xsimd::available_architectures();
    if (have.avx512bw) f(xsimd::avx512bw{});
    if (have.avx2) f(xsimd::avx2{});
    if (have.sse4_2) f(xsimd::sse4_2{});
    if (have.sse2) f(xsimd::sse2{});
    f(D::scalar_bins{});
}

}  // namespace

TEST_CASE("f32 stored bins: every instruction set equals the one-token reference, bounds, NaN, Inf and zeros included") {
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    const std::size_t n = std::size_t(1) << 15;
    make_tokens(n, 21, false, t, r, m);
    const D::f32_interval_set set = plan_for(logratio::padded(t, r, m, n / 128, 128));
    // every interval slot of either side in use (no empty one); and a set whose first interval
    // starts at the lowest key and whose last ends at the (clamped) highest
    D::f32_interval_set wide = set;
    wide.lo_d[0] = std::numeric_limits<std::int32_t>::min();
    wide.hi_d[D::f32_delta_intervals - 1] = std::numeric_limits<std::int32_t>::max();
    wide.lo_d[D::f32_delta_intervals - 1] = std::max(wide.lo_d[D::f32_delta_intervals - 2] + (1 << 16), 0x7f000000);
    wide.hi_a[D::f32_abs_intervals - 1] = std::numeric_limits<std::int32_t>::max();
    for (const D::f32_interval_set* s : {&set, static_cast<const D::f32_interval_set*>(&wide)}) {
        std::vector<float> te = edge_floats(*s), re(te.size(), 0.0f);
        te.insert(te.end(), t.begin(), t.end());  // and ordinary tokens, stored or not
        re.insert(re.end(), r.begin(), r.end());
        for_each_lanes([&](auto arch) {
            CAPTURE(typeid(arch).name());
            check_bins_equal<decltype(arch)>(te, re, *s);
        });
    }
}

TEST_CASE("f32 wanted positions: every instruction set finds the packed bins of the wanted bins, at every tail") {
    std::mt19937 g(5);
    std::vector<std::uint32_t> u(1000);
    // low halves from 64 delta bins, high halves from 48 |delta| bins: ~1 in 10 wanted
    for (auto& w : u) w = static_cast<std::uint32_t>(g() % 64 + 4096) | static_cast<std::uint32_t>(g() % 48 + 8192) << 16;
    u[999] = 0xffffffffu;  // no bin, never wanted
    const std::vector<std::uint32_t> wd{4100, 4101, 4159}, wa{8200}, none;
    std::vector<std::uint32_t> want;
    for (std::uint32_t i = 0; i < u.size(); ++i)
        if ((u[i] & 0xffffu) == 4100 || (u[i] & 0xffffu) == 4101 || (u[i] & 0xffffu) == 4159 || u[i] >> 16 == 8200)
            want.push_back(i);
    REQUIRE(want.size() > 40);
    for_each_lanes([&](auto arch) {
        using A = decltype(arch);
        CAPTURE(typeid(arch).name());
        std::vector<std::uint32_t> got;
        D::wanted_positions<A>(u.data(), u.size(), wd, wa, got);
        CHECK(got == want);
        got.clear();
        D::wanted_positions<A>(u.data(), u.size(), none, none, got);
        CHECK(got.empty());
        for (std::size_t n = 0; n <= 40; ++n) {  // every tail, from an odd start
            got.clear();
            D::wanted_positions<A>(u.data() + 3, n, wd, wa, got);
            std::vector<std::uint32_t> w;
            for (const std::uint32_t i : want)
                if (i >= 3 && i < 3 + n) w.push_back(i - 3);
            CHECK(got == w);
        }
    });
}

TEST_CASE("f32 interval resolution: numpy's quantiles at every instruction set, on ties, bf16/f16 values, one interval and NaN/Inf") {
    std::vector<float> t, r;
    std::vector<std::uint8_t> m;
    const std::size_t n = std::size_t(1) << 16;
    for (int kind = 0; kind < 5; ++kind) {
        CAPTURE(kind);
        make_tokens(n, 31 + static_cast<std::uint64_t>(kind), kind == 4, t, r, m);
        for (std::size_t i = 0; i < n; ++i) {
            // (bf16, f16: delta widened 30x first, else nearly every delta is 0 or one bf16 step and
            // the sample plans no intervals: the bucket collector's case)
            if (kind == 1) t[i] = logratio::to_float(logratio::to_bfloat16(r[i] + 30 * (t[i] - r[i]))), r[i] = logratio::to_float(logratio::to_bfloat16(r[i]));
            if (kind == 2) t[i] = logratio::to_float(logratio::to_float16(r[i] + 30 * (t[i] - r[i]))), r[i] = logratio::to_float(logratio::to_float16(r[i]));
            if (kind == 3) r[i] = -1.0f, t[i] = i % 3 ? -0.75f : -0.75f + 0x1p-20f;  // every delta in one or two values
        }
        std::vector<float> tf = t, rf = r;  // finite copies for the sample
        for (std::size_t i = 0; i < n; ++i)
            if (!(std::isfinite(tf[i]) && std::isfinite(rf[i]))) tf[i] = rf[i];
        // all tokens in one interval: no plan from a sample (it would store them all), so the
        // interval by hand: the one 2^16-key bucket of both deltas, each side
        D::f32_interval_set set;
        if (kind == 3) {
            set.lo_d[0] = D::f32_order_key(0.25f) & ~0xffff, set.hi_d[0] = set.lo_d[0] + (1 << 16);
            set.lo_a[0] = D::f32_abs_key(0.25f) & ~0xffff, set.hi_a[0] = set.lo_a[0] + (1 << 16);
        } else {
            set = plan_for(logratio::padded(tf, rf, m, n / 128, 128));
        }
        std::vector<double> d, a;
        for (std::size_t i = 0; i < n; ++i)
            if (m[i] && std::isfinite(t[i]) && std::isfinite(r[i])) {
                d.push_back(static_cast<double>(t[i]) - static_cast<double>(r[i]));
                a.push_back(std::fabs(d.back()));
            }
        const auto v = logratio::padded(t, r, m, n / 128, 128);
        for_each_lanes([&](auto arch) {
            CAPTURE(typeid(arch).name());
            check_resolve_equal<decltype(arch)>(v, set, kind == 4, d, a);
        });
    }
}
