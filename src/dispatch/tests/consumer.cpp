// A logratio::dispatch consumer compiled without any -march flag: it must
// run the widest level this CPU has, and every level must give the scalar
// path's results (panel, correction, quantiles, split, logits). Exit code
// 0 = pass; each failure is printed.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <logratio/dispatch/dispatch.hpp>

namespace ld = logratio::dispatch;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s\n", what.c_str());
    }
}

bool rel_equal(double a, double b, double rel = 1e-12) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

/// The widest level, asked of the CPU independently of the library.
std::string expected_widest() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
    return "sse2";
}

struct data {
    std::uint64_t rows = 29, cols = 203;
    std::vector<logratio::bfloat16> train, rollout, old;
    std::vector<std::uint8_t> mask;
    std::vector<float> logits_a, logits_b;
};

logratio::bfloat16 bf16(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return logratio::bfloat16{static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}

data make_data() {
    data d;
    std::mt19937_64 rng(7);
    std::student_t_distribution<double> heavy(2.5);
    std::uniform_int_distribution<std::uint64_t> len(0, d.cols);
    for (std::uint64_t r = 0; r < d.rows; ++r) {
        const std::uint64_t n = len(rng);
        for (std::uint64_t c = 0; c < d.cols; ++c) {
            const double e = -std::fabs(heavy(rng)) * 0.6;
            const double t = std::min(0.0, e + 0.05 * heavy(rng));
            d.rollout.push_back(bf16(float(e)));
            d.train.push_back(bf16(float(t)));
            d.old.push_back(bf16(float(std::min(t, e))));
            d.mask.push_back(c < n);
        }
    }
    std::normal_distribution<double> z;
    for (int i = 0; i < 13 * 700; ++i) {
        d.logits_a.push_back(float(z(rng)));
        d.logits_b.push_back(float(z(rng)));
    }
    return d;
}

struct results {
    logratio::panel panel;
    std::vector<float> w;
    std::vector<std::uint8_t> keep;
    logratio::correction_result r;
    std::vector<double> q;
    logratio::mismatch_split split;
    std::vector<logratio::logits_row> logits;
};

results run(const data& d) {
    const auto v = logratio::paired_view<logratio::bfloat16>::padded(d.train.data(), d.rollout.data(), d.mask.data(),
                                                                     d.rows, d.cols);
    results out;
    out.panel = ld::compute_panel(v);
    ld::add_panel_quantiles(out.panel, v);
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 2.0);
    o.rejection = logratio::parse_rejection("token_k1,seq_max_k2", "0.9_1.1,0.05");
    out.w.resize(v.size());
    out.keep.resize(v.size());
    out.r = ld::correct(v, o, out.w.data(), out.keep.data());
    out.q = ld::quantiles(v, logratio::quantile_of::abs_delta, {0.0, 0.1, 0.5, 0.99, 1.0});
    out.split = ld::compute_mismatch_split(v, d.old.data());
    const logratio::logits_view<float> a(d.logits_a.data(), 13, 700), b(d.logits_b.data(), 13, 700);
    out.logits.resize(13);
    const std::vector<std::int64_t> tokens{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ld::compare_logits(a, b, tokens.data(), out.logits.data());
    return out;
}

/// The panel's tolerance against the scalar path: SPEC's 1e-6 at avx512,
/// whose float32-lane loop (detail/panel_f32.hpp) computes the divergence
/// terms of these bf16 inputs in float32 (bounds there); 1e-12 elsewhere.
double panel_rel(const std::string& level) { return level == "avx512" ? 1e-6 : 1e-12; }

void compare(const results& got, const results& ref, const std::string& level) {
    const auto pg = logratio::panel_entries(got.panel), pr = logratio::panel_entries(ref.panel);
    check(pg.size() == pr.size(), level + ": panel key count");
    for (std::size_t i = 0; i < pg.size() && i < pr.size(); ++i)
        check(pg[i].second.has_value() == pr[i].second.has_value() &&
                  (!pg[i].second || rel_equal(*pg[i].second, *pr[i].second, panel_rel(level))),
              level + ": panel " + pg[i].first);
    check(got.keep == ref.keep, level + ": response mask");
    bool w_ok = got.w.size() == ref.w.size();
    for (std::size_t i = 0; w_ok && i < got.w.size(); ++i) w_ok = rel_equal(got.w[i], ref.w[i], 2e-7);
    check(w_ok, level + ": weights");
    const auto cg = logratio::correction_entries(got.r), cr = logratio::correction_entries(ref.r);
    check(cg.size() == cr.size(), level + ": metric count");
    for (std::size_t i = 0; i < cg.size() && i < cr.size(); ++i)
        check(rel_equal(cg[i].second, cr[i].second, 1e-9), level + ": metric " + cg[i].first);
    check(got.q == ref.q, level + ": quantiles");
    check(rel_equal(got.split.numeric.kl_k3, ref.split.numeric.kl_k3, panel_rel(level)) &&
              rel_equal(got.split.lag.delta_mean, ref.split.lag.delta_mean, panel_rel(level)),
          level + ": split");
    for (std::size_t i = 0; i < got.logits.size(); ++i)
        check(rel_equal(got.logits[i].kl_train_rollout, ref.logits[i].kl_train_rollout, 1e-12) &&
                  rel_equal(got.logits[i].train_entropy, ref.logits[i].train_entropy, 1e-12),
              level + ": logits row " + std::to_string(i));
}

}  // namespace

int main() {
    const std::string widest = expected_widest();
    std::printf("simd_level() = %s, expected %s\n", ld::simd_level(), widest.c_str());
    check(ld::simd_level() == widest, "a consumer without -march runs the widest level");
    const auto levels = ld::available_simd_levels();
    check(!levels.empty() && levels.back() == widest, "available_simd_levels() ends with the widest");
    const data d = make_data();
    ld::set_simd_level("scalar");
    const results ref = run(d);
    check(ref.panel.tokens > 1000, "enough tokens");
    for (const std::string& level : levels) {
        if (level == "scalar") continue;
        ld::set_simd_level(level);
        check(ld::simd_level() == level, "set_simd_level(" + level + ")");
        compare(run(d), ref, level);
    }
    bool threw = false;
    try {
        ld::set_simd_level("avx1024");
    } catch (const logratio::error&) {
        threw = true;  // an exception thrown inside the library, caught by its base type here
    }
    check(threw, "unknown level is an error");
    std::printf("%s (%zu levels)\n", failures ? "FAILED" : "ok", levels.size());
    return failures ? 1 : 0;
}
