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
// Token-level modes (no phase 1) take a short cut per batch: every token
// statistic is monotone in delta on each side of 0, so all thresholds
// together keep delta inside one interval [A, B] (inside_interval below,
// narrowed by a margin). A batch whose deltas all lie inside needs no clamp,
// no threshold count and no rejection -- its terms are the same numbers
// the full step would add -- and runs a step of half the operations; any
// other batch (a token near or past a threshold, NaN, |delta| > 20) runs
// the full step. The scalar reference path always runs the full step.
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

/// Stores lanes [0, n) of a batch into dst, converting to W (a full batch
/// with one vector store on AVX2/AVX-512).
template <class V, class W>
LOGRATIO_ALWAYS_INLINE inline void store_lanes(const V& x, W* dst, std::size_t n) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        (void)n;
        *dst = static_cast<W>(x);
    } else {
#if LOGRATIO_X86
        if constexpr ((is_avx512<typename V::arch_type> || is_avx2<typename V::arch_type>) &&
                      (std::is_same<W, float>::value || std::is_same<W, double>::value)) {
            if (n == ops::size) return store_narrow<typename V::arch_type>(dst, x);
        }
#endif
        alignas(64) double t[ops::size];
        x.store_aligned(t);
        for (std::size_t k = 0; k < n; ++k) dst[k] = static_cast<W>(t[k]);
    }
}

/// Stores lanes [0, n) of a mask as bytes 0/1.
template <class V>
LOGRATIO_ALWAYS_INLINE inline void store_mask_lanes(const typename simd_ops<V>::mask& m, std::uint8_t* dst,
                                                    std::size_t n) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        (void)n;
        *dst = m ? 1 : 0;
    } else {
#if LOGRATIO_X86
        if constexpr (is_avx512<typename V::arch_type> || is_avx2<typename V::arch_type>) {
            if (n == ops::size) return store_mask_bytes<typename V::arch_type>(dst, m);
        }
#endif
        store_lanes<V, std::uint8_t>(ops::select(m, ops::splat(1.0), ops::splat(0.0)), dst, n);
    }
}

/// Lane counters: a mask's true lanes added as 1.0 per lane (exact below
/// 2^53 per lane), summed once at the end -- cheaper than a popcount per
/// mask on the vector-heavy phase 2.
template <class V>
LOGRATIO_ALWAYS_INLINE inline void tally(V& c, const typename simd_ops<V>::mask& m) noexcept {
    using ops = simd_ops<V>;
    if constexpr (ops::size == 1) {
        c += m ? 1.0 : 0.0;
    } else {
#if LOGRATIO_X86
        if constexpr (is_avx512<typename V::arch_type>) {
            c = V(_mm512_mask_add_pd(c, m, c, _mm512_set1_pd(1.0)));
            return;
        }
#endif
        c = c + ops::select(m, ops::splat(1.0), ops::splat(0.0));
    }
}
template <class V>
inline std::uint64_t tally_total(const V& c) noexcept {
    return static_cast<std::uint64_t>(simd_ops<V>::sum(c));
}

/// The interval of delta inside which no token-level threshold of o can
/// act: |delta| <= 20, a token IS weight inside [c, C], every token
/// rejection statistic inside its bounds, no veto. Each bound is narrowed by
/// 1e-9 (1 + |bound|), far more than the rounding of the kernel's own
/// statistics, so a token inside passes every exact test of the full step.
/// Empty (lo > hi) when some option cannot be decided this way.
struct delta_interval {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
};
inline delta_interval inside_interval(const correction_options& o) {
    delta_interval r{-clamp_log_ratio, clamp_log_ratio};
    auto keep_above = [&](double a) { r.lo = std::max(r.lo, a); };
    auto keep_below = [&](double b) { r.hi = std::min(r.hi, b); };
    if (o.is) {
        if (o.is->level != is_level::token) return {0.0, -1.0};
        keep_above(std::log(o.is->metric_lower()));  // w >= c (c = c_low when given: no lower clip)
        keep_below(std::log(o.is->upper));           // w <= C
    }
    for (const rs_option& x : o.rejection) {
        if (!x.is_token_level()) return {0.0, -1.0};
        const double up = x.stat_upper();
        if (x.stat == rs_stat::k1) {  // -delta in [log lower, log upper]
            keep_above(-up);
            keep_below(-x.stat_lower());
        } else if (x.stat == rs_stat::k2) {  // delta^2 / 2 <= up
            const double b = std::sqrt(2.0 * std::max(up, 0.0));
            keep_above(-b);
            keep_below(b);
        } else {  // expm1(delta) - delta <= up: the two roots by bisection
            auto root = [&](double sign) {
                double a = 0.0, b = sign * clamp_log_ratio;
                if (std::expm1(b) - b <= up) return b;
                for (int i = 0; i < 200; ++i) {
                    const double m = 0.5 * (a + b);
                    (std::expm1(m) - m <= up ? a : b) = m;
                }
                return a;
            };
            keep_above(root(-1.0));
            keep_below(root(1.0));
        }
    }
    if (o.veto) keep_above(std::log(*o.veto));  // a token below log tau is vetoed
    r.lo += 1e-9 * (1.0 + std::fabs(r.lo));
    r.hi -= 1e-9 * (1.0 + std::fabs(r.hi));
    return r;
}

