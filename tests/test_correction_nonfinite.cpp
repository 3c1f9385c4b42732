// correct() with nonfinite_policy::omit (correction_options::nonfinite).
//
// How each expected value was obtained: the definition itself -- a masked-in
// token with a NaN/Inf train or rollout log-prob is a masked-out token -- so
// every result with omit is compared bit for bit (weights, mask, every
// metric, the serialized sums) with the result on the same data whose mask
// has those tokens switched off; nonfinite_tokens is the number planted.
// Checked for every option (token / sequence / geometric IS, each rejection
// statistic at each aggregate, veto, the short cut's modes) on the SIMD path
// (logratio::kernels: each level through dispatch with LOGRATIO_SIMD, or the
// header-only kernels at the build's level) and on the scalar path, padded
// and packed, float / double / bfloat16, one and two threads; for slime's
// and TRL's modes; through range splits, merge and serialization (the
// version-1 state of the previous release is still read). raise still names
// the token; a positive log-prob still raises with omit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <logratio/correction/correction.hpp>
#include <logratio/dispatch/kernels.hpp>

namespace {

using logratio::correction_options;
using logratio::correction_result;
using logratio::nonfinite_policy;

constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

/// Bit-identical doubles (NaN equals NaN).
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

/// The same counts and metrics: bit for bit, or (`rel` > 0) to a relative
/// `rel` (merged ranges add their sums in another order).
void check_same_results(const correction_result& a, const correction_result& b, double rel = 0.0) {
    CHECK(a.tokens == b.tokens);
    CHECK(a.sequences == b.sequences);
    const auto x = logratio::correction_entries(a), y = logratio::correction_entries(b);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        CAPTURE(x[i].first);
        CHECK(x[i].first == y[i].first);
        if (rel > 0.0 && !std::isnan(y[i].second))
            CHECK(x[i].second == doctest::Approx(y[i].second).epsilon(rel));
        else
            CHECK_MESSAGE(same(x[i].second, y[i].second), x[i].second << " vs " << y[i].second);
    }
}

template <class W>
bool same_bits(const std::vector<W>& a, const std::vector<W>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(W)) == 0;
}

/// Log-probs of `rows` sequences of `len` slots: small deltas (most batches
/// inside the short cut's interval), some wide ones, |delta| > 20, masked-out
/// garbage; NaN/Inf planted at masked-in positions (`bad`): in the train or
/// rollout log-probs or both, at a sequence's first and last slot, in the
/// middle of a short-cut run, a whole sequence of them, next to large deltas.
struct planted {
    std::vector<double> t, r;
    std::vector<std::uint8_t> m;
    std::vector<std::size_t> bad;
    std::size_t rows, len;

    planted(std::size_t rows_, std::size_t len_, unsigned seed) : rows(rows_), len(len_) {
        std::mt19937_64 g(seed);
        std::normal_distribution<double> nd(0.0, 0.004);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        t.resize(rows * len);
        r.resize(rows * len);
        m.assign(rows * len, 1);
        for (std::size_t i = 0; i < t.size(); ++i) {
            const std::size_t row = i / len;
            double d = nd(g);
            if (row % 5 == 3) d *= 100.0;  // wide: full steps and rejections
            r[i] = -1.0 - 2.0 * u(g);
            if (row % 7 == 6 && i % 23 == 0) {  // beyond the clamp
                r[i] = -30.0;
                d = i % 2 ? 24.0 : -26.0;
            }
            t[i] = std::min(r[i] + d, 0.0);
            if (u(g) < 0.08) {
                m[i] = 0;
                if (u(g) < 0.5) t[i] = qnan;  // masked-out garbage: never read
            }
        }
        auto plant = [&](std::size_t row, std::size_t col, double tv, double rv) {
            const std::size_t i = row * len + col;
            m[i] = 1;
            t[i] = tv;
            r[i] = rv;
            bad.push_back(i);
        };
        plant(0, 5, qnan, -1.0);
        plant(1, 0, -1.0, -inf);
        plant(1, len - 1, inf, -1.0);
        for (std::size_t c = 0; c < len; ++c) plant(2, c, c % 2 ? qnan : -inf, -1.0);  // a whole sequence
        plant(3, len / 2, -inf, -inf);  // delta NaN
        plant(4, 17, -2.0, qnan);
        plant(4, 18, qnan, qnan);
        plant(6, 40, -inf, -2.0);
        for (std::size_t row = 8; row < rows; row += 3) plant(row, (row * 37) % len, row % 2 ? qnan : -inf, -1.5);
    }
    /// The same data with the planted tokens masked out.
    std::vector<std::uint8_t> masked() const {
        std::vector<std::uint8_t> k = m;
        for (std::size_t i : bad) k[i] = 0;
        return k;
    }
};

