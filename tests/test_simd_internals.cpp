// The SIMD building blocks against their scalar references, at the level
// this file is compiled for: the panel's expm1 and exp polynomials and the
// doctor's alignment and breakdown scans. The kernels end to end run at
// every level through logratio::dispatch (the per-level ctest runs of
// test_core and test_doctor); these internals are not behind dispatch, so
// this small file is built once per x86-64 level (baseline, AVX2, AVX-512).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <logratio/detail/simd.hpp>
#include <logratio/doctor/diagnose.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/panel_quantiles.hpp>

#include "sanitized.hpp"

namespace dr = logratio::doctor;

TEST_CASE("the kernel's expm1 matches std::expm1 over the clamp range") {
    using V = xsimd::batch<double, xsimd::default_arch>;
    using ops = logratio::detail::simd_ops<V>;
    std::vector<double> xs;
    for (double x = -20.0; x <= 20.0; x += 0.001953125 * 3.1) xs.push_back(x);
    for (double x = 1e-300; x < 1.0; x *= 1.7) {
        xs.push_back(x);
        xs.push_back(-x);
    }
    for (double x : {0.0, -0.0, 20.0, -20.0, 0.34657359027997264, -0.34657359027997264, 1e-3, -1e-3}) xs.push_back(x);
    while (xs.size() % V::size) xs.push_back(0.5);
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); i += V::size) {
        alignas(64) double out[V::size];
        ops::expm1_clamped(V::load_unaligned(xs.data() + i)).store_aligned(out);
        for (std::size_t k = 0; k < V::size; ++k) {
            const double want = std::expm1(xs[i + k]);
            const double err = want == 0 ? std::fabs(out[k]) : std::fabs(out[k] - want) / std::fabs(want);
            worst = std::max(worst, err);
        }
    }
    INFO("worst relative error " << worst << " on " << xs.size() << " points");
    CHECK(worst < 1e-14);
    // the kernels' three steps (reduce, series, rebuild), and expm1_split
    // with the reduction, give expm1's bits
    std::size_t differ = 0, differ_split = 0;
    for (std::size_t i = 0; i < xs.size(); i += V::size) {
        alignas(64) double a[V::size], b[V::size], c[V::size];
        const V x = V::load_unaligned(xs.data() + i);
        V two_k;
        ops::expm1_rebuild(ops::expm1_small(ops::expm1_reduce(x, two_k)), two_k).store_aligned(a);
        ops::expm1_clamped(x).store_aligned(b);
        ops::expm1_split(x, true).store_aligned(c);
        for (std::size_t k = 0; k < V::size; ++k) {
            differ += std::memcmp(&a[k], &b[k], 8) != 0;
            differ_split += std::memcmp(&c[k], &b[k], 8) != 0;
        }
    }
    CHECK(differ == 0);
    CHECK(differ_split == 0);
}

TEST_CASE("expm1 without the reduction, up to expm1_small_bound: the same bits as the reduced expm1") {
    // The panel kernel takes expm1_small for batches whose |delta| are all at
    // most the bound; its sums must not depend on which batches did.
    using V = xsimd::batch<double, xsimd::default_arch>;
    using ops = logratio::detail::simd_ops<V>;
    const double bound = logratio::detail::expm1_small_bound;
    REQUIRE(bound * 1.4426950408889634 < 0.5);  // k = round(x / ln2) = 0
    std::vector<double> xs = {0.0, -0.0, bound, -bound, std::nextafter(bound, 0.0), 5e-324, -5e-324};
    std::mt19937_64 g(5);
    std::uniform_real_distribution<double> u(-bound, bound);
    for (int i = 0; i < 200000; ++i) xs.push_back(u(g));
    for (double x = 1e-300; x < bound; x *= 1.3) {
        xs.push_back(x);
        xs.push_back(-x);
    }
    while (xs.size() % V::size) xs.push_back(0.1);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < xs.size(); i += V::size) {
        alignas(64) double a[V::size], b[V::size], c[V::size];
        const V x = V::load_unaligned(xs.data() + i);
        ops::expm1_small(x).store_aligned(a);
        ops::expm1_clamped(x).store_aligned(b);
        ops::expm1_split(x, false).store_aligned(c);  // the kernels' form of the same
        for (std::size_t k = 0; k < V::size; ++k) {
            // +0 and -0 may differ in sign only where the result is zero
            if (std::memcmp(&a[k], &b[k], 8) != 0 && !(a[k] == 0.0 && b[k] == 0.0)) ++differ;
            differ += std::memcmp(&a[k], &c[k], 8) != 0;
        }
    }
    CHECK(differ == 0);
}