/// Do all lanes of d lie inside [lo, hi]? (NaN lanes do not.)
template <class V>
LOGRATIO_ALWAYS_INLINE inline bool all_inside(const V& d, const V& lo, const V& hi) noexcept {
    return simd_ops<V>::all((d >= lo) & (d <= hi));
}

/// What the short cut's step computes (from the options) and where its
/// batches lie.
struct inside_plan {
    double lo = 0.0, hi = -1.0;  ///< the interval of delta (empty: no short cut)
    bool k1 = false, k2 = false, k3 = false, is = false;
};

/// The short cut's sums over one sequence (merged into the full step's
/// accumulators after the sequence, where the sums it leaves out are
/// derived: with IS, sum em = sum (w - 1) = c, sum t = c + n, chi2 terms
/// (w - 1)^2 + 2 (w - 1), the kept count n, and the extremes of t those of
/// w = 1 + expm1(delta), monotone in delta).
template <class V>
struct inside_sums {
    using ops = simd_ops<V>;
    static constexpr double inf = std::numeric_limits<double>::infinity();
    std::uint64_t n = 0;
    V top = ops::splat(-inf), t = ops::splat(0.0), r = ops::splat(0.0), d = ops::splat(0.0), k3 = ops::splat(0.0);
    V chi2 = ops::splat(0.0), dmin = ops::splat(inf), dmax = ops::splat(-inf);
    V k1sq = ops::splat(0.0), k2 = ops::splat(0.0), k2min = ops::splat(inf), k2sq = ops::splat(0.0);
    V k3min = ops::splat(inf), k3sq = ops::splat(0.0);
    V c = ops::splat(0.0), c2 = ops::splat(0.0);
};

/// The short cut's step for one batch whose deltas all lie inside the
/// interval (so dc = delta, no threshold acts and keep = on): the terms the
/// full step adds (or what they are derived from), the weights (t = w = rho
/// on masked-in lanes, 0 elsewhere) and the mask (= on).
template <class V, class W, bool K2 = true>
LOGRATIO_ALWAYS_INLINE inline void inside_batch(inside_sums<V>& s, const V& t, const V& r, const V& d,
                                                const typename simd_ops<V>::mask& on, const inside_plan& p,
                                                W* wdst, std::uint8_t* mdst, std::size_t lanes) noexcept {
    using ops = simd_ops<V>;
    const V zero = ops::splat(0.0), one = ops::splat(1.0);
    s.top = ops::max(s.top, ops::max(t, r));
    s.n += ops::count(on);
    s.t = s.t + t;
    s.r = s.r + r;
    s.d = s.d + d;
    const V em = ops::expm1(d);
    const V k3 = em - d;  // >= 0 (em >= d for the kernel's expm1): the full step's max(k3, 0) is a no-op
    s.k3 = s.k3 + k3;
    s.dmin = ops::min_where(s.dmin, on, d);
    s.dmax = ops::max_where(s.dmax, on, d);
    if (p.k1) s.k1sq = ops::fma(d, d, s.k1sq);  // x' = x = -delta
    if (K2 && p.k2) {  // K2 = false: compiled out (its sums need registers)
        const V x = V(0.5) * d * d;
        s.k2 = s.k2 + x;
        s.k2min = ops::min_where(s.k2min, on, x);
        s.k2sq = ops::fma(x, x, s.k2sq);
    }
    if (p.k3) {
        s.k3min = ops::min_where(s.k3min, on, k3);
        s.k3sq = ops::fma(k3, k3, s.k3sq);
    }
    if (p.is) {  // token level: t = w
        const V w = em + one;
        const V wc = w - one;
        s.c = s.c + wc;
        s.c2 = ops::fma(wc, wc, s.c2);
        if (wdst) store_lanes<V, W>(ops::select(on, w, zero), wdst, lanes);
    } else {
        s.chi2 = ops::fma(em, em + V(2.0), s.chi2);
    }
    if (mdst) store_mask_lanes<V>(on, mdst, lanes);
}