std::vector<std::pair<std::string, correction_options>> option_sets() {
    using namespace logratio;
    std::vector<std::pair<std::string, correction_options>> out;
    auto add = [&](const std::string& name, std::optional<is_options> is, const std::string& rs = "",
                   const std::string& thr = "", std::optional<double> veto = std::nullopt) {
        correction_options o;
        o.is = is;
        if (!rs.empty()) o.rejection = parse_rejection(rs, thr);
        o.veto = veto;
        out.emplace_back(name, o);
    };
    const is_options tok(is_level::token, 2.0), seq(is_level::sequence, 2.0),
        geo(is_level::geometric, 1.01, 0.995, true);
    add("no options", std::nullopt);
    add("token IS", tok);
    add("token IS [0.8, 1.5] batch normalised", is_options(is_level::token, 1.5, 0.8, true));
    add("sequence IS", seq);
    add("geometric IS", geo);
    add("token IS + token_k1 + token_k3 + veto (the short cut)", tok, "token_k1,token_k3", "0.5_2,0.01", 1e-4);
    add("all token statistics + veto", tok, "token_k1,token_k2,token_k3", "0.9_1.1,0.02,0.01", 0.5);
    add("sequence options", seq, "seq_sum_k1,seq_mean_k2,seq_max_k3,seq_sum_k3,seq_max_k2", "2,0.01,0.01,1,0.5", 1e-3);
    add("k1 band without 1", std::nullopt, "token_k1", "1.1_1.5");
    add("veto above 1", tok, "token_k2", "0.5", 1.5);
    for (const char* rs : {"token_k1", "token_k2", "token_k3", "seq_sum_k1", "seq_sum_k2", "seq_sum_k3", "seq_mean_k1",
                           "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3"}) {
        const bool k1 = std::string(rs).find("k1") != std::string::npos;
        add(std::string(rs) + " + token IS", tok, rs, k1 ? "0.95_1.05" : "0.002");
    }
    return out;
}

struct outcome {
    correction_result r;
    std::vector<float> w;
    std::vector<std::uint8_t> k;
};

/// correct() (SIMD: logratio::kernels) or the scalar path, with weights and mask.
template <class T, class M>
outcome run(const logratio::paired_view<T, M>& v, const correction_options& o, bool scalar, unsigned threads = 1) {
    outcome x;
    x.w.assign(v.size(), -1.0f);
    x.k.assign(v.size(), 7);
    if (!scalar) {
        x.r = logratio::kernels::correct(v, o, x.w.data(), x.k.data(), threads);
        return x;
    }
    auto acc = logratio::correct_range_scalar(v, 0, v.num_sequences(), o, x.w.data(), x.k.data());
    logratio::scale_weights(x.w.data(), 0, v.size(), acc.weight_scale());
    x.r = acc.finish();
    return x;
}

/// omit on the planted data == raise on the data with the planted tokens masked out.
template <class T, class M>
void check_omit(const logratio::paired_view<T, M>& with_bad, const logratio::paired_view<T, M>& masked,
                std::size_t planted_count, bool scalar, unsigned threads = 1) {
    for (const auto& set : option_sets()) {
        const std::string& name = set.first;  // (a structured binding cannot be captured in C++17)
        const correction_options& base = set.second;
        CAPTURE(name);
        correction_options o = base;
        o.nonfinite = nonfinite_policy::omit;
        const outcome got = run(with_bad, o, scalar, threads);
        const outcome want = run(masked, base, scalar, threads);
        CHECK(got.r.nonfinite_tokens == planted_count);
        CHECK(want.r.nonfinite_tokens == 0);
        CHECK(same_bits(got.k, want.k));
        CHECK(same_bits(got.w, want.w));
        check_same_results(got.r, want.r);
        CHECK_THROWS_AS(run(with_bad, base, scalar, threads), logratio::value_error);
    }
}