TEST_CASE("the fused quantile pass's bucket keys: the SIMD conversion equals the scalar one lane by lane") {
    using V = xsimd::batch<double, xsimd::default_arch>;
    std::vector<double> xs{0.0, -0.0, 1e-300, -1e-300, 1e-45, -1.4e-45, 3e19, -3e19, 1e300, -INFINITY, INFINITY};
    std::mt19937_64 g(9);
    std::normal_distribution<double> nd(0, 1);
    for (int i = 0; i < 4096; ++i) xs.push_back(nd(g) * std::pow(2.0, static_cast<double>(i % 90 - 60)));
    while (xs.size() % V::size) xs.push_back(0.25);
    for (std::size_t i = 0; i < xs.size(); i += V::size) {
        alignas(64) float out[V::size];
        logratio::detail::store_scaled_floats(V::load_unaligned(xs.data() + i), out);
        for (std::size_t k = 0; k < V::size; ++k) {
            std::uint32_t bits;
            std::memcpy(&bits, out + k, 4);
            CHECK((bits >> 16) == logratio::detail::raw_bucket(xs[i + k]));
        }
    }
}

TEST_CASE("the kernels' exps of non-positive arguments match std::exp (simd_ops's and the logits' table exp)") {
    using V = xsimd::batch<double, xsimd::default_arch>;
    using ops = logratio::detail::simd_ops<V>;
    std::vector<double> xs;
    for (double x = 0.0; x >= -707.9; x -= 0.001953125 * 7.3) xs.push_back(x);
    for (double x = 1e-300; x < 1.0; x *= 1.7) xs.push_back(-x);
    for (double x : {0.0, -0.0, -0.34657359027997264, -0.6931471805599453, -708.0, -700.0}) xs.push_back(x);
    while (xs.size() % V::size) xs.push_back(-0.5);
    auto check = [&](auto exp_of) {
        double worst = 0;
        for (std::size_t i = 0; i < xs.size(); i += V::size) {
            alignas(64) double out[V::size];
            exp_of(V::load_unaligned(xs.data() + i)).store_aligned(out);
            for (std::size_t k = 0; k < V::size; ++k)
                worst = std::max(worst, std::fabs(out[k] - std::exp(xs[i + k])) / std::exp(xs[i + k]));
        }
        INFO("worst relative error " << worst << " on " << xs.size() << " points");
        CHECK(worst < 1e-15);
        // below -708 (subnormal exp) and -inf: exactly 0
        alignas(64) double in[V::size], out[V::size];
        for (std::size_t k = 0; k < V::size; ++k) in[k] = k % 2 ? -INFINITY : -708.5 - 100.0 * k;
        exp_of(V::load_aligned(in)).store_aligned(out);
        for (std::size_t k = 0; k < V::size; ++k) CHECK(out[k] == 0.0);
    };
    check([](const V& x) { return ops::exp_nonpos(x); });
    check([](const V& x) { return logratio::detail::exp_nonpos_fast(x); });  // AVX-512: the table exp
}