#if LOGRATIO_X86
/// The short cut over the whole batches [i, end) of a view read directly
/// from memory (AVX2/AVX-512), as long as they lie inside: returns where it
/// stopped (end, or the first batch with a delta outside). Its own function
/// so that its sums stay in registers.
template <class V, class W, bool K2, class T, class M>
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
std::uint64_t inside_run(const paired_view<T, M>& v, std::uint64_t i, std::uint64_t end, W* wout,
                         std::uint8_t* mout, const inside_plan& p, inside_sums<V>& sums) noexcept {
    using ops = simd_ops<V>;
    using A = typename V::arch_type;
    constexpr std::size_t L = ops::size;
    const T* tp = v.train();
    const T* rp = v.rollout();
    const M* mp = v.mask();
    const V zero = ops::splat(0.0), lo = ops::splat(p.lo), hi = ops::splat(p.hi);
    const auto all_on = ops::splat(1.0) != zero;
    inside_sums<V> s = sums;
    auto load = [&](std::uint64_t k, V& t, V& r, V& d) LOGRATIO_ALWAYS_INLINE {
        const auto on = mp ? widen_mask<A>(mp + k) : all_on;
        t = ops::select(on, widen<A>(tp + k), zero);
        r = ops::select(on, widen<A>(rp + k), zero);
        d = t - r;
        return on;
    };
    auto step = [&](std::uint64_t k, const V& t, const V& r, const V& d, const typename ops::mask& on)
                    LOGRATIO_ALWAYS_INLINE {
        inside_batch<V, W, K2>(s, t, r, d, on, p, wout ? wout + k : nullptr, mout ? mout + k : nullptr, L);
    };
    for (; i < end; i += L) {
        prefetch_ahead(tp, rp, mp, i);
        V t, r, d;
        const auto on = load(i, t, r, d);
        if (!all_inside(d, lo, hi)) break;
        step(i, t, r, d, on);
    }
    sums = s;
    return i;
}
#endif

/// Per-sequence lane sums: count, delta, l_T, l_E, the largest log-prob
/// (validation), dc, and, when a sequence option needs them, k2/k3 sums and
/// maxima.
template <class V>
struct row_sums {
    using ops = simd_ops<V>;
    std::uint64_t n = 0;
    V d = ops::splat(0.0), t = ops::splat(0.0), r = ops::splat(0.0);
    V top = ops::splat(-std::numeric_limits<double>::infinity());
    V dmin = ops::splat(std::numeric_limits<double>::infinity());
    V dc = ops::splat(0.0), k2 = ops::splat(0.0), k3 = ops::splat(0.0), k2max = ops::splat(0.0),
      k3max = ops::splat(0.0);
};

