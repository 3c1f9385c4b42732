// logratio doctor: each planted bug of tests/doctor/planted.hpp (dumps of the
// bundled tiny model, real bf16-vs-float32 mismatch) gives its own finding
// and no other warn/fail; the clean dump gives none. Plus the breakdowns'
// merge/serialize properties and the bin functions against their definitions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <logratio/dispatch/kernels.hpp>
#include <logratio/doctor/diagnose.hpp>

#include "doctor/planted.hpp"

namespace dr = logratio::doctor;

namespace {

const planted::dump& dump_of(planted::bug b) {
    static std::map<planted::bug, planted::dump> cache;
    auto it = cache.find(b);
    if (it == cache.end()) it = cache.emplace(b, planted::sample(b)).first;
    return it->second;
}

dr::diagnosis diagnose_dump(planted::bug b, unsigned threads = 1) {
    const auto& d = dump_of(b);
    dr::diagnose_options o;
    o.threads = threads;
    return logratio::kernels::diagnose(
        logratio::padded(d.train, d.rollout, d.mask, static_cast<std::uint64_t>(d.B), static_cast<std::uint64_t>(d.T)),
        o);
}

/// check -> severity of every finding that is not ok.
std::map<std::string, dr::severity> raised(const dr::diagnosis& d) {
    std::map<std::string, dr::severity> out;
    for (const auto& f : d.findings)
        if (dr::raises(f.level)) out[f.check] = f.level;  // warn or fail (not "not assessed")
    return out;
}

std::string describe(const dr::diagnosis& d) {
    std::string s;
    for (const auto& f : d.findings) s += f.check + " " + dr::severity_name(f.level) + ": " + f.summary + "\n";
    return s;
}

}  // namespace

TEST_CASE("doctor: the clean bf16-vs-float32 dump raises nothing, and every check reports") {
    const auto d = diagnose_dump(planted::bug::clean);
    INFO(describe(d));
    CHECK(raised(d).empty());
    CHECK(d.findings.size() == 9);
    std::set<std::string> ids;
    for (const auto& f : d.findings) ids.insert(f.check);
    CHECK(ids == std::set<std::string>{"alignment", "filled_values", "temperature", "processed_logprobs", "desync",
                                       "position", "low_probability", "policy_lag", "numeric"});
    CHECK(d.tokens > 9000);
    const auto* n = d.find("numeric");
    REQUIRE(n);
    CHECK(n->level == dr::severity::ok);
    CHECK(n->get("ratio_to_warn_level") < 0.5);  // mean |delta| 0.014 against the warn level 0.05
}

TEST_CASE("doctor: a shift by one position in either direction is an alignment failure, and only that") {
    for (auto [b, k] : {std::pair<planted::bug, int>{planted::bug::shift_ahead, 1}, {planted::bug::shift_behind, -1}}) {
        const auto d = diagnose_dump(b);
        INFO(describe(d));
        CHECK(raised(d) == std::map<std::string, dr::severity>{{"alignment", dr::severity::fail}});
        CHECK(d.find("alignment")->get("best_shift") == k);
        CHECK(d.find("alignment")->get("ratio_k0_to_best") > 20);
        CHECK(d.find("alignment")->summary.find(k > 0 ? "ahead" : "behind") != std::string::npos);
        CHECK(d.worst() == dr::severity::fail);
    }
}

TEST_CASE("doctor: last tokens filled with 0.0 are named by tensor, value and place") {
    const auto d = diagnose_dump(planted::bug::zero_fill);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"filled_values", dr::severity::fail}});
    const auto& f = *d.find("filled_values");
    CHECK(f.summary.find("rollout_logprobs") != std::string::npos);
    CHECK(f.summary.find("0.0") != std::string::npos);
    CHECK(f.get("rollout_unlikely_zeros") >= 3);
    CHECK(f.get("train_flagged") == 0);
    CHECK(f.get("share_in_last_4") >= 0.4);  // the planted fill covers the last 8 tokens
    CHECK(f.get("share_at_first_token") == 0);
}