TEST_CASE("doctor scan: the SIMD alignment sums equal the scalar reference (counts exactly, sums to 1e-12)") {
    // Sequence lengths around the batch width and the 2 edge slots at each
    // end; masked-out, unusable (0.0 with an unlikely other side, -9999)
    // and large-|δ| tokens, so every branch of both paths is taken.
    std::mt19937_64 g(7);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    std::exponential_distribution<float> lp(1.0f);
    const dr::detail::scan_scratch proto{};
    for (std::uint64_t n : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 12u, 13u, 16u, 17u, 31u, 64u, 1027u}) {
        std::vector<float> t(n), r(n);
        std::vector<std::uint8_t> m(n);
        for (std::uint64_t k = 0; k < n; ++k) {
            r[k] = -lp(g);
            t[k] = std::min(r[k] + nd(g), 0.0f);
            m[k] = g() % 5 != 0;
            if (g() % 17 == 0) r[k] = -9999.0f;
        }
        m[0] = 1;
        const auto v = logratio::padded(t, r, m, 1, n);
        dr::detail::scan_scratch w = proto;
        dr::scan_state ref, simd;
        std::uint64_t first = 0;
        REQUIRE(dr::detail::load_sequence(v, 0, n, ref, w, first));
        const std::size_t big_ref = dr::detail::scan_pairs_scalar(w, ref);
        const std::size_t big_simd = dr::detail::scan_pairs(w, simd);
        CAPTURE(n);
        CHECK(big_simd == big_ref);
        for (std::size_t s = 0; s < ref.shift_n.size(); ++s) {
            CHECK(simd.shift_n[s] == ref.shift_n[s]);
            CHECK(simd.shift_abs[s] == doctest::Approx(ref.shift_abs[s]).epsilon(1e-12));
        }
    }
}

namespace {
/// load_sequence against load_sequence_scalar on one view: slots, cells,
/// usable tokens, fill counts and bounds all equal (the SIMD load takes the
/// agreed exact zeros in its batches, the scalar one as rare tokens).
template <class T, class M>
void check_load(const logratio::paired_view<T, M>& v) {
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) {
        dr::detail::scan_scratch a, b;
        dr::scan_state ra, rb;
        std::uint64_t fa = 0, fb = 0;
        const std::uint64_t b0 = v.sequence_begin(s), e0 = v.sequence_end(s);
        const std::size_t t_bytes = sizeof(T), m_bytes = sizeof(M);
        CAPTURE(s);
        CAPTURE(t_bytes);
        CAPTURE(m_bytes);
        const bool la = dr::detail::load_sequence_scalar(v, b0, e0, ra, a, fa);
        REQUIRE(dr::detail::load_sequence(v, b0, e0, rb, b, fb) == la);
        if (!la) continue;
        CHECK(fb == fa);
        CHECK(b.t == a.t);
        CHECK(b.r == a.r);
        CHECK(b.ok == a.ok);
        CHECK(b.cell == a.cell);  // the SIMD load's cells against the byte table's bins
        CHECK(b.okbits == a.okbits);
        CHECK(rb.usable == ra.usable);
        CHECK(rb.sequences == ra.sequences);
        CHECK(rb.nan_or_positive == ra.nan_or_positive);
        for (int side = 0; side < 2; ++side) {
            CHECK(rb.fill[side].zeros == ra.fill[side].zeros);
            CHECK(rb.fill[side].flagged == ra.fill[side].flagged);
            CHECK(rb.fill[side].at_last == ra.fill[side].at_last);
            CHECK(rb.fill[side].sequences == ra.fill[side].sequences);
        }
    }
}

/// Log-probs with every kind of token the load classifies: plain, exact
/// 0.0 (agreed and unlikely), <= -50, -inf, NaN, tiny and large positive.
std::vector<double> odd_logprobs(std::mt19937_64& g, std::size_t n) {
    std::exponential_distribution<double> lp(1.0);
    std::vector<double> x(n);
    for (auto& e : x) {
        switch (g() % 29) {
            case 0: e = 0.0; break;
            case 6: e = -0.0; break;
            case 7: e = -1e-45; break;  // a float denormal: not an exact 0.0
            case 8: e = static_cast<double>(std::nextafter(static_cast<float>(-0.69314718055994531), 0.0f)); break;
            case 9: e = static_cast<double>(static_cast<float>(-0.69314718055994531)); break;  // below log(1/2)
            case 10: e = -50.0; break;
            case 11: e = static_cast<double>(std::nextafter(-50.0f, 0.0f)); break;
            case 1: e = -9999.0; break;
            case 2: e = -INFINITY; break;
            case 3: e = NAN; break;
            case 4: e = 1e-9; break;
            case 5: e = 0.5; break;
            default: e = -lp(g);
        }
    }
    return x;
}
}  // namespace

