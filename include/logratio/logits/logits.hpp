#pragma once
// Exact per-token divergences from the two runtimes' full logits.
//
// For a row of trainer logits z and rollout logits y over the vocabulary
// (after dividing by the temperature), pi = softmax(z), mu = softmax(y):
//
//   train_entropy      H(pi) = log S_z - sum p_i a_i / S_z
//   rollout_entropy    H(mu) = log S_y - sum q_i b_i / S_y
//   kl_train_rollout   KL(pi||mu) = sum p_i (a_i - b_i) / S_z - log S_z + log S_y
//   kl_rollout_train   KL(mu||pi) = sum q_i (b_i - a_i) / S_y + log S_z - log S_y
//   tv                 1/2 sum |p_i / S_z - q_i / S_y|
//   train_logprob      log pi(tok) = a_tok - log S_z;  rollout_logprob likewise
//   argmax_match       argmax z == argmax y (first maximum)
//   sampled_prob_gap   pi(tok) - mu(tok)
//
// with a_i = z_i - max z, b_i = y_i - max y, p_i = exp(a_i), q_i = exp(b_i),
// S_z = sum p_i, S_y = sum q_i -- all in float64 lanes, so no overflow for
// any logit size. Passes over a row (no softmax buffer): 1. the maxima and
// argmaxes; 2. the sums; 3. the TV (it needs S_z and S_y). A row of
// 151,936 float32 pairs (1.2 MB) stays in L2 between the passes.
// -inf logits (masked vocabulary entries) have probability 0: an entry
// that is -inf in both rows is left out; one that is -inf only in y makes
// KL(pi||mu) = +inf (and -inf only in z makes KL(mu||pi) = +inf).
// NaN and +inf logits, rows that are all -inf, token ids out of range and
// shape mismatches are errors naming the tensor, row and column.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../detail/xsimd.hpp"

#include "../detail/parallel.hpp"
#include "../detail/simd.hpp"
#include "../detail/widen.hpp"
#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/moments.hpp"
#include "../quantiles/quantiles.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// A non-owning [rows, cols] matrix of logits (float, double, bfloat16,
/// float16), rows `row_stride` elements apart (>= cols).
template <class T>
struct logits_view {
    static_assert(is_logprob_type<T>::value, "logits must be float, double, bfloat16 or float16");
    const T* data = nullptr;
    std::uint64_t rows = 0, cols = 0, row_stride = 0;

    logits_view() = default;
    logits_view(const T* d, std::uint64_t r, std::uint64_t c, std::uint64_t stride = 0)
        : data(d), rows(r), cols(c), row_stride(stride ? stride : c) {
        if (row_stride < cols)
            throw shape_error(detail::concat("logits view: row stride ", row_stride, " is below the row length ", cols));
        if (rows && cols && d == nullptr) throw shape_error("logits view: null data for a non-empty view");
    }
    const T* row(std::uint64_t i) const noexcept { return data + i * row_stride; }
};

/// Per-row results.
struct logits_row {
    double train_entropy = 0, rollout_entropy = 0, kl_train_rollout = 0, kl_rollout_train = 0, tv = 0;
    double train_logprob = 0, rollout_logprob = 0, sampled_prob_gap = 0;
    bool argmax_match = false;
    std::uint64_t train_argmax = 0, rollout_argmax = 0;
};

struct logits_options {
    double temperature = 1.0;  ///< logits are divided by it (as samplers do)
};

namespace detail {

constexpr std::size_t logits_block = 512;

template <class V, class T>
struct row_loader {
    using ops = simd_ops<V>;
    static constexpr std::size_t L = ops::size;
    static constexpr bool direct = [] {
        if constexpr (L == 1) return false;
        else return direct_load<typename V::arch_type, T, std::uint8_t>;
    }();
    alignas(64) double buf[L];