TEST_CASE("doctor: a -9999 sentinel is named with its value and count") {
    const auto d = diagnose_dump(planted::bug::sentinel);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"filled_values", dr::severity::fail}});
    const auto& f = *d.find("filled_values");
    CHECK(f.get("rollout_sentinel_value") == -9999.0);
    CHECK(f.get("rollout_sentinel_count") > 50);
    CHECK(f.summary.find("-1e+04") != std::string::npos);
    // the sentinels are kept out of the breakdowns: the levels stay those of clean data
    CHECK(d.find("numeric")->get("delta_abs_mean") < 0.02);
}

TEST_CASE("doctor: temperature 0.7 on the rollout side only is estimated") {
    const auto d = diagnose_dump(planted::bug::temperature);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"temperature", dr::severity::fail}});
    const double r = d.find("temperature")->get("temperature_ratio_rollout_to_train");
    CHECK(r > 0.6);
    CHECK(r < 0.85);
}

TEST_CASE("doctor: top-p 0.9 renormalised rollout log-probs are processed log-probs") {
    const auto d = diagnose_dump(planted::bug::top_p);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"processed_logprobs", dr::severity::warn}});
    const auto& f = *d.find("processed_logprobs");
    CHECK(f.get("share_negative") > 0.95);
    CHECK(f.get("removed_mass_estimate") > 0.03);
    CHECK(f.get("removed_mass_estimate") < 0.1);  // at most 10% is cut by top-p 0.9
    CHECK(f.get("mean_abs_delta_p_below_half") > f.get("mean_abs_delta_p_above_half"));
}

TEST_CASE("doctor: a desync from the middle of 5% of sequences is located") {
    const auto d = diagnose_dump(planted::bug::desync);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"desync", dr::severity::fail}});
    const auto& f = *d.find("desync");
    CHECK(f.get("sequences") >= 3);
    CHECK(f.get("typical_position_fraction") >= 0.4);
    CHECK(f.get("typical_position_fraction") <= 0.7);
}

TEST_CASE("doctor: first-token noise is a position concentration") {
    const auto d = diagnose_dump(planted::bug::first_token);
    INFO(describe(d));
    CHECK(raised(d) == std::map<std::string, dr::severity>{{"position", dr::severity::fail}});
    CHECK(d.find("position")->get("first_token_ratio") > 6);
    CHECK(d.find("position")->summary.find("first generated token") != std::string::npos);
}

TEST_CASE("doctor: threads, packed layout and a bf16 copy give the same findings") {
    const auto& dm = dump_of(planted::bug::desync);
    const auto one = diagnose_dump(planted::bug::desync, 1);
    const auto two = diagnose_dump(planted::bug::desync, 2);
    REQUIRE(one.findings.size() == two.findings.size());
    for (std::size_t i = 0; i < one.findings.size(); ++i) {
        CHECK(one.findings[i].level == two.findings[i].level);
        CHECK(one.findings[i].summary == two.findings[i].summary);
    }
    CHECK(one.bd.joint == two.bd.joint);
    // packed: every row's masked-in prefix as one segment
    std::vector<float> t, r;
    std::vector<std::int64_t> cu{0};
    for (int b = 0; b < dm.B; ++b) {
        for (int k = 0; k < dm.T; ++k) {
            const std::size_t i =
                static_cast<std::size_t>(b) * static_cast<std::size_t>(dm.T) + static_cast<std::size_t>(k);
            if (!dm.mask[i]) break;
            t.push_back(dm.train[i]);
            r.push_back(dm.rollout[i]);
        }
        cu.push_back(static_cast<std::int64_t>(t.size()));
    }
    const auto pk = logratio::kernels::diagnose(logratio::packed(t, r, cu));
    CHECK(raised(pk) == raised(one));
    CHECK(pk.tokens == one.tokens);
    CHECK(pk.bd.joint == one.bd.joint);
}

TEST_CASE("doctor: NaN and positive log-probs are skipped and counted, never thrown") {
    auto dm = dump_of(planted::bug::clean);
    dm.train[5] = NAN;
    dm.rollout[7] = 0.5f;
    const auto d = logratio::kernels::diagnose(logratio::padded(
        dm.train, dm.rollout, dm.mask, static_cast<std::uint64_t>(dm.B), static_cast<std::uint64_t>(dm.T)));
    CHECK(d.skipped_tokens == 2);
    CHECK(raised(d).empty());
}

