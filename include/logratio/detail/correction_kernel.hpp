#pragma once
// The correction kernel: weights, masks and every metric sum of
// correction_accumulator.hpp, written once against simd_ops<V> (SIMD lanes
// and the scalar reference path).
//
// Each sequence is read twice, back to back (the second read hits cache for
// padded rows and typical packed sequences):
//   phase 1  the per-sequence sums that decide for the whole sequence --
//            token count, sum delta, sum l_T, sum l_E, min delta (veto),
//            and, if a sequence rejection option needs them, the sums / max
//            of k1, k2, k3 -- plus validation (NaN/Inf, positive log-probs);
//   phase 2  per token: dc, rho = 1 + expm1(dc), the IS weight and its
//            truncation, every token rejection statistic and its test, the
//            final keep bit; the token sums of the metrics; and the writes
//            of the weight and mask outputs.
// No other pass reads the tokens (batch normalisation rescales the written
// weights afterwards: correction.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "../correction_accumulator.hpp"
#include "../view.hpp"
#include "panel_kernel.hpp"
#include "simd.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// Output buffers of the correction (either may be null: not written).
/// Both have view.size() entries in the view's layout.
template <class W>
struct correction_outputs {
    W* weights = nullptr;
    std::uint8_t* mask = nullptr;
};

/// Stores lanes [0, n) of a batch into dst, converting to W.
template <class V, class W>
LOGRATIO_ALWAYS_INLINE inline void store_lanes(const V& x, W* dst, std::size_t n) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        (void)n;
        *dst = static_cast<W>(x);
    } else {
        alignas(64) double t[ops::size];
        x.store_aligned(t);
        for (std::size_t k = 0; k < n; ++k) dst[k] = static_cast<W>(t[k]);
    }
}