    /// Lanes [i, i+L) of p (entries past n read as -inf), divided by the temperature.
    LOGRATIO_ALWAYS_INLINE V load(const T* p, std::uint64_t i, std::uint64_t n, double temperature,
                                  bool scale) noexcept {
        V x;
        if constexpr (direct) {
            if (i + L <= n) {
                x = widen<typename V::arch_type>(p + i);
                return scale ? V(x / ops::splat(temperature)) : x;
            }
        }
        if constexpr (L == 1) {
            x = to_double(p[i]);
#if LOGRATIO_X86
        } else if constexpr (L == 2) {
            // two lanes (SSE2): from registers -- two scalar stores read back
            // as one vector would stall on store forwarding
            constexpr double ninf = -std::numeric_limits<double>::infinity();
            x = V(_mm_set_pd(i + 1 < n ? to_double(p[i + 1]) : ninf, to_double(p[i])));
#endif
        } else {
            for (std::size_t k = 0; k < L; ++k)
                buf[k] = i + k < n ? to_double(p[i + k]) : -std::numeric_limits<double>::infinity();
            x = V::load_aligned(buf);
        }
        return scale ? V(x / ops::splat(temperature)) : x;
    }
};

template <class T>
[[noreturn]] void throw_bad_logit(const T* p, std::uint64_t n, const char* name, std::uint64_t row, double t) {
    for (std::uint64_t j = 0; j < n; ++j) {
        const double x = to_double(p[j]) / t;
        if (std::isnan(x) || x == std::numeric_limits<double>::infinity())
            throw value_error(concat(name, ": ", std::isnan(x) ? "NaN" : "+inf", " logit at row ", row, ", column ", j),
                              name, row, j, x);
    }
    throw value_error(concat(name, ": row ", row, " has no finite logit (every entry is -inf)"), name, row, 0,
                      -std::numeric_limits<double>::infinity());
}

template <class V, class T>
logits_row logits_row_impl(const T* z, const T* y, std::uint64_t n, std::int64_t token, std::uint64_t row,
                           double temperature) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    constexpr std::size_t L = ops::size;
    const bool scale = temperature != 1.0;
    const double inv_t = temperature;  // loads divide by it
    row_loader<V, T> lz, ly;
    const V zero = ops::splat(0.0);
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());

    // pass 1: maxima and argmaxes. A +inf logit becomes the maximum; a NaN
    // never does (it compares false) but poisons a running sum of the
    // logits (-inf entries alone leave it -inf); either sends the row to
    // the slow check that names the entry.
    V mz = ninf, my = ninf, poison = zero;
    // per lane: the first column holding the lane's maximum (indices are
    // exact in double lanes up to 2^53)
    V jz = zero, jy = zero, col = zero;
    if constexpr (L > 1) {
        alignas(64) double lanes[L];
        for (std::size_t k = 0; k < L; ++k) lanes[k] = static_cast<double>(k);
        col = V::load_aligned(lanes);
    }
    const V step = ops::splat(static_cast<double>(L));
    for (std::uint64_t i = 0; i < n; i += L) {
        const V a = lz.load(z, i, n, inv_t, scale), b = ly.load(y, i, n, inv_t, scale);
        const mask_t gz = a > mz, gy = b > my;
        mz = ops::select(gz, a, mz);
        my = ops::select(gy, b, my);
        jz = ops::select(gz, col, jz);
        jy = ops::select(gy, col, jy);
        col = col + step;
        poison = poison + (a + b);
    }
    const double Mz = ops::hmax(mz), My = ops::hmax(my);
    if (!std::isfinite(Mz) || !std::isfinite(My) || std::isnan(ops::sum(poison))) {
        // slow check: which entry, if any, is NaN or +inf
        for (std::uint64_t j = 0; j < n; ++j) {
            const double a = to_double(z[j]) / temperature, b = to_double(y[j]) / temperature;
            if (std::isnan(a) || a == std::numeric_limits<double>::infinity())
                throw_bad_logit(z, n, "train_logits", row, temperature);
            if (std::isnan(b) || b == std::numeric_limits<double>::infinity())
                throw_bad_logit(y, n, "rollout_logits", row, temperature);
        }
        if (!std::isfinite(Mz)) throw_bad_logit(z, n, "train_logits", row, temperature);
        if (!std::isfinite(My)) throw_bad_logit(y, n, "rollout_logits", row, temperature);
    }
    logits_row r;
    // the first column of each maximum: the smallest lane index among the
    // lanes that reached it
    auto first_max = [](const V& m, const V& idx, double M) {
        return static_cast<std::uint64_t>(ops::hmin(ops::select(m == ops::splat(M), idx, ops::splat(1e300))));
    };
    r.train_argmax = first_max(mz, jz, Mz);
    r.rollout_argmax = first_max(my, jy, My);
    r.argmax_match = r.train_argmax == r.rollout_argmax;

    // pass 2: the sums
    const V vMz = ops::splat(Mz), vMy = ops::splat(My);
    V Sz = zero, Sy = zero, Ez = zero, Ey = zero, Kz = zero, Ky = zero;
    for (std::uint64_t i = 0; i < n; i += L) {
        const V a = lz.load(z, i, n, inv_t, scale) - vMz, b = ly.load(y, i, n, inv_t, scale) - vMy;
        const V p = ops::exp_nonpos(a), q = ops::exp_nonpos(b);
        const mask_t pp = p > zero, qp = q > zero;
        Sz = Sz + p;
        Sy = Sy + q;
        Ez = Ez + ops::select(pp, p * a, zero);
        Ey = Ey + ops::select(qp, q * b, zero);
        Kz = Kz + ops::select(pp, p * (a - b), zero);
        Ky = Ky + ops::select(qp, q * (b - a), zero);
    }
    const double sz = ops::sum(Sz), sy = ops::sum(Sy);
    const double lsz = std::log(sz), lsy = std::log(sy);
    r.train_entropy = lsz - ops::sum(Ez) / sz;
    r.rollout_entropy = lsy - ops::sum(Ey) / sy;
    // (a KL of a lone -inf row entry is +inf by the sums; clamp rounding below 0)
    r.kl_train_rollout = std::max(0.0, ops::sum(Kz) / sz - lsz + lsy);
    r.kl_rollout_train = std::max(0.0, ops::sum(Ky) / sy + lsz - lsy);

    // pass 3: TV with the normalisers
    const V iz = ops::splat(1.0 / sz), iy = ops::splat(1.0 / sy);
    V tv = zero;
    for (std::uint64_t i = 0; i < n; i += L) {
        const V a = lz.load(z, i, n, inv_t, scale) - vMz, b = ly.load(y, i, n, inv_t, scale) - vMy;
        tv = tv + ops::abs(ops::exp_nonpos(a) * iz - ops::exp_nonpos(b) * iy);
    }
    r.tv = 0.5 * ops::sum(tv);

    if (token >= 0) {
        const auto t = static_cast<std::uint64_t>(token);
        const double a = (scale ? to_double(z[t]) / temperature : to_double(z[t])) - Mz;
        const double b = (scale ? to_double(y[t]) / temperature : to_double(y[t])) - My;
        r.train_logprob = a - lsz;
        r.rollout_logprob = b - lsy;
        r.sampled_prob_gap = std::exp(r.train_logprob) - std::exp(r.rollout_logprob);
    }
    return r;
}