TEST_CASE("doctor: policy_lag reports the numeric-vs-lag split") {
    const auto& dm = dump_of(planted::bug::clean);
    auto v = logratio::padded(dm.train, dm.rollout, dm.mask, static_cast<std::uint64_t>(dm.B),
                              static_cast<std::uint64_t>(dm.T));
    dr::diagnose_options o;
    o.old_logprobs = dm.train.data();  // no lag: l_T(old) = l_T(new)
    auto d = logratio::kernels::diagnose(v, o);
    CHECK(d.find("policy_lag")->level == dr::severity::ok);
    CHECK(d.find("policy_lag")->get("lag_delta_abs_mean") == 0.0);
    o.old_logprobs = dm.rollout.data();  // all of delta is "lag"
    d = logratio::kernels::diagnose(v, o);
    CHECK(d.find("policy_lag")->level == dr::severity::warn);
    CHECK(d.find("policy_lag")->get("numeric_delta_abs_mean") == 0.0);
}

TEST_CASE("doctor breakdowns: bins follow their definitions") {
    const auto& lut = dr::detail::the_prob_lut();
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> u(-30, 0);
    for (int i = 0; i < 200000; ++i) {
        const double l = i % 2 ? u(g) : -std::exp(u(g));  // both the tail and p near 1
        const float m = static_cast<float>(-l);
        REQUIRE(dr::prob_bin(lut, l) == lut.exact_bin(m));
    }
    for (int b = 1; b < dr::prob_axis::bins; ++b) {  // exactly at an edge: the edge belongs to bin b - 1's upper side
        const float e = lut.edge[static_cast<std::size_t>(b)];
        CHECK(dr::prob_bin(lut, -static_cast<double>(e)) == b);
        CHECK(dr::prob_bin(lut, -static_cast<double>(std::nextafter(e, INFINITY))) == b - 1);
    }
    CHECK(dr::prob_bin(lut, 0.0) == dr::prob_axis::bins - 1);
    CHECK(dr::prob_bin(lut, -INFINITY) == 0);
    CHECK(dr::prob_bin(lut, std::log(0.5)) == 32);  // logit 0 is the lower edge of bin 32
    CHECK(dr::position_bucket(0) == 0);
    CHECK(dr::position_bucket(1) == 1);
    CHECK(dr::position_bucket(3) == 2);
    CHECK(dr::position_bucket(4) == 3);
    CHECK(dr::position_bucket(~std::uint64_t(0)) == 64);
    for (double d : {1e-9, -1e-5, 0.01, -0.0625, 0.0625, 0.07, -0.2, 0.25, 5.0, -30.0}) {
        const double c = std::min(std::max(d, -20.0), 20.0);
        CHECK(dr::detail::k3_term(d) == doctest::Approx(std::expm1(c) - c).epsilon(1e-11));
    }
}

TEST_CASE("doctor breakdowns: merge of parts equals the whole; serialize round-trips; corrupt input is refused") {
    const auto& dm = dump_of(planted::bug::first_token);
    auto v = logratio::padded(dm.train, dm.rollout, dm.mask, static_cast<std::uint64_t>(dm.B),
                              static_cast<std::uint64_t>(dm.T));
    const dr::breakdowns whole = dr::scan(v).bd;
    for (std::uint64_t cut : {std::uint64_t(1), std::uint64_t(37), std::uint64_t(159)}) {
        dr::breakdowns a = dr::detail::scan_range(v, 0, cut).bd;
        const dr::breakdowns b = dr::detail::scan_range(v, cut, v.num_sequences()).bd;
        // a serialized part, read back, merges the same (ranks send bytes)
        dr::breakdowns a2 = dr::breakdowns::deserialize(a.serialize());
        a.merge(b);
        a2.merge(dr::breakdowns::deserialize(b.serialize()));
        CHECK(a.joint == whole.joint);
        CHECK(a2.serialize() == a.serialize());
        for (int k = 0; k < dr::breakdowns::position_buckets; ++k) {
            CHECK(a.by_position[k].count == whole.by_position[k].count);
            CHECK(a.by_position[k].max_abs == whole.by_position[k].max_abs);
            CHECK(a.by_position[k].sum_abs == doctest::Approx(whole.by_position[k].sum_abs).epsilon(1e-11));
            CHECK(a.by_position[k].sum_k3 == doctest::Approx(whole.by_position[k].sum_k3).epsilon(1e-11));
        }
        for (int k = 0; k < dr::breakdowns::prob_buckets; ++k)
            CHECK(a.by_rollout_prob[k].count == whole.by_rollout_prob[k].count);
    }
    // merging the same parts in the other order gives the same counts
    dr::breakdowns b = dr::detail::scan_range(v, 80, v.num_sequences()).bd;
    b.merge(dr::detail::scan_range(v, 0, 80).bd);
    CHECK(b.joint == whole.joint);
    CHECK(b.tokens() == whole.tokens());

    const auto bytes = whole.serialize();
    const auto back = dr::breakdowns::deserialize(bytes);
    CHECK(back.serialize() == bytes);
    CHECK_THROWS_AS(dr::breakdowns::deserialize(bytes.data(), bytes.size() - 1), logratio::format_error);
    auto bad = bytes;
    bad[0] = 'X';
    CHECK_THROWS_AS(dr::breakdowns::deserialize(bad), logratio::format_error);
    bad = bytes;
    bad[bad.size() - 8] ^= 1;  // one joint count off: counts disagree
    CHECK_THROWS_AS(dr::breakdowns::deserialize(bad), logratio::format_error);
    bad = bytes;
    bad.push_back(0);
    CHECK_THROWS_AS(dr::breakdowns::deserialize(bad), logratio::format_error);
}