template <class T>
std::vector<T> as(const std::vector<double>& x) {
    std::vector<T> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = static_cast<T>(x[i]);
    return y;
}

/// The nonfinite tokens' weights are 0 and mask entries 0.
void check_zeroed(const planted& p, const outcome& x) {
    for (std::size_t i : p.bad) {
        CHECK(x.k[i] == 0);
        CHECK(x.w[i] == 0.0f);
    }
}

}  // namespace

TEST_CASE("nonfinite omit: bit-identical to masking those tokens out, every option, SIMD and scalar, padded") {
    const planted p(40, 203, 1);  // odd length: partial batches
    const std::vector<std::uint8_t> mk = p.masked();
    for (bool scalar : {false, true}) {
        CAPTURE(scalar);
        check_omit(logratio::padded(p.t, p.r, p.m, p.rows, p.len), logratio::padded(p.t, p.r, mk, p.rows, p.len),
                   p.bad.size(), scalar);
    }
    // float inputs (NaN/Inf survive the conversion), two threads
    const std::vector<float> tf = as<float>(p.t), rf = as<float>(p.r);
    check_omit(logratio::padded(tf, rf, p.m, p.rows, p.len), logratio::padded(tf, rf, mk, p.rows, p.len), p.bad.size(),
               false, 2);
    // the planted tokens get weight 0 and mask 0
    correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 2.0);
    o.nonfinite = nonfinite_policy::omit;
    check_zeroed(p, run(logratio::padded(p.t, p.r, p.m, p.rows, p.len), o, false));
}

TEST_CASE("nonfinite omit: packed layout and bfloat16 inputs") {
    const planted p(24, 131, 2);
    const std::vector<std::uint8_t> mk = p.masked();
    std::vector<std::int64_t> off{0};
    for (std::size_t s = 0; s < p.rows; ++s) off.push_back(off.back() + static_cast<std::int64_t>(p.len));
    off[5] -= 7;  // uneven sequences
    off[9] += 11;
    for (bool scalar : {false, true}) {
        CAPTURE(scalar);
        check_omit(logratio::packed(p.t, p.r, off, p.m), logratio::packed(p.t, p.r, off, mk), p.bad.size(), scalar);
    }
    std::vector<logratio::bfloat16> tb(p.t.size()), rb(p.r.size());
    for (std::size_t i = 0; i < p.t.size(); ++i) {
        tb[i] = logratio::to_bfloat16(static_cast<float>(p.t[i]));
        rb[i] = logratio::to_bfloat16(static_cast<float>(p.r[i]));
    }
    check_omit(logratio::padded(tb, rb, p.m, p.rows, p.len), logratio::padded(tb, rb, mk, p.rows, p.len), p.bad.size(),
               false);
}