template <class V, class T, class I>
void logits_rows(const logits_view<T>& z, const logits_view<T>& y, const I* tokens, const logits_options& o,
                 logits_row* out, std::uint64_t r0, std::uint64_t r1) {
    for (std::uint64_t i = r0; i < r1; ++i)
        out[i] = logits_row_impl<V>(z.row(i), y.row(i), z.cols, tokens ? static_cast<std::int64_t>(tokens[i]) : -1, i,
                                    o.temperature);
}

template <class T, class I>
void check_logits(const logits_view<T>& z, const logits_view<T>& y, const I* tokens, const logits_options& o) {
    if (z.rows != y.rows || z.cols != y.cols)
        throw shape_error(concat("shape mismatch: train_logits is [", z.rows, ", ", z.cols, "], rollout_logits is [",
                                 y.rows, ", ", y.cols, "]"));
    if (z.cols == 0 && z.rows) throw shape_error("logits: the vocabulary is empty (0 columns)");
    if (!(o.temperature > 0.0) || !std::isfinite(o.temperature))
        throw argument_error(concat("temperature ", o.temperature, " must be a positive finite number"));
    if (tokens)
        for (std::uint64_t i = 0; i < z.rows; ++i) {
            const auto t = static_cast<std::int64_t>(tokens[i]);
            if (t < 0 || static_cast<std::uint64_t>(t) >= z.cols)
                throw value_error(concat("tokens: id ", t, " at row ", i, " is outside the vocabulary [0, ", z.cols, ")"),
                                  "tokens", i, 0, static_cast<double>(t));
        }
}

}  // namespace detail