namespace {

dr::diagnosis diagnose_of(const planted::dump& d) {
    return logratio::kernels::diagnose(
        logratio::padded(d.train, d.rollout, d.mask, static_cast<std::uint64_t>(d.B), static_cast<std::uint64_t>(d.T)));
}

/// No summary prints NaN (as a number or a ratio, "nanx").
void check_no_nan_text(const dr::diagnosis& d) {
    for (const auto& f : d.findings) {
        CAPTURE(f.summary);
        CHECK(f.summary.find("nan") == std::string::npos);
        CHECK(f.summary.find("inf") == std::string::npos);
        // not assessed is never reported as ok
        if (f.summary.find("not assessed") != std::string::npos) CHECK(f.level == dr::severity::not_assessed);
        if (f.level == dr::severity::not_assessed) CHECK(f.summary.rfind("not assessed", 0) == 0);
    }
}

}  // namespace

TEST_CASE("doctor: numeric is silent on a healthy bf16 engine's level and warns on a drifting one") {
    // The clean dump at another seed and size, its mismatch scaled to the
    // level of a normal bf16 rollout engine (mean |delta| ~ 0.022; published
    // healthy levels 0.005 - 0.03, checks/numeric.hpp), then to a drift.
    for (const std::uint64_t seed : {std::uint64_t(4242)}) {
        CAPTURE(seed);
        const planted::dump clean = planted::sample(planted::bug::clean, 90, 100, seed);
        planted::dump healthy = clean;
        planted::scale_mismatch(healthy, 1.55);
        const auto h = diagnose_of(healthy);
        INFO(describe(h));
        CHECK(h.find("numeric")->get("delta_abs_mean") > 0.018);
        CHECK(h.find("numeric")->get("delta_abs_mean") < 0.03);
        CHECK(raised(h).empty());  // silent: nothing warns or fails
        CHECK(h.worst() == dr::severity::ok);
        check_no_nan_text(h);
        planted::dump drift = clean;
        planted::scale_mismatch(drift, 8.0);
        const auto x = diagnose_of(drift);
        INFO(describe(x));
        CHECK(x.find("numeric")->level == dr::severity::warn);
        CHECK(x.find("numeric")->get("delta_abs_mean") > 0.05);
        CHECK(x.find("numeric")->summary.find("above healthy engines") != std::string::npos);
    }
}