TEST_CASE("nonfinite raise names the token; omit still raises on a positive log-prob") {
    std::vector<double> t(3 * 40, -1.0), r(3 * 40, -1.002);
    std::vector<std::uint8_t> m(t.size(), 1);
    correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 2.0);
    o.rejection = logratio::parse_rejection("token_k1", "0.5_2");
    std::vector<float> w(t.size());
    std::vector<std::uint8_t> k(t.size());
    auto bad_t = t;
    bad_t[40 + 21] = qnan;
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::padded(bad_t, r, m, 3, 40), o, w.data(), k.data()),
                         doctest::Contains("train_logprobs: non-finite log-prob nan at row 1, column 21"),
                         logratio::value_error);
    auto bad_r = r;
    bad_r[2 * 40 + 39] = -inf;
    CHECK_THROWS_WITH_AS(
        logratio::correct_range_scalar(logratio::padded(t, bad_r, m, 3, 40), 0, 3, o, w.data(), k.data()),
        doctest::Contains("rollout_logprobs: non-finite log-prob -inf at row 2, column 39"), logratio::value_error);
    const std::vector<std::int64_t> off{0, 50, 120};
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::packed(t, bad_r, off, m), o, w.data(), k.data()),
                         doctest::Contains("rollout_logprobs: non-finite log-prob -inf at sequence 1, position 69"),
                         logratio::value_error);
    // omit: a NaN before a positive log-prob in the same sequence, and a
    // positive one alone (inside the short cut's interval), still raise
    o.nonfinite = nonfinite_policy::omit;
    auto both = bad_t;
    both[40 + 30] = 0.5;
    auto rr = r;
    rr[40 + 30] = 0.49;
    for (bool scalar : {false, true}) {
        CAPTURE(scalar);
        auto v = logratio::padded(both, rr, m, 3, 40);
        auto call = [&] {
            return scalar ? logratio::correct_range_scalar(v, 0, 3, o, w.data(), k.data()).finish()
                          : logratio::kernels::correct(v, o, w.data(), k.data());
        };
        CHECK_THROWS_WITH_AS(call(),
                             doctest::Contains("train_logprobs: positive log-prob 0.5 (> 1e-06) at row 1, column 30"),
                             logratio::value_error);
    }
    auto pos = t;
    pos[2 * 40 + 8] = 0.5;
    rr = r;
    rr[2 * 40 + 8] = 0.49;
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::padded(pos, rr, m, 3, 40), o, w.data(), k.data()),
                         doctest::Contains("positive log-prob 0.5 (> 1e-06) at row 2, column 8"),
                         logratio::value_error);
    // a sequence option (phase 1) too
    o.rejection = logratio::parse_rejection("seq_mean_k3", "0.1");
    CHECK_THROWS_WITH_AS(logratio::kernels::correct(logratio::padded(both, rr, m, 3, 40), o, w.data(), k.data()),
                         doctest::Contains("positive log-prob 0.5 (> 1e-06) at row 1, column 30"),
                         logratio::value_error);
    // omit leaves a clean batch's result as raise gives it, nonfinite_tokens 0
    correction_options raise = o;
    raise.nonfinite = nonfinite_policy::raise;
    const auto v = logratio::padded(t, r, m, 3, 40);
    const correction_result a = logratio::kernels::correct(v, o, w.data(), k.data());
    CHECK(a.nonfinite_tokens == 0);
    check_same_results(a, logratio::kernels::correct(v, raise, w.data(), k.data()));
    // every masked-in token non-finite: the empty-input rule, the count
    std::vector<double> all_nan(t.size(), qnan);
    const correction_result e =
        logratio::kernels::correct(logratio::padded(all_nan, r, m, 3, 40), o, w.data(), k.data());
    CHECK(e.tokens == 0);
    CHECK(e.nonfinite_tokens == t.size());
    CHECK(std::isnan(e.offpolicy.kl));
}

TEST_CASE("nonfinite omit: range splits merge, through serialization, to the whole batch") {
    const planted p(30, 97, 3);
    const auto v = logratio::padded(p.t, p.r, p.m, p.rows, p.len);
    const std::vector<std::uint8_t> mk = p.masked();
    const auto vm = logratio::padded(p.t, p.r, mk, p.rows, p.len);
    correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 1.5, std::nullopt, true);
    o.rejection = logratio::parse_rejection("token_k1,seq_mean_k3,seq_max_k2", "0.9_1.1,0.001,0.02");
    o.veto = 0.5;
    o.nonfinite = nonfinite_policy::omit;
    std::vector<float> w1(v.size()), w2(v.size());
    std::vector<std::uint8_t> m1(v.size()), m2(v.size());
    const auto whole = logratio::correct_range(v, 0, p.rows, o, w1.data(), m1.data());
    CHECK(whole.nonfinite_tokens == p.bad.size());
    // the sums are those of the masked data (only the count differs)
    auto clean = logratio::correct_range(vm, 0, p.rows, o, w2.data(), m2.data());
    CHECK(clean.nonfinite_tokens == 0);
    clean.nonfinite_tokens = whole.nonfinite_tokens;
    CHECK(clean.serialize() == whole.serialize());
    CHECK(m1 == m2);
    CHECK(same_bits(w1, w2));
    for (std::uint64_t cut : {std::uint64_t(1), std::uint64_t(3), p.rows / 2, p.rows - 1}) {
        CAPTURE(cut);
        auto a = logratio::correct_range(v, 0, cut, o, w2.data(), m2.data());
        const auto b = logratio::correct_range(v, cut, p.rows, o, w2.data(), m2.data());
        const std::vector<std::uint8_t> bytes = b.serialize();
        REQUIRE(bytes.size() > 6);
        CHECK(bytes[4] == 2);  // format version 2
        const auto b2 = logratio::correction_accumulator::deserialize(bytes);
        CHECK(b2.nonfinite_tokens == b.nonfinite_tokens);
        CHECK(b2.options.nonfinite == nonfinite_policy::omit);
        CHECK(b2.serialize() == bytes);
        a.merge(b2);
        CHECK(a.nonfinite_tokens == p.bad.size());
        CHECK(m1 == m2);
        check_same_results(a.finish(), whole.finish(), 1e-12);
        CHECK(a.finish().nonfinite_tokens == p.bad.size());
    }
    // threads: the same outputs and metrics as one
    std::vector<float> w3(v.size());
    std::vector<std::uint8_t> m3(v.size());
    const auto r1 = logratio::kernels::correct(v, o, w1.data(), m1.data(), 1);
    const auto r2 = logratio::kernels::correct(v, o, w3.data(), m3.data(), 2);
    CHECK(r2.nonfinite_tokens == p.bad.size());
    CHECK(m1 == m3);
    CHECK(same_bits(w1, w3));
    CHECK(r1.tokens == r2.tokens);
}