/// Every row of two [N, V] logit views; `tokens` (N ids, int32 or int64;
/// may be null: no selected-token values) picks the sampled token of each
/// row. Results go to out[0..N). Rows are split over `threads`.
template <class Arch = xsimd::default_arch, class T, class I>
void compare_logits(const logits_view<T>& train, const logits_view<T>& rollout, const I* tokens, logits_row* out,
                    const logits_options& o = {}, unsigned threads = 1) {
    static_assert(std::is_integral<I>::value, "token ids must be integers");
    detail::check_logits(train, rollout, tokens, o);
    const std::uint64_t N = train.rows;
    const unsigned parts = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, N)));
    detail::run_parts(parts, [&](unsigned k) {
        detail::logits_rows<xsimd::batch<double, Arch>>(train, rollout, tokens, o, out, N * k / parts,
                                                        N * (k + 1) / parts);
    });
}

/// Scalar reference path (one lane; std::exp).
template <class T, class I>
void compare_logits_scalar(const logits_view<T>& train, const logits_view<T>& rollout, const I* tokens,
                           logits_row* out, const logits_options& o = {}) {
    detail::check_logits(train, rollout, tokens, o);
    detail::logits_rows<double>(train, rollout, tokens, o, out, 0, train.rows);
}

/// The names of 0.1 (they compute divergences, not logits); kept for
/// one release.
template <class Arch = xsimd::default_arch, class T, class I>
[[deprecated("renamed compare_logits")]] void compute_logits(const logits_view<T>& train, const logits_view<T>& rollout,
                                                             const I* tokens, logits_row* out,
                                                             const logits_options& o = {}, unsigned threads = 1) {
    compare_logits<Arch>(train, rollout, tokens, out, o, threads);
}
template <class T, class I>
[[deprecated("renamed compare_logits_scalar")]] void compute_logits_scalar(const logits_view<T>& train,
                                                                           const logits_view<T>& rollout,
                                                                           const I* tokens, logits_row* out,
                                                                           const logits_options& o = {}) {
    compare_logits_scalar(train, rollout, tokens, out, o);
}

/// A single logit matrix: entropy and selected-token log-prob of every row
/// (the same code with the matrix compared to itself; the KLs and TV are 0).
template <class Arch = xsimd::default_arch, class T, class I>
void compute_entropy(const logits_view<T>& logits, const I* tokens, logits_row* out, const logits_options& o = {},
                     unsigned threads = 1) {
    compare_logits<Arch>(logits, logits, tokens, out, o, threads);
}

/// One row: entropy and the selected token's log-prob of a single logit
/// row (the same code with the row compared to itself).
template <class Arch = xsimd::default_arch, class T>
logits_row logits_of_row(const T* logits, std::uint64_t vocab, std::int64_t token = -1, double temperature = 1.0) {
    logits_view<T> v(logits, 1, vocab);
    std::int64_t tok = token;
    logits_row r;
    compare_logits<Arch>(v, v, token >= 0 ? &tok : static_cast<const std::int64_t*>(nullptr), &r,
                         logits_options{temperature});
    return r;
}

/// Panel-style summary over rows; with no row every value is NaN (the
/// empty-input rule, core/error.hpp).
struct logits_summary {
    static constexpr double nan = undefined;
    std::uint64_t rows = 0;
    double train_entropy_mean = nan, train_entropy_max = nan, rollout_entropy_mean = nan, rollout_entropy_max = nan;
    double kl_train_rollout_mean = nan, kl_train_rollout_max = nan, kl_rollout_train_mean = nan,
           kl_rollout_train_max = nan;
    double tv_mean = nan, tv_max = nan, argmax_match_fraction = nan, sampled_prob_gap_mean = nan,
           sampled_prob_gap_abs_mean = nan;
    double kl_rollout_train_q50 = nan, kl_rollout_train_q90 = nan, kl_rollout_train_q99 = nan;
};