template <class V, class W, class T, class M>
correction_accumulator correct_range_impl(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1,
                                          const correction_options& o, const correction_outputs<W>& out) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    constexpr std::size_t L = ops::size;
    static_assert(chunk_tokens % L == 0, "chunk must hold whole batches");

    correction_accumulator acc(o);
    chunk_buffers buf;
    const V zero = ops::splat(0.0), one = ops::splat(1.0), half = ops::splat(0.5);
    const V lo20 = ops::splat(-clamp_log_ratio), hi20 = ops::splat(clamp_log_ratio);
    const V pinf = ops::splat(std::numeric_limits<double>::infinity());
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    const V tol = ops::splat(o.positive_tolerance);

    // ---- what is needed
    const bool has_is = o.is.has_value();
    const bool tok_is = has_is && o.is->level == is_level::token;
    const double C = has_is ? o.is->upper : 1.0;
    const double c_lo = has_is ? o.is->metric_lower() : 1.0;
    const bool clip_low = has_is && o.is->lower.has_value();
    const V vC = ops::splat(C), vclo = ops::splat(c_lo), vclip = ops::splat(clip_low ? *o.is->lower : 0.0);
    const double log_C = std::log(C), log_clo = std::log(c_lo);
    // masked-out lanes carry delta = dc = 0, rho = 1, k = 0: a threshold test
    // that those values fail needs no masking
    const bool w_one_inside = c_lo <= 1.0 && 1.0 <= C;

    int tok_opt[3] = {-1, -1, -1};  // token rejection options by statistic (at most one each)
    bool any_seq_rs = false, need_k = false;
    for (std::size_t k = 0; k < o.rejection.size(); ++k) {
        const rs_option& r = o.rejection[k];
        if (r.is_token_level()) {
            tok_opt[static_cast<int>(r.stat)] = static_cast<int>(k);
        } else {
            any_seq_rs = true;
            need_k = need_k || r.stat != rs_stat::k1;
        }
    }
    const bool any_tok_rs = tok_opt[0] >= 0 || tok_opt[1] >= 0 || tok_opt[2] >= 0;
    double tlo_d[3] = {0, 0, 0}, tup_d[3] = {0, 0, 0};
    V tlo[3], tup[3];
    for (int j = 0; j < 3; ++j) {
        if (tok_opt[j] >= 0) {
            tlo_d[j] = o.rejection[static_cast<std::size_t>(tok_opt[j])].stat_lower();
            tup_d[j] = o.rejection[static_cast<std::size_t>(tok_opt[j])].stat_upper();
        }
        tlo[j] = ops::splat(tlo_d[j]);
        tup[j] = ops::splat(tup_d[j]);
    }
    const bool k1_zero_inside = tlo_d[0] <= 0.0 && 0.0 <= tup_d[0];
    const double log_veto = o.veto ? std::log(*o.veto) : -std::numeric_limits<double>::infinity();
    const V vlog_veto = ops::splat(log_veto);
    const bool veto_on_zero = log_veto > 0.0;  // delta = 0 already below the veto
    // Phase 1 runs only when a decision for the whole sequence must precede
    // its tokens (sequence-level IS weight or sequence rejection option);
    // otherwise phase 2 also takes the sequence sums (and a veto, known at
    // the end of the sequence, rewrites its mask).
    const bool need_phase1 = (has_is && !tok_is) || any_seq_rs;
    inside_plan plan;
    if (ops::size > 1 && !need_phase1) {
        const delta_interval in = inside_interval(o);
        plan = {in.lo, in.hi, tok_opt[0] >= 0, tok_opt[1] >= 0, tok_opt[2] >= 0, has_is};
    }
    const bool short_cut = plan.lo <= plan.hi;
    const V in_lo = ops::splat(plan.lo), in_hi = ops::splat(plan.hi);

    // ---- lane accumulators over all tokens (reduced at the end)
    V a_k3 = zero, a_chi2 = zero, a_dcmin = pinf, a_dcmax = ninf;
    V a_c = zero, a_c2 = zero, a_t = zero, a_e = zero;
    V a_post = zero, a_pmin = pinf, a_pmax = ninf;
    V n_hi = zero, n_lo = zero, n_kept = zero, n_changed = zero, n_rs_rej = zero, n_veto = zero;
    V r_xc[3] = {zero, zero, zero}, r_xc2[3] = {zero, zero, zero};
    V r_min[3] = {pinf, pinf, pinf};
    V r_hi[3] = {zero, zero, zero}, r_lo[3] = {zero, zero, zero};
    double k3_fix = 0.0;  // exact k3_kl correction for |delta| > 20 lanes

    for (std::uint64_t s = s0; s < s1; ++s) {
        const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
        row_sums<V> rs;
        double row_fix = 0.0;  // phase 2: sum of (delta - dc) over the rare |delta| > 20 tokens
        auto add_row = [&](const V& t, const V& r, const V& d, const V& dc, mask_t on, bool sum_d)
                           LOGRATIO_ALWAYS_INLINE {
            rs.top = ops::max(rs.top, ops::max(t, r));
            rs.n += ops::count(on);
            if (sum_d) rs.d = rs.d + d;
            rs.t = rs.t + t;
            rs.r = rs.r + r;
            rs.dc = rs.dc + dc;
        };
        auto validate = [&] {
            if (!std::isfinite(ops::sum(rs.t)) || !std::isfinite(ops::sum(rs.r)) || !ops::none(rs.top > tol))
                throw_bad_token(v, s, b, static_cast<std::size_t>(e - b), nonfinite_policy::raise,
                                o.positive_tolerance);
        };

        // ---- phase 1 (only when needed): the sequence's sums and decisions
        bool row_rs_keep = true, vetoed = false;
        double w_row = 1.0, t_row = 0.0;
        if (need_phase1) {
            auto phase1 = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
                const V t = ops::select(on, t0, zero);
                const V r = ops::select(on, r0, zero);
                const V d = t - r;
                const V dc = ops::min(ops::max(d, lo20), hi20);
                add_row(t, r, d, dc, on, true);
                rs.dmin = ops::min(rs.dmin, ops::select(on, d, pinf));
                if (need_k) {
                    const V k2 = half * dc * dc;
                    const V k3 = ops::expm1(dc) - dc;
                    rs.k2 = rs.k2 + k2;
                    rs.k3 = rs.k3 + k3;
                    rs.k2max = ops::max(rs.k2max, k2);
                    rs.k3max = ops::max(rs.k3max, k3);
                }
            };
            for_each_batch<V>(v, b, e, buf, phase1);
            validate();
            if (rs.n == 0) {  // not a sequence: outputs are 0
                if (out.weights) std::fill(out.weights + b, out.weights + e, W(0));
                if (out.mask) std::fill(out.mask + b, out.mask + e, std::uint8_t(0));
                continue;
            }
            const double n = static_cast<double>(rs.n);
            for (std::size_t k = 0; k < o.rejection.size(); ++k) {
                const rs_option& r = o.rejection[k];
                if (r.is_token_level()) continue;
                double X;
                if (r.stat == rs_stat::k1) X = -ops::sum(rs.dc);
                else if (r.stat == rs_stat::k2) X = r.aggregate == rs_aggregate::seq_max ? ops::hmax(rs.k2max) : ops::sum(rs.k2);
                else X = r.aggregate == rs_aggregate::seq_max ? ops::hmax(rs.k3max) : ops::sum(rs.k3);
                if (r.aggregate == rs_aggregate::seq_mean) X /= n;
                const double lo = r.stat_lower(), up = r.stat_upper();
                const bool keep = r.stat == rs_stat::k1 ? (X >= lo && X <= up) : X <= up;
                rs_accumulator& a = acc.rs[k];
                a.sum_x += n * X;
                a.xc.add(std::min(std::max(X, lo), up), n);
                a.seq.add(X);
                a.seq_hi += X > up;
                a.seq_lo += r.has_lower() && X < lo;
                a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
                if (!keep) {
                    a.rejected_tokens += rs.n;
                    a.rejected_seqs += 1;
                    row_rs_keep = false;
                }
            }
            vetoed = o.veto && ops::hmin(rs.dmin) < log_veto;
            if (has_is && !tok_is) {  // the sequence's IS weight
                const double sd = ops::sum(rs.d);
                const double lr = o.is->level == is_level::sequence ? sd : sd / n;
                w_row = std::exp(clamp_delta(lr));
                t_row = std::min(w_row, C);
                if (clip_low) t_row = std::max(t_row, *o.is->lower);
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
                a.sum_t += n * t_row;
                a.sum_seq_t += t_row;
            }
        }
        const V v_wrow = ops::splat(w_row), v_trow = ops::splat(t_row);
        const mask_t row_keep = ops::splat((row_rs_keep && !vetoed) ? 1.0 : 0.0) != zero;
        const mask_t row_rs = ops::splat(row_rs_keep ? 1.0 : 0.0) != zero;

        // ---- phase 2: per token
        V q_e = zero, q_t = zero, q_x[3] = {zero, zero, zero}, q_hi[3] = {zero, zero, zero},
          q_lo[3] = {zero, zero, zero}, q_veto = zero;
        V q_kept = zero, q_changed = zero, q_post = zero, q_pmin = pinf, q_pmax = ninf;
        std::uint64_t pos = b;
        // one token rejection option (statistic J), unrolled at compile time
        auto token_option = [&](auto J, const V& dc, const V& k3, mask_t on, mask_t& keep_rs) LOGRATIO_ALWAYS_INLINE {
            constexpr int j = decltype(J)::value;
            if (tok_opt[j] < 0) return;
            if constexpr (j == 0) {  // k1 = -dc in [lo, up]; its sum and extremes come from dc
                const V x = zero - dc;
                mask_t hi = x > tup[j], lo = x < tlo[j];
                V xc = ops::min(ops::max(x, tlo[j]), tup[j]);
                if (!k1_zero_inside) {
                    hi = hi & on;
                    lo = lo & on;
                    xc = ops::select(on, xc, zero);
                }
                tally(q_hi[j], hi);
                tally(q_lo[j], lo);
                r_xc[j] = r_xc[j] + xc;
                r_xc2[j] = ops::fma(xc, xc, r_xc2[j]);
                keep_rs = keep_rs & !(hi | lo);
            } else {  // k2, k3 >= 0 (0 on masked-out lanes) against an upper bound
                const V x = j == 1 ? V(half * dc * dc) : k3;
                const mask_t hi = x > tup[j];
                const V xc = ops::min(ops::max(x, zero), tup[j]);
                tally(q_hi[j], hi);
                q_x[j] = q_x[j] + x;
                r_min[j] = ops::min(r_min[j], ops::select(on, x, pinf));
                r_xc[j] = r_xc[j] + xc;
                r_xc2[j] = ops::fma(xc, xc, r_xc2[j]);
                keep_rs = keep_rs & !hi;
            }
        };
        inside_sums<V> f;  // the short cut's sums over this sequence
        auto inside_step = [&](const V& t, const V& r, const V& d, mask_t on) LOGRATIO_ALWAYS_INLINE {
            const std::size_t lanes = static_cast<std::size_t>(std::min<std::uint64_t>(L, e - pos));
            inside_batch<V, W>(f, t, r, d, on, plan, out.weights ? out.weights + pos : nullptr,
                               out.mask ? out.mask + pos : nullptr, lanes);
            pos += L;
        };
        auto phase2 = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            const V t = ops::select(on, t0, zero);
            const V r = ops::select(on, r0, zero);
            const V d = t - r;
            if (short_cut && all_inside(d, in_lo, in_hi)) return inside_step(t, r, d, on);
            const V dc = ops::min(ops::max(d, lo20), hi20);
            if (!need_phase1) add_row(t, r, d, dc, on, false);  // sum delta = sum dc + row_fix
            const V em = ops::expm1(dc);
            const V k3 = em - dc;
            a_k3 = a_k3 + k3;
            a_chi2 = ops::fma(em, em + V(2.0), a_chi2);
            a_dcmin = ops::min(a_dcmin, ops::select(on, dc, pinf));
            a_dcmax = ops::max(a_dcmax, ops::select(on, dc, ninf));
            if (!ops::none(ops::abs(d) > hi20)) {  // rare: k3_kl uses the unclamped delta
                alignas(64) double dd[L];
                alignas(64) double mm[L];
                store_lanes<V, double>(d, dd, L);
                store_lanes<V, double>(ops::select(on, one, zero), mm, L);
                for (std::size_t k = 0; k < L; ++k)
                    if (mm[k] != 0.0 && std::fabs(dd[k]) > clamp_log_ratio) {
                        const double dck = clamp_delta(dd[k]);
                        k3_fix += (std::expm1(dd[k]) - dd[k]) - (std::expm1(dck) - dck);
                        row_fix += dd[k] - dck;
                    }
            }
            if (o.veto) tally(q_veto, veto_on_zero ? mask_t(on & (d < vlog_veto)) : mask_t(d < vlog_veto));
            mask_t keep_rs = on;
            if (any_tok_rs) {
                token_option(std::integral_constant<int, 0>{}, dc, k3, on, keep_rs);
                token_option(std::integral_constant<int, 1>{}, dc, k3, on, keep_rs);
                token_option(std::integral_constant<int, 2>{}, dc, k3, on, keep_rs);
            }
            const mask_t keep_all_rs = keep_rs & row_rs;
            tally(n_rs_rej, on & !keep_all_rs);
            const mask_t keep = keep_all_rs & row_keep;
            const std::size_t lanes = static_cast<std::size_t>(std::min<std::uint64_t>(L, e - pos));
            if (has_is) {
                V w, tw;
                if (tok_is) {
                    w = em + one;
                    tw = ops::min(w, vC);
                    if (clip_low) tw = ops::max(tw, vclip);
                    mask_t hi = w > vC, lo = w < vclo;
                    V wc = ops::min(ops::max(w, vclo), vC) - one;
                    if (!w_one_inside) {
                        hi = hi & on;
                        lo = lo & on;
                        wc = ops::select(on, wc, zero);
                    }
                    tally(n_hi, hi);
                    tally(n_lo, lo);
                    a_c = a_c + wc;
                    a_c2 = ops::fma(wc, wc, a_c2);
                    q_e = q_e + em;
                } else {
                    w = v_wrow;
                    tw = v_trow;
                }
                tw = ops::select(on, tw, zero);
                q_t = q_t + tw;
                tally(q_kept, keep);
                tally(q_changed, on & ((tw != w) | !keep));
                q_post = q_post + ops::select(keep, tw, zero);
                q_pmin = ops::min(q_pmin, ops::select(keep, tw, pinf));
                q_pmax = ops::max(q_pmax, ops::select(keep, tw, ninf));
                if (out.weights) store_lanes<V, W>(tw, out.weights + pos, lanes);
            }
            if (out.mask) store_mask_lanes<V>(keep, out.mask + pos, lanes);
            pos += L;
        };
        bool ran = false;