TEST_CASE("doctor scan: the SIMD load equals the scalar reference (every dtype, mask type and layout)") {
    std::mt19937_64 g(5);
    for (std::uint64_t n : {1u, 2u, 7u, 8u, 9u, 63u, 513u, 1030u}) {
        const auto td = odd_logprobs(g, 3 * n), rd = odd_logprobs(g, 3 * n);
        std::vector<std::uint8_t> m8(3 * n);
        std::vector<std::int32_t> m32(3 * n);
        for (std::size_t k = 0; k < m8.size(); ++k) m32[k] = m8[k] = g() % 5 != 0;
        const std::vector<float> tf(td.begin(), td.end()), rf(rd.begin(), rd.end());
        std::vector<logratio::bfloat16> tb, rb;
        for (std::size_t k = 0; k < td.size(); ++k) tb.push_back(logratio::to_bfloat16(tf[k])), rb.push_back(logratio::to_bfloat16(rf[k]));
        CAPTURE(n);
        check_load(logratio::padded(tf, rf, m8, 3, n));
        check_load(logratio::padded(td, rd, m8, 3, n));
        check_load(logratio::padded(tb, rb, m8, 3, n));
        check_load(logratio::padded(tf, rf, m32, 3, n));  // a mask type read through the staged path
        std::vector<logratio::float16> th, rh;
        for (std::size_t k = 0; k < td.size(); ++k) th.push_back(logratio::to_float16(tf[k])), rh.push_back(logratio::to_float16(rf[k]));
        check_load(logratio::padded(th, rh, m8, 3, n));
        std::vector<float> mf(m8.begin(), m8.end());
        for (std::size_t k = 0; k < mf.size(); k += 7) mf[k] = k % 2 ? -0.0f : 1.0f;  // a float mask, -0.0 included
        check_load(logratio::padded(tb, rb, mf, 3, n));
        std::unique_ptr<bool[]> mb(new bool[m8.size()]);
        for (std::size_t k = 0; k < m8.size(); ++k) mb[k] = m8[k] != 0;
        check_load(logratio::paired_view<float, bool>::padded(tf.data(), rf.data(), mb.get(), 3, n));
        const std::vector<std::int64_t> cu{0, 1, static_cast<std::int64_t>(n + 1), static_cast<std::int64_t>(3 * n)};
        check_load(logratio::packed(tf, rf, cu));
    }
}

TEST_CASE("doctor bins: the packed cell table and the SIMD cells give prob_bin's bins") {
    // Every 61st positive float up to +inf, and 3 ulps around each edge: the
    // packed table's bin equals the definition, and the SIMD cells of those
    // values (paired with a shifted copy as the other side, some lanes not
    // usable) equal the scalar cell() lane for lane.
    using B = xsimd::batch<double>;
    constexpr std::size_t L = B::size;
    const auto& lut = dr::detail::the_prob_lut();
    const auto& pc = dr::detail::the_prob_cells();
    std::vector<float> ms;
    // every 61st float (every 976th under the sanitizers: still ~8,600 per
    // binade; the edges below are swept whole either way)
    const std::uint32_t stride = test::sanitized ? 61 * 16 : 61;
    for (std::uint32_t bits = 0; bits <= 0x7F800000u; bits += stride) {
        float m;
        std::memcpy(&m, &bits, 4);
        REQUIRE(pc.bin(m) == lut.exact_bin(m));
        ms.push_back(m);
    }
    for (int b = 1; b < dr::prob_axis::bins; ++b) {
        float e = lut.edge[static_cast<std::size_t>(b)];
        for (int k = 0; k < 3; ++k) e = std::nextafter(e, 0.0f);
        for (int k = 0; k < 7; ++k, e = std::nextafter(e, INFINITY)) {
            CHECK(pc.bin(e) == lut.exact_bin(e));
            ms.push_back(e);
        }
    }
    ms.push_back(0.0f);
    while (ms.size() % L) ms.push_back(1.0f);
    alignas(64) double t[L], r[L], ok[L];
    std::uint32_t cells[L];
    const dr::detail::cell_lookup<B::arch_type> lk;
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < ms.size(); i += L) {
        for (std::size_t j = 0; j < L; ++j) {
            t[j] = -static_cast<double>(ms[i + j]);
            r[j] = -static_cast<double>(ms[(i + j + 12345) % ms.size()]);
            ok[j] = (i / L + j) % 5 ? 1.0 : 0.0;
        }
        if (i % (L * 1024) == 0) r[0] = 1e-9;  // a tolerated tiny positive log-prob: bin 63
        dr::detail::store_cells(lk, B::load_aligned(t), B::load_aligned(r), B::load_aligned(ok), cells);
        for (std::size_t j = 0; j < L; ++j) mismatches += cells[j] != pc.cell(t[j], r[j], ok[j] != 0.0);
    }
    CHECK(mismatches == 0);
}