inline logits_summary summarize_logits(const logits_row* rows, std::uint64_t n) {
    logits_summary s;
    s.rows = n;
    if (n == 0) return s;
    moments he, hr, kt, kr, tv, gap;
    double abs_gap = 0;
    std::uint64_t match = 0;
    std::vector<double> kls(n);
    for (std::uint64_t i = 0; i < n; ++i) {
        const logits_row& r = rows[i];
        he.add(r.train_entropy);
        hr.add(r.rollout_entropy);
        kt.add(r.kl_train_rollout);
        kr.add(r.kl_rollout_train);
        tv.add(r.tv);
        gap.add(r.sampled_prob_gap);
        abs_gap += std::fabs(r.sampled_prob_gap);
        match += r.argmax_match;
        kls[i] = r.kl_rollout_train;
    }
    s.train_entropy_mean = he.mean;
    s.train_entropy_max = he.max;
    s.rollout_entropy_mean = hr.mean;
    s.rollout_entropy_max = hr.max;
    s.kl_train_rollout_mean = kt.mean;
    s.kl_train_rollout_max = kt.max;
    s.kl_rollout_train_mean = kr.mean;
    s.kl_rollout_train_max = kr.max;
    s.tv_mean = tv.mean;
    s.tv_max = tv.max;
    s.argmax_match_fraction = static_cast<double>(match) / static_cast<double>(n);
    s.sampled_prob_gap_mean = gap.mean;
    s.sampled_prob_gap_abs_mean = abs_gap / static_cast<double>(n);
    const std::vector<double> q = quantiles(kls.begin(), kls.end(), {0.5, 0.9, 0.99}, quantile_method::linear);
    s.kl_rollout_train_q50 = q[0];
    s.kl_rollout_train_q90 = q[1];
    s.kl_rollout_train_q99 = q[2];
    return s;
}

/// Divergences when only the rollout engine's top-k log-probs of a row are
/// known (ids and log mu values) and the trainer's full row is: what can be
/// computed exactly is the divergence between the two distributions
/// coarse-grained to the k tokens plus one "rest" bucket (masses
/// 1 - sum_K mu and 1 - sum_K pi). By the log-sum inequality those KLs are
/// lower bounds of the full-vocabulary KLs; the TV is bracketed:
/// tv_low = 1/2 (sum_K |pi - mu| + |rest_pi - rest_mu|) <= TV <=
/// tv_high = 1/2 (sum_K |pi - mu| + rest_pi + rest_mu).
struct topk_divergence {
    double kl_train_rollout_lower = 0, kl_rollout_train_lower = 0;
    double tv_low = 0, tv_high = 0;
    double rollout_mass = 0, train_mass = 0;  ///< sum over the k tokens of mu and of pi
};

/// `train_logprobs`: the trainer's full row of log pi (V entries);
/// `ids`/`rollout_logprobs`: the k rollout tokens and their log mu.
template <class T, class I>
topk_divergence topk_divergences(const T* train_logprobs, std::uint64_t vocab, const I* ids, const double* rollout_logprobs,
                                 std::uint64_t k) {
    topk_divergence d;
    double kl_pm = 0, kl_mp = 0, l1 = 0, mu_k = 0, pi_k = 0;
    for (std::uint64_t j = 0; j < k; ++j) {
        const auto id = static_cast<std::int64_t>(ids[j]);
        if (id < 0 || static_cast<std::uint64_t>(id) >= vocab)
            throw value_error(detail::concat("top-k ids: id ", id, " at position ", j, " is outside [0, ", vocab, ")"),
                              "topk_ids", 0, j, static_cast<double>(id));
        const double lm = rollout_logprobs[j], lp = to_double(train_logprobs[id]);
        if (!(lm <= default_positive_tolerance) || std::isnan(lp) || lp > default_positive_tolerance)
            throw value_error(detail::concat("top-k: log-prob at position ", j, " is not a log-probability (", lm, ", ",
                                             lp, ")"),
                              "topk_logprobs", 0, j, lm);
        const double m = std::exp(lm), p = std::exp(lp);
        mu_k += m;
        pi_k += p;
        if (p > 0) kl_pm += p * (lp - lm);
        if (m > 0) kl_mp += m * (lm - lp);
        l1 += std::fabs(p - m);
    }
    const double rm = std::max(0.0, 1.0 - mu_k), rp = std::max(0.0, 1.0 - pi_k);
    auto term = [](double a, double b) {  // a log(a / b), 0 log 0 = 0
        if (a <= 0) return 0.0;
        if (b <= 0) return std::numeric_limits<double>::infinity();
        return a * std::log(a / b);
    };
    d.kl_train_rollout_lower = std::max(0.0, kl_pm + term(rp, rm));
    d.kl_rollout_train_lower = std::max(0.0, kl_mp + term(rm, rp));
    d.tv_low = 0.5 * (l1 + std::fabs(rp - rm));
    d.tv_high = 0.5 * (l1 + rp + rm);
    d.rollout_mass = mu_k;
    d.train_mass = pi_k;
    return d;
}

LOGRATIO_NAMESPACE_END