template <class V, class W, class T, class M>
correction_accumulator correct_range_impl(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1,
                                          const correction_options& o, const correction_outputs<W>& out) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    constexpr std::size_t L = ops::size;
    static_assert(chunk_tokens % L == 0, "chunk must hold whole batches");

    correction_accumulator acc(o);
    chunk_buffers buf;
    const V zero = ops::splat(0.0), one = ops::splat(1.0);
    const V lo20 = ops::splat(-clamp_log_ratio), hi20 = ops::splat(clamp_log_ratio);
    const V pinf = ops::splat(std::numeric_limits<double>::infinity());
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    const V tol = ops::splat(o.positive_tolerance);

    // ---- what is needed
    const bool has_is = o.is.has_value();
    const bool tok_is = has_is && o.is->level == is_level::token;
    const double C = has_is ? o.is->upper : 0.0;
    const double c_lo = has_is ? o.is->metric_lower() : 0.0;
    const bool clip_low = has_is && o.is->lower.has_value();
    const V vC = ops::splat(C), vclo = ops::splat(c_lo);
    const double log_C = has_is ? std::log(C) : 0.0, log_clo = has_is ? std::log(c_lo) : 0.0;

    // token rejection options, by statistic (at most one each)
    int tok_opt[3] = {-1, -1, -1};
    bool seq_needs[3] = {false, false, false};
    for (std::size_t k = 0; k < o.rejection.size(); ++k) {
        const rs_option& r = o.rejection[k];
        if (r.is_token_level()) tok_opt[static_cast<int>(r.stat)] = static_cast<int>(k);
        else seq_needs[static_cast<int>(r.stat)] = true;
    }
    const bool any_tok_rs = tok_opt[0] >= 0 || tok_opt[1] >= 0 || tok_opt[2] >= 0;
    V tlo[3], tup[3];
    for (int j = 0; j < 3; ++j) {
        const double lo = tok_opt[j] >= 0 ? o.rejection[tok_opt[j]].stat_lower() : 0.0;
        const double up = tok_opt[j] >= 0 ? o.rejection[tok_opt[j]].stat_upper() : 0.0;
        tlo[j] = ops::splat(lo);
        tup[j] = ops::splat(up);
    }
    const bool need_k = seq_needs[1] || seq_needs[2];
    const double log_veto = o.veto ? std::log(*o.veto) : -std::numeric_limits<double>::infinity();

    // ---- token-level lane accumulators (reduced at the end)
    V a_k3 = zero, a_chi2 = zero;
    V a_w = zero, a_c = zero, a_c2 = zero, a_wmin = pinf, a_wmax = ninf, a_t = zero;
    V a_post = zero, a_pmin = pinf, a_pmax = ninf;
    std::uint64_t n_hi = 0, n_lo = 0, n_kept = 0, n_changed = 0, n_rs_rej = 0;
    V r_x[3] = {zero, zero, zero}, r_xc[3] = {zero, zero, zero}, r_xc2[3] = {zero, zero, zero};
    V r_min[3] = {pinf, pinf, pinf}, r_max[3] = {ninf, ninf, ninf};
    std::uint64_t r_hi[3] = {0, 0, 0}, r_lo[3] = {0, 0, 0}, r_rej[3] = {0, 0, 0};
    double k3_fix = 0.0;  // exact k3_kl correction for |delta| > 20 lanes

    for (std::uint64_t s = s0; s < s1; ++s) {
        const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);

        // ---- phase 1: per-sequence sums and validation
        std::uint64_t row_n = 0;
        V p_d = zero, p_t = zero, p_r = zero, p_top = ninf, p_dmin = pinf;
        V p_dc = zero, p_k2 = zero, p_k3 = zero, p_k2max = zero, p_k3max = zero;
        auto phase1 = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            const V t = ops::select(on, t0, zero);
            const V r = ops::select(on, r0, zero);
            p_top = ops::max(p_top, ops::max(t, r));
            const V d = t - r;
            row_n += ops::count(on);
            p_d = p_d + d;
            p_t = p_t + t;
            p_r = p_r + r;
            p_dmin = ops::min(p_dmin, ops::select(on, d, pinf));
            const V dc = ops::min(ops::max(d, lo20), hi20);
            p_dc = p_dc + dc;
            if (need_k) {
                const V k2 = V(0.5) * dc * dc;
                const V k3 = ops::expm1(dc) - dc;
                p_k2 = p_k2 + k2;
                p_k3 = p_k3 + k3;
                p_k2max = ops::max(p_k2max, k2);
                p_k3max = ops::max(p_k3max, k3);
            }
        };
        for_each_batch<V>(v, b, e, buf, phase1);
        const double st = ops::sum(p_t), sr = ops::sum(p_r);
        if (!std::isfinite(st) || !std::isfinite(sr) || !ops::none(p_top > tol))
            throw_bad_token(v, s, b, static_cast<std::size_t>(e - b), nonfinite_policy::raise, o.positive_tolerance);
        if (row_n == 0) {  // not a sequence: outputs are 0
            if (out.weights) std::fill(out.weights + b, out.weights + e, W(0));
            if (out.mask) std::fill(out.mask + b, out.mask + e, std::uint8_t(0));
            continue;
        }
        const double n = static_cast<double>(row_n);
        const double sd = ops::sum(row_n ? p_d : zero);
        const double mean_t = st / n, mean_r = sr / n;
        acc.tokens += row_n;
        acc.sequences += 1;
        acc.sum_delta += sd;
        acc.sum_train_ppl += std::exp(-mean_t);
        acc.sum_train_log_ppl += -mean_t;
        acc.sum_rollout_ppl += std::exp(-mean_r);
        acc.sum_rollout_log_ppl += -mean_r;
        const double lpd = mean_r - mean_t;
        acc.log_ppl_diff.add(lpd);
        acc.sum_abs_log_ppl_diff += std::fabs(lpd);
        acc.sum_ppl_ratio += std::exp(lpd);
        acc.sum_chi2_seq += std::expm1(2.0 * clamp_delta(sd));

        // sequence rejection options: decide the whole sequence now
        bool row_rs_keep = true;
        for (std::size_t k = 0; k < o.rejection.size(); ++k) {
            const rs_option& r = o.rejection[k];
            if (r.is_token_level()) continue;
            double X;
            if (r.stat == rs_stat::k1) X = -ops::sum(p_dc);
            else if (r.stat == rs_stat::k2) X = r.aggregate == rs_aggregate::seq_max ? ops::hmax(p_k2max) : ops::sum(p_k2);
            else X = r.aggregate == rs_aggregate::seq_max ? ops::hmax(p_k3max) : ops::sum(p_k3);
            if (r.aggregate == rs_aggregate::seq_mean) X /= n;
            const double lo = r.stat_lower(), up = r.stat_upper();
            const bool keep = r.stat == rs_stat::k1 ? (X >= lo && X <= up) : X <= up;
            rs_accumulator& a = acc.rs[k];
            const double xc = std::min(std::max(X, lo), up);
            a.sum_x += n * X;
            a.xc.add(xc, n);
            a.seq.add(X);
            a.seq_hi += X > up;
            a.seq_lo += r.has_lower() && X < lo;
            a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
            if (!keep) {
                a.rejected_tokens += row_n;
                a.rejected_seqs += 1;
                row_rs_keep = false;
            }
        }
        const bool vetoed = o.veto && ops::hmin(p_dmin) < log_veto;

        // sequence IS weight
        double w_row = 1.0;
        if (has_is && !tok_is) {
            const double lr = o.is->level == is_level::sequence ? sd : sd / n;
            w_row = std::exp(clamp_delta(lr));
            is_accumulator& a = acc.is;
            a.lr_min = std::min(a.lr_min, lr);
            a.lr_max = std::max(a.lr_max, lr);
            a.lr_hi += lr > log_C;
            a.lr_lo += lr < log_clo;
            a.sum_w += n * w_row;
            a.wc.add(std::min(std::max(w_row, c_lo), C), n);
            a.seq.add(w_row);
            a.seq_hi += w_row > C;
            a.seq_lo += w_row < c_lo;
            a.seq_max_dev = std::max(a.seq_max_dev, std::fabs(w_row - 1.0));
            double t = std::min(w_row, C);
            if (clip_low) t = std::max(t, *o.is->lower);
            a.sum_t += n * t;
            a.sum_seq_t += t;
        }
        const V v_wrow = ops::splat(w_row);
        const mask_t row_keep = ops::splat((row_rs_keep && !vetoed) ? 1.0 : 0.0) != zero;
        const mask_t row_rs = ops::splat(row_rs_keep ? 1.0 : 0.0) != zero;
        const V vlo_clip = ops::splat(clip_low ? *o.is->lower : 0.0);

        // ---- phase 2: per token
        V q_w = zero, q_t = zero, q_x[3] = {zero, zero, zero};
        std::uint64_t q_rej[3] = {0, 0, 0}, q_rsrej = 0, q_veto = 0;
        std::uint64_t pos = b;
        auto phase2 = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            const V t = ops::select(on, t0, zero);
            const V r = ops::select(on, r0, zero);
            const V d = t - r;
            const V dc = ops::min(ops::max(d, lo20), hi20);
            const V em = ops::expm1(dc);
            const V rho = em + one;
            a_k3 = a_k3 + (em - dc);
            a_chi2 = ops::fma(em, em + V(2.0), a_chi2);
            if (!ops::none(ops::abs(d) > hi20)) {  // rare: k3_kl uses the unclamped delta
                alignas(64) double dd[L];
                alignas(64) double mm[L];
                store_lanes<V, double>(d, dd, L);
                store_lanes<V, double>(ops::select(on, one, zero), mm, L);
                for (std::size_t k = 0; k < L; ++k)
                    if (mm[k] != 0.0 && std::fabs(dd[k]) > clamp_log_ratio) {
                        const double dck = clamp_delta(dd[k]);
                        k3_fix += (std::expm1(dd[k]) - dd[k]) - (std::expm1(dck) - dck);
                    }
            }
            if (o.veto) q_veto += ops::count(on & (d < V(log_veto)));
            // token rejection options
            mask_t keep_rs = on;
            if (any_tok_rs) {
                for (int j = 0; j < 3; ++j) {
                    if (tok_opt[j] < 0) continue;
                    const V x = j == 0 ? V(zero - dc) : j == 1 ? V(V(0.5) * dc * dc) : V(em - dc);
                    const mask_t keep = j == 0 ? mask_t((x >= tlo[j]) & (x <= tup[j])) : mask_t(x <= tup[j]);
                    const V xm = ops::select(on, x, zero);
                    r_x[j] = r_x[j] + xm;
                    q_x[j] = q_x[j] + xm;
                    r_min[j] = ops::min(r_min[j], ops::select(on, x, pinf));
                    r_max[j] = ops::max(r_max[j], ops::select(on, x, ninf));
                    r_hi[j] += ops::count(on & (x > tup[j]));
                    if (j == 0) r_lo[j] += ops::count(on & (x < tlo[j]));
                    const V xc = ops::select(on, ops::min(ops::max(x, tlo[j]), tup[j]), zero);
                    r_xc[j] = r_xc[j] + xc;
                    r_xc2[j] = ops::fma(xc, xc, r_xc2[j]);
                    q_rej[j] += ops::count(on & !keep);
                    keep_rs = keep_rs & keep;
                }
            }
            const mask_t keep_all_rs = keep_rs & row_rs;
            q_rsrej += ops::count(on & !keep_all_rs);
            const mask_t keep = keep_all_rs & row_keep;
            // IS weight
            if (has_is) {
                const V w = tok_is ? rho : v_wrow;
                V tw = ops::min(w, vC);
                if (clip_low) tw = ops::max(tw, vlo_clip);
                tw = ops::select(on, tw, zero);
                if (tok_is) {
                    const V wm = ops::select(on, w, zero);
                    a_w = a_w + wm;
                    q_w = q_w + wm;
                    n_hi += ops::count(on & (w > vC));
                    n_lo += ops::count(on & (w < vclo));
                    a_wmin = ops::min(a_wmin, ops::select(on, w, pinf));
                    a_wmax = ops::max(a_wmax, ops::select(on, w, ninf));
                    const V wc = ops::select(on, ops::min(ops::max(w, vclo), vC) - one, zero);
                    a_c = a_c + wc;
                    a_c2 = ops::fma(wc, wc, a_c2);
                    a_t = a_t + tw;
                    q_t = q_t + tw;
                }
                n_kept += ops::count(keep);
                n_changed += ops::count(on & ((tw != w) | !keep));
                a_post = a_post + ops::select(keep, tw, zero);
                a_pmin = ops::min(a_pmin, ops::select(keep, tw, pinf));
                a_pmax = ops::max(a_pmax, ops::select(keep, tw, ninf));
                if (out.weights) store_lanes<V, W>(tw, out.weights + pos, std::min<std::uint64_t>(L, e - pos));
            }
            if (out.mask)
                store_lanes<V, std::uint8_t>(ops::select(keep, one, zero), out.mask + pos,
                                             std::min<std::uint64_t>(L, e - pos));
            pos += L;
        };
        for_each_batch<V>(v, b, e, buf, phase2);
        if (has_is && !out.weights) {
            // nothing to write
        }
        if (has_is && !tok_is) {
            // weight was written above; nothing per-token to reduce
        } else if (tok_is) {
            is_accumulator& a = acc.is;
            const double m = ops::sum(q_w) / n;
            a.seq.add(m);
            a.seq_hi += m > C;
            a.seq_lo += m < c_lo;
            a.seq_max_dev = std::max(a.seq_max_dev, std::fabs(m - 1.0));
            a.sum_seq_t += ops::sum(q_t) / n;
        }
        bool row_rs_rejected = !row_rs_keep;
        for (int j = 0; j < 3; ++j) {
            if (tok_opt[j] < 0) continue;
            rs_accumulator& a = acc.rs[static_cast<std::size_t>(tok_opt[j])];
            const rs_option& r = o.rejection[static_cast<std::size_t>(tok_opt[j])];
            const double X = ops::sum(q_x[j]) / n;
            a.seq.add(X);
            a.seq_hi += X > r.stat_upper();
            a.seq_lo += r.has_lower() && X < r.stat_lower();
            a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
            if (q_rej[j]) {
                a.rejected_seqs += 1;
                row_rs_rejected = true;
            }
            r_rej[j] += q_rej[j];
        }
        n_rs_rej += q_rsrej;
        acc.rs_rejected_seqs += row_rs_rejected;
        acc.veto_seqs += vetoed;
        acc.veto_tokens += q_veto;
    }

    // ---- reduce the lanes
    acc.sum_k3 = ops::sum(a_k3) + k3_fix;
    acc.sum_chi2 = ops::sum(a_chi2);
    acc.rs_rejected_tokens = n_rs_rej;
    if (has_is) {
        is_accumulator& a = acc.is;
        if (tok_is) {
            a.sum_w = ops::sum(a_w);
            a.sum_c = ops::sum(a_c);
            a.sum_c2 = ops::sum(a_c2);
            a.w_min = ops::hmin(a_wmin);
            a.w_max = ops::hmax(a_wmax);
            a.tok_hi = n_hi;
            a.tok_lo = n_lo;
            a.sum_t = ops::sum(a_t);
        }
        a.kept = n_kept;
        a.changed = n_changed;
        a.post_sum = ops::sum(a_post);
        a.post_min = ops::hmin(a_pmin);
        a.post_max = ops::hmax(a_pmax);
    }
    for (int j = 0; j < 3; ++j) {
        if (tok_opt[j] < 0) continue;
        rs_accumulator& a = acc.rs[static_cast<std::size_t>(tok_opt[j])];
        a.sum_x = ops::sum(r_x[j]);
        a.sum_xc = ops::sum(r_xc[j]);
        a.sum_xc2 = ops::sum(r_xc2[j]);
        a.tok_min = ops::hmin(r_min[j]);
        a.tok_max = ops::hmax(r_max[j]);
        a.tok_hi = r_hi[j];
        a.tok_lo = r_lo[j];
        a.rejected_tokens = r_rej[j];
    }
    return acc;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