TEST_CASE("doctor scan: the SIMD breakdown sums equal the scalar reference (counts and bins exactly, sums to 1e-12)") {
    // |δ| on both sides of the polynomial's 1/16 limit, masked-out and
    // filled slots, bucket lengths 1, 2, 4, ... and a partial last bucket.
    std::mt19937_64 g(11);
    std::normal_distribution<float> nd(0.0f, 0.08f);
    std::exponential_distribution<float> lp(0.5f);
    const dr::detail::prob_lut& lut = dr::detail::the_prob_lut();
    for (std::uint64_t n : {1u, 3u, 9u, 40u, 700u, 1024u}) {
        std::vector<float> t(n), r(n);
        std::vector<std::uint8_t> m(n);
        for (std::uint64_t k = 0; k < n; ++k) {
            r[k] = -std::min(lp(g), 40.0f);
            t[k] = std::min(r[k] + nd(g) * (g() % 9 == 0 ? 20.0f : 1.0f), 0.0f);
            m[k] = g() % 5 != 0;
            if (g() % 29 == 0) t[k] = -9999.0f;
        }
        m[0] = 1;
        const auto v = logratio::padded(t, r, m, 1, n);
        dr::detail::scan_scratch a, b;
        dr::scan_state ra, sb;
        std::uint64_t first = 0;
        REQUIRE(dr::detail::load_sequence(v, 0, n, ra, a, first));
        b = a;
        for (int pb = 0; static_cast<std::size_t>(dr::breakdowns::position_lo(pb)) < n; ++pb) {
            const std::size_t k1 = std::min<std::size_t>(n, dr::breakdowns::position_hi(pb) + 1);
            dr::detail::scan_bucket_scalar(a, lut, ra, pb, static_cast<std::size_t>(dr::breakdowns::position_lo(pb)),
                                           k1);
            dr::detail::scan_bucket(b, sb, pb, static_cast<std::size_t>(dr::breakdowns::position_lo(pb)), k1);
        }
        dr::detail::flush_probability(a, ra);
        dr::detail::flush_probability(b, sb);
        CAPTURE(n);
        CHECK(sb.negative == ra.negative);
        CHECK(sb.positive == ra.positive);
        CHECK(sb.above_tail == ra.above_tail);
        CHECK(sb.bd.joint == ra.bd.joint);
        auto same = [](const dr::delta_stats& x, const dr::delta_stats& y) {
            CHECK(x.count == y.count);
            CHECK(x.max_abs == y.max_abs);
            CHECK(x.sum_delta == doctest::Approx(y.sum_delta).epsilon(1e-12));
            CHECK(x.sum_abs == doctest::Approx(y.sum_abs).epsilon(1e-12));
            CHECK(x.sum_k3 == doctest::Approx(y.sum_k3).epsilon(1e-12));
        };
        for (int pb = 0; pb < dr::breakdowns::position_buckets; ++pb) {
            same(sb.bd.by_position[pb], ra.bd.by_position[pb]);
            CHECK(sb.slope[pb].n == ra.slope[pb].n);
            CHECK(sb.slope[pb].sxy == doctest::Approx(ra.slope[pb].sxy).epsilon(1e-12));
            CHECK(sb.slope[pb].sxx == doctest::Approx(ra.slope[pb].sxx).epsilon(1e-12));
            CHECK(sb.slope[pb].sx == doctest::Approx(ra.slope[pb].sx).epsilon(1e-12));
            CHECK(sb.slope[pb].sy == doctest::Approx(ra.slope[pb].sy).epsilon(1e-12));
        }
        for (int q = 0; q < dr::breakdowns::prob_buckets; ++q) same(sb.bd.by_rollout_prob[q], ra.bd.by_rollout_prob[q]);
    }
}