namespace {
// The previous release's state (format version 1) of correct_range_scalar
// over the 2 x 4 case below with token IS C = 3, token_k1 0.3_2.5 +
// seq_max_k2 0.5, veto 0.4 -- written by logratio at 0f686cf.
const char* const version1_state =
    "4c52434101000100000000000000084000000000000000000000020000000000"
    "333333333333d33f000000000000044003010000000000000000000000000000"
    "e03f019a9999999999d93f8dedb5a0f7c6b03e04000000000000000200000000"
    "0000000000000000001e40000000000000044000000000000015400000000000"
    "00e03f0000000000001040000000000000f07f000000000000f0ff0000000000"
    "0008400000000000001a40abaaaaaaaaaa10400000000000000c400000000000"
    "00e03f0000000000000040010000000000000000000000000000000000000000"
    "0000000000000000000000010000000000000000000000000000000300000000"
    "00000001000000000000000200000000000000aaaaaaaaaaaa0440e4388ee338"
    "0e1040abaaaaaaaaaaf23f000000000000104000000000000000000000000000"
    "0000000000000000000000ef39fafe422ef6bf21a7bdfc7843f3bf62b16d709d"
    "480340ef39fafe422ef6bff039fafe422ee63fef39fafe422ef63f0000000000"
    "0000000100000000000000010000000000000000000000000000000100000000"
    "00000001000000000000000200000000000000ef39fafe422ee6bf8ec582ffbd"
    "bfee3fef39fafe422ef6bf000000000000008000000000000000000000000000"
    "0000000000000000000000de6c923fc6e7fa3f00000000000000000000000000"
    "000000000000000000f07f000000000000f0ff8ec582ffbdbfee3f0000000000"
    "0000000000000000000000010000000000000001000000000000000000000000"
    "0000000100000000000000020000000000000079bbb1bfd637e33f333245a6c0"
    "9ed03f91c582ffbdbfce3f8ec582ffbdbfee3f0000000000001040160ad13fe7"
    "87d33f984729dfc6e9a93f010000000000000001000000000000000000000000"
    "0000000000000000000000ef39fafe422ef63f09e38280dee800400000000000"
    "403140489d4b2f5f1b3940847141406f74124006b16fbfe51544400000000000"
    "001840ef39fafe422ef63f000000000000f43fffffffffffff2d400200000000"
    "000000ef39fafe422ee6bf8ec582ffbdbfee3fef39fafe422ef6bf0000000000"
    "000000";

std::vector<std::uint8_t> from_hex(const std::string& h) {
    std::vector<std::uint8_t> b;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        b.push_back(static_cast<std::uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
    return b;
}
}  // namespace

TEST_CASE("nonfinite: the serialized format -- version 2, and version 1 still read") {
    std::vector<double> t, r;
    std::vector<std::uint8_t> m{1, 1, 1, 0, 1, 0, 0, 0};
    const double d[8] = {std::log(2.0), 0.0, -std::log(2.0), 0.0, std::log(4.0), 0.0, 0.0, 0.0};
    for (double x : d) {
        r.push_back(-3.0);
        t.push_back(-3.0 + x);
    }
    correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 3.0);
    o.rejection = logratio::parse_rejection("token_k1,seq_max_k2", "0.3_2.5,0.5");
    o.veto = 0.4;
    std::vector<float> w(8);
    std::vector<std::uint8_t> k(8);
    const auto now = logratio::correct_range_scalar(logratio::padded(t, r, m, 2, 4), 0, 2, o, w.data(), k.data());
    const std::vector<std::uint8_t> v1 = from_hex(version1_state);
    REQUIRE(v1.size() == 803);
    const auto old = logratio::correction_accumulator::deserialize(v1);
    CHECK(old.nonfinite_tokens == 0);
    CHECK(old.options.nonfinite == nonfinite_policy::raise);
    CHECK(old.tokens == 4);
    CHECK(old.serialize() == now.serialize());  // the same sums, now written as version 2
    const std::vector<std::uint8_t> v2 = now.serialize();
    CHECK(v2.size() == v1.size() + 9);  // the policy byte and nonfinite_tokens
    CHECK(v2[4] == 2);
    CHECK(v2[5] == 0);
    // a version-1 state merges with a version-2 one
    auto merged = logratio::correction_accumulator::deserialize(v1);
    merged.merge(now);
    CHECK(merged.tokens == 8);
    // unknown version, bad policy byte
    auto bad = v2;
    bad[4] = 3;
    CHECK_THROWS_WITH_AS(logratio::correction_accumulator::deserialize(bad),
                         doctest::Contains("unsupported format version 3 (this build reads 1 and 2)"),
                         logratio::format_error);
    // the policy byte follows positive_tolerance, the last option
    bad = v2;
    std::size_t at = 0;
    const double tol = o.positive_tolerance;
    for (std::size_t i = 6; i + 8 <= bad.size(); ++i)
        if (std::memcmp(&bad[i], &tol, 8) == 0) {
            at = i + 8;
            break;
        }
    REQUIRE(at != 0);
    CHECK(bad[at] == 0);
    bad[at] = 2;
    CHECK_THROWS_WITH_AS(logratio::correction_accumulator::deserialize(bad), doctest::Contains("bad nonfinite policy"),
                         logratio::format_error);
}