#if LOGRATIO_X86
        if constexpr (is_simd_batch<V>::template direct<T, M>) {
            if (short_cut) {  // runs of the short cut, each batch outside it by the full step
                const std::uint64_t full_end = b + (e - b) / L * L;
                std::uint64_t i = b;
                while (i < full_end) {
                    i = plan.k2 ? inside_run<V, W, true>(v, i, full_end, out.weights, out.mask, plan, f)
                                : inside_run<V, W, false>(v, i, full_end, out.weights, out.mask, plan, f);
                    if (i == full_end) break;
                    pos = i;
                    for_each_batch<V>(v, i, i + L, buf, phase2);
                    i += L;
                }
                pos = full_end;
                if (full_end < e) for_each_batch<V>(v, full_end, e, buf, phase2);
                ran = true;
            }
        }
#endif
        if (!ran) for_each_batch<V>(v, b, e, buf, phase2);
        if (short_cut) {  // merge the short cut's sums
            rs.top = ops::max(rs.top, f.top);
            rs.n += f.n;
            rs.t = rs.t + f.t;
            rs.r = rs.r + f.r;
            rs.dc = rs.dc + f.d;
            a_k3 = a_k3 + f.k3;
            a_chi2 = a_chi2 + (has_is ? V(ops::fma(f.c, V(2.0), f.c2)) : f.chi2);
            a_dcmin = ops::min(a_dcmin, f.dmin);
            a_dcmax = ops::max(a_dcmax, f.dmax);
            r_xc[0] = r_xc[0] - f.d;
            r_xc2[0] = r_xc2[0] + f.k1sq;
            q_x[1] = q_x[1] + f.k2;
            r_xc[1] = r_xc[1] + f.k2;
            r_min[1] = ops::min(r_min[1], f.k2min);
            r_xc2[1] = r_xc2[1] + f.k2sq;
            q_x[2] = q_x[2] + f.k3;
            r_xc[2] = r_xc[2] + f.k3;
            r_min[2] = ops::min(r_min[2], f.k3min);
            r_xc2[2] = r_xc2[2] + f.k3sq;
            if (has_is) {
                const V n_lane = ops::splat(static_cast<double>(f.n) / static_cast<double>(L));  // exact: L = 2^j
                const V tw = f.c + n_lane;  // sum of t = w over the masked-in lanes
                q_kept = q_kept + n_lane;
                a_c = a_c + f.c;
                a_c2 = a_c2 + f.c2;
                q_e = q_e + f.c;
                q_t = q_t + tw;
                q_post = q_post + tw;
                // lanes that saw a token: extremes of w from those of delta
                const mask_t seen = f.dmin <= f.dmax;
                q_pmin = ops::min(q_pmin, ops::select(seen, V(ops::expm1(ops::min(f.dmin, hi20)) + one), pinf));
                q_pmax = ops::max(q_pmax, ops::select(seen, V(ops::expm1(ops::max(f.dmax, lo20)) + one), ninf));
            }
        }
        if (!need_phase1) {
            validate();
            if (rs.n == 0) continue;  // not a sequence (phase 2 wrote zeros, added nothing)
        }
        const std::uint64_t row_n = rs.n;
        const double n = static_cast<double>(row_n);

        // off-policy sums of the sequence
        const double sd = need_phase1 ? ops::sum(rs.d) : ops::sum(rs.dc) + row_fix;
        const double st = ops::sum(rs.t), sr = ops::sum(rs.r);
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

        // veto without phase 1: found at the end, the sequence's mask is rewritten
        const std::uint64_t row_veto = tally_total(q_veto);
        n_veto = n_veto + q_veto;
        if (!need_phase1 && row_veto > 0) {
            vetoed = true;
            if (out.mask) std::fill(out.mask + b, out.mask + e, std::uint8_t(0));
            q_kept = zero;
            q_post = zero;
            q_pmin = pinf;
            q_pmax = ninf;
            q_changed = zero;
            if (has_is) acc.is.changed += row_n;  // every token rejected
        }
        if (has_is) {
            n_kept = n_kept + q_kept;
            n_changed = n_changed + q_changed;
            a_post = a_post + q_post;
            a_pmin = ops::min(a_pmin, q_pmin);
            a_pmax = ops::max(a_pmax, q_pmax);
            if (tok_is) {
                is_accumulator& a = acc.is;
                const double m = (ops::sum(q_e) + n) / n;  // mean of w = 1 + em over the sequence
                a.seq.add(m);
                a.seq_hi += m > C;
                a.seq_lo += m < c_lo;
                a.seq_max_dev = std::max(a.seq_max_dev, std::fabs(m - 1.0));
                a.sum_seq_t += ops::sum(q_t) / n;
                a_e = a_e + q_e;
                a_t = a_t + q_t;
            }
        }
        bool row_rs_rejected = !row_rs_keep;
        for (int j = 0; j < 3; ++j) {
            if (tok_opt[j] < 0) continue;
            rs_accumulator& a = acc.rs[static_cast<std::size_t>(tok_opt[j])];
            const double X = (j == 0 ? -ops::sum(rs.dc) : ops::sum(q_x[j])) / n;
            a.sum_x += X * n;
            a.seq.add(X);
            a.seq_hi += X > tup_d[j];
            a.seq_lo += j == 0 && X < tlo_d[j];
            a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
            if (tally_total(q_hi[j]) + tally_total(q_lo[j]) > 0) {
                a.rejected_seqs += 1;
                row_rs_rejected = true;
            }
            r_hi[j] = r_hi[j] + q_hi[j];
            r_lo[j] = r_lo[j] + q_lo[j];
        }
        acc.rs_rejected_seqs += row_rs_rejected;
        acc.veto_seqs += vetoed;
    }

    // ---- reduce the lanes
    acc.sum_k3 = ops::sum(a_k3) + k3_fix;
    acc.sum_chi2 = ops::sum(a_chi2);
    acc.rs_rejected_tokens = tally_total(n_rs_rej);
    acc.veto_tokens = tally_total(n_veto);
    const double dcmin = ops::hmin(a_dcmin), dcmax = ops::hmax(a_dcmax);
    if (has_is) {
        is_accumulator& a = acc.is;
        if (tok_is && acc.tokens) {
            // w = 1 + expm1(dc) is monotone in dc: its extremes are those of dc
            // (the same lane arithmetic as the tokens')
            a.sum_w = ops::sum(a_e) + static_cast<double>(acc.tokens);
            a.sum_c = ops::sum(a_c);
            a.sum_c2 = ops::sum(a_c2);
            a.w_min = ops::sum(ops::expm1(ops::splat(dcmin))) / static_cast<double>(L) + 1.0;
            a.w_max = ops::sum(ops::expm1(ops::splat(dcmax))) / static_cast<double>(L) + 1.0;
            a.tok_hi = tally_total(n_hi);
            a.tok_lo = tally_total(n_lo);
            a.sum_t = ops::sum(a_t);
        }
        a.kept = tally_total(n_kept);
        a.changed += tally_total(n_changed);
        a.post_sum = ops::sum(a_post);
        a.post_min = ops::hmin(a_pmin);
        a.post_max = ops::hmax(a_pmax);
    }
    for (int j = 0; j < 3; ++j) {
        if (tok_opt[j] < 0) continue;
        rs_accumulator& a = acc.rs[static_cast<std::size_t>(tok_opt[j])];
        a.sum_xc = ops::sum(r_xc[j]);
        a.sum_xc2 = ops::sum(r_xc2[j]);
        if (j == 0) {  // k1 = -dc
            a.tok_min = acc.tokens ? -dcmax : detail::inf64;
            a.tok_max = acc.tokens ? -dcmin : -detail::inf64;
        } else {
            // k2, k3 are convex in dc with their minimum at 0: the maximum is at
            // an extreme of dc (the same lane arithmetic as the tokens')
            a.tok_min = ops::hmin(r_min[j]);
            auto stat = [&](double x) {
                const V dc = ops::splat(x);
                return ops::hmax(j == 1 ? V(half * dc * dc) : V(ops::expm1(dc) - dc));
            };
            a.tok_max = acc.tokens ? std::max(stat(dcmin), stat(dcmax)) : -detail::inf64;
        }
        a.tok_hi = tally_total(r_hi[j]);
        a.tok_lo = tally_total(r_lo[j]);
        a.rejected_tokens = a.tok_hi + a.tok_lo;
    }
    return acc;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