TEST_CASE("doctor: a mismatch planted on the first token is found on small batches (other seeds and sizes)") {
    struct shape {
        int B, T;
        std::uint64_t seed;
        float sigma;
    };
    for (const shape c : {shape{24, 80, 11, 0.2f}, shape{40, 64, 12, 0.3f}, shape{60, 100, 13, 0.5f},
                          shape{120, 40, 14, 0.2f}}) {
        CAPTURE(c.B);
        CAPTURE(c.seed);
        planted::dump d = planted::sample(planted::bug::clean, c.B, c.T, c.seed);
        const auto clean = diagnose_of(d);
        INFO(describe(clean));
        CHECK(raised(clean).count("position") == 0);
        CHECK(clean.find("position")->get("first_token_ratio") < 2.0);
        check_no_nan_text(clean);
        planted::plant_first_token(d, c.sigma, c.seed + 100);
        const auto bad = diagnose_of(d);
        INFO(describe(bad));
        const auto* p = bad.find("position");
        REQUIRE(p);
        CHECK(dr::raises(p->level));
        CHECK(p->get("first_token_ratio") >= 3.0);
        CHECK(p->summary.find("first generated token") != std::string::npos);
        check_no_nan_text(bad);
        MESSAGE(c.B << " x " << c.T << " seed " << c.seed << ": clean r_first " << clean.find("position")->get("first_token_ratio")
                    << ", planted N(0, " << c.sigma << ") r_first " << p->get("first_token_ratio"));
    }
}

TEST_CASE("doctor: every planted bug at other seeds and sizes gives its own finding and no other") {
    // the check each bug must raise ("" for clean: none); the sizes are those of
    // small batches, where desync's 5% are 3-5 sequences (desync.hpp's rule)
    const std::map<planted::bug, std::string> want{
        {planted::bug::clean, ""},
        {planted::bug::shift_ahead, "alignment"},
        {planted::bug::shift_behind, "alignment"},
        {planted::bug::zero_fill, "filled_values"},
        {planted::bug::sentinel, "filled_values"},
        {planted::bug::temperature, "temperature"},
        {planted::bug::top_p, "processed_logprobs"},
        {planted::bug::desync, "desync"},
        {planted::bug::first_token, "position"}};
    struct shape {
        int B, T;
        std::uint64_t seed;
    };
    for (const shape c : {shape{64, 96, 11}, shape{100, 128, 5}}) {
        for (const auto& bug_name : planted::all_bugs()) {
            const planted::bug b = bug_name.first;
            const std::string& name = bug_name.second;  // (clang 14 captures no structured binding)
            CAPTURE(c.B);
            CAPTURE(c.seed);
            CAPTURE(name);
            const auto d = diagnose_of(planted::sample(b, c.B, c.T, c.seed));
            INFO(describe(d));
            std::set<std::string> got;
            for (const auto& [check, level] : raised(d)) got.insert(check);
            const std::string& w = want.at(b);
            CHECK(got == (w.empty() ? std::set<std::string>{} : std::set<std::string>{w}));
        }
    }
}

TEST_CASE("doctor: a check it could not assess says not assessed, never ok") {
    // 3 sequences of 5 tokens: too few for the slope, the shifts' ratio is
    // formed, the position buckets, the p_E halves; no old_logprobs.
    const std::vector<float> t{-1.0f, -0.5f, -2.0f, -0.1f, -3.0f, -1.2f, -0.4f, -2.2f, -0.2f, -2.9f,
                               -0.9f, -0.6f, -1.8f, -0.3f, -3.1f};
    std::vector<float> r = t;
    for (auto& x : r) x = std::min(0.0f, x - 0.01f);
    const std::vector<std::uint8_t> m(15, 1);
    const auto d = logratio::kernels::diagnose(logratio::padded(t, r, m, 3, 5));
    INFO(describe(d));
    check_no_nan_text(d);
    CHECK(d.find("policy_lag")->level == dr::severity::not_assessed);
    CHECK(d.find("position")->level == dr::severity::not_assessed);
    CHECK(d.find("low_probability")->level == dr::severity::not_assessed);
    CHECK(std::string(dr::severity_name(dr::severity::not_assessed)) == "not assessed");
    CHECK(d.worst() == dr::severity::ok);  // not assessed raises nothing
    // an empty dump: nothing can be assessed
    const std::vector<std::uint8_t> none(15, 0);
    const auto e = logratio::kernels::diagnose(logratio::padded(t, r, none, 3, 5));
    INFO(describe(e));
    check_no_nan_text(e);
    for (const auto& f : e.findings) CHECK(f.level == dr::severity::not_assessed);
    // superseded by a failed alignment: not assessed, not ok
    const auto s = diagnose_dump(planted::bug::shift_ahead);
    for (const char* c : {"temperature", "position", "numeric"}) {
        CAPTURE(c);
        CHECK(s.find(c)->level == dr::severity::not_assessed);
    }
}