TEST_CASE("nonfinite omit: slime's and TRL's modes") {
    const planted p(20, 77, 4);
    const std::vector<std::uint8_t> mk = p.masked();
    const auto v = logratio::padded(p.t, p.r, p.m, p.rows, p.len);
    const auto vm = logratio::padded(p.t, p.r, mk, p.rows, p.len);
    std::vector<std::int64_t> off{0};
    for (std::size_t s = 0; s < p.rows; ++s) off.push_back(off.back() + static_cast<std::int64_t>(p.len));
    const auto pk = logratio::packed(p.t, p.r, off, p.m);
    const auto pkm = logratio::packed(p.t, p.r, off, mk);
    for (const char* mode : {"slime", "slime:tis", "slime:icepop", "slime:mis-truncate-token",
                             "slime:mis-clip-sequence", "slime:mis-mask-geometric", "trl:token_truncate",
                             "trl:token_mask", "trl:sequence_truncate", "trl:sequence_mask"}) {
        CAPTURE(mode);
        const std::string name = mode;
        correction_options o;
        o.flavour = name.rfind("trl", 0) == 0 ? logratio::framework::trl : logratio::framework::slime;
        if (name != "slime") o.mode = logratio::parse_mode(name);
        if (name.find("mis-clip") != std::string::npos) {
            o.mode->use_rs = true;
            o.mode->rs_veto_threshold = 0.3;
            o.mode->tis_batch_normalize = true;
        }
        correction_options omit = o;
        omit.nonfinite = nonfinite_policy::omit;
        for (int layout = 0; layout < 2; ++layout) {
            const outcome got = layout ? run(pk, omit, false) : run(v, omit, false);
            const outcome want = layout ? run(pkm, o, false) : run(vm, o, false);
            CHECK(got.r.nonfinite_tokens == p.bad.size());
            CHECK(same_bits(got.k, want.k));
            CHECK(same_bits(got.w, want.w));
            REQUIRE(got.r.framework_metrics.size() == want.r.framework_metrics.size());
            for (std::size_t i = 0; i < got.r.framework_metrics.size(); ++i) {
                CAPTURE(got.r.framework_metrics[i].first);
                CHECK(same(got.r.framework_metrics[i].second, want.r.framework_metrics[i].second));
            }
        }
        CHECK_THROWS_AS(run(v, o, false), logratio::value_error);
    }
}
