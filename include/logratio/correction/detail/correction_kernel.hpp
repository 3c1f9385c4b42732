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
//            of its statistic -- plus validation (NaN/Inf, positive log-probs);
//   phase 2  per token: dc, rho = 1 + expm1(dc), the IS weight and its
//            truncation, every token rejection statistic and its test, the
//            final keep bit; the token sums of the metrics; and the writes
//            of the weight and mask outputs.
// Token-level modes (no phase 1) take a short cut per batch: every token
// statistic is monotone in delta on each side of 0, so all thresholds
// together keep delta inside one interval [A, B] (correction_plan.hpp,
// narrowed by a margin; correction_shortcut.hpp). A batch whose deltas all lie inside needs no clamp,
// no threshold count and no rejection -- its terms are the same numbers
// the full step would add -- and runs a step of half the operations; any
// other batch (a token near or past a threshold, NaN, |delta| > 20) runs
// the full step. The scalar reference path always runs the full step.
// No other pass reads the tokens (batch normalisation rescales the written
// weights afterwards: correction.hpp).
// Bad values cost no step on clean data: a sequence's sums of l_T and l_E
// are finite unless it holds a masked-in NaN/Inf (guard_sequence). With
// nonfinite_policy::omit such a sequence -- and only it -- runs again over a
// view of its own whose mask leaves those tokens out (kept_sequence,
// use_kept_view), after the totals it touched are restored (a copy taken
// before each sequence when no phase 1 runs; phase 1 touches none): the
// same steps, in the same order, as on the same data with those tokens
// masked out. Nothing in the loop over sequences calls out of line or takes
// the address of a member of the kernel: its state stays in registers.
// The rejection statistics are the types of correction/stats/registry.hpp:
// every per-statistic step below is written once and unrolled over that
// list (for_each_rs_stat), with the statistic's id J indexing the lane
// arrays.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include "../correction_accumulator.hpp"
#include "../../core/view.hpp"
#include "correction_lanes.hpp"
#include "correction_plan.hpp"
#include "correction_shortcut.hpp"
#include "../../detail/batches.hpp"
#include "../../detail/token_terms.hpp"
#include "../../detail/simd.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The options' thresholds as lanes (splat once per call).
template <class V>
struct correction_consts {
    using ops = simd_ops<V>;
    V zero = ops::splat(0.0), one = ops::splat(1.0);
    V lo20 = ops::splat(-clamp_log_ratio), hi20 = ops::splat(clamp_log_ratio);
    V pinf = ops::splat(std::numeric_limits<double>::infinity());
    V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    V C, clo, clip, log_veto, in_lo, in_hi;
    V tlo[rs_stat_count], tup[rs_stat_count];
    explicit correction_consts(const correction_plan& p)
        : C(ops::splat(p.C)), clo(ops::splat(p.c_lo)),
          clip(ops::splat(p.clip)), log_veto(ops::splat(p.log_veto)), in_lo(ops::splat(p.inside.lo)),
          in_hi(ops::splat(p.inside.hi)) {
        for (std::size_t j = 0; j < rs_stat_count; ++j) {
            tlo[j] = ops::splat(p.tlo[j]);
            tup[j] = ops::splat(p.tup[j]);
        }
    }
};

/// Lane accumulators over every token of the range (reduced at the end).
template <class V>
struct token_totals {
    using ops = simd_ops<V>;
    static constexpr double inf = std::numeric_limits<double>::infinity();
    V k3 = ops::splat(0.0), chi2 = ops::splat(0.0), dcmin = ops::splat(inf), dcmax = ops::splat(-inf);
    V c = ops::splat(0.0), c2 = ops::splat(0.0), t = ops::splat(0.0), e = ops::splat(0.0);  ///< token IS
    V post = ops::splat(0.0), pmin = ops::splat(inf), pmax = ops::splat(-inf);             ///< kept weights
    V n_hi = ops::splat(0.0), n_lo = ops::splat(0.0), n_kept = ops::splat(0.0), n_changed = ops::splat(0.0);
    V n_rs_rej = ops::splat(0.0), n_veto = ops::splat(0.0);
    /// token rejection options by statistic: clipped sums, minima, counts
    stat_lanes<V> xc = splat_stat_lanes<V>(0.0), xc2 = splat_stat_lanes<V>(0.0), min = splat_stat_lanes<V>(inf);
    stat_lanes<V> hi = splat_stat_lanes<V>(0.0), lo = splat_stat_lanes<V>(0.0);
    double k3_fix = 0.0;  ///< exact k3_kl correction for |delta| > 20 lanes
};

/// Per-sequence lane sums: count, delta, l_T, l_E, the largest log-prob
/// (validation), dc, and, when a sequence option needs them, a statistic's
/// sums and maxima (by id; the maxima start at 0, the statistics of
/// seq_max being >= 0).
template <class V>
struct row_sums {
    using ops = simd_ops<V>;
    std::uint64_t n = 0;
    V d = ops::splat(0.0), t = ops::splat(0.0), r = ops::splat(0.0);
    V top = ops::splat(-std::numeric_limits<double>::infinity());
    V dmin = ops::splat(std::numeric_limits<double>::infinity());
    V dc = ops::splat(0.0);
    stat_lanes<V> x = splat_stat_lanes<V>(0.0), xmax = splat_stat_lanes<V>(0.0);
};

/// One sequence in the kernel: its token range, its sums, what phase 1
/// decided, and phase 2's per-sequence lane sums.
template <class V>
struct sequence_pass {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    static constexpr double inf = std::numeric_limits<double>::infinity();
    std::uint64_t s, b, e, pos;  ///< sequence, its tokens [b, e), phase 2's next token
    row_sums<V> rs;
    double row_fix = 0.0;  ///< phase 2: sum of (delta - dc) over the rare |delta| > 20 tokens
    // phase 1's decisions
    bool rs_keep = true, vetoed = false;
    V w_row = ops::splat(1.0), t_row = ops::splat(0.0);  ///< sequence-level IS weight and its truncation
    mask_t row_keep, row_rs;
    // phase 2's lane sums over the sequence
    V q_e = ops::splat(0.0), q_t = ops::splat(0.0), q_veto = ops::splat(0.0);
    stat_lanes<V> q_x = splat_stat_lanes<V>(0.0), q_hi = splat_stat_lanes<V>(0.0),
                  q_lo = splat_stat_lanes<V>(0.0);  ///< token options by statistic
    V q_kept = ops::splat(0.0), q_changed = ops::splat(0.0), q_post = ops::splat(0.0);
    V q_pmin = ops::splat(inf), q_pmax = ops::splat(-inf);
    inside_sums<V> f;  ///< the short cut's sums over this sequence
    bool omit = false;  ///< the run over the sequence's own view without its NaN/Inf (nonfinite omit)
    sequence_pass(std::uint64_t seq, std::uint64_t first, std::uint64_t end) : s(seq), b(first), e(end), pos(first) {}
};

/// nonfinite omit: room for one sequence of a view alone (a 1 x n view
/// over its log-probs) under a 0/1 mask of type M without its masked-in
/// NaN/Inf tokens; sized for the longest sequence of the range before the
/// kernel starts. Outside the kernel object: nothing may take the address
/// of a member of it, so that its members stay registers.
template <class T, class M>
struct kept_sequence {
    paired_view<T, M> view;
    std::unique_ptr<M[]> mask;

    kept_sequence(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1, bool omit) {
        if (!omit) return;
        std::uint64_t n = v.kind() == layout::padded ? v.cols() : 0;
        if (v.kind() == layout::packed)
            for (std::uint64_t s = s0; s < s1; ++s) n = std::max(n, v.sequence_end(s) - v.sequence_begin(s));
        mask.reset(new M[std::max<std::uint64_t>(n, 1)]);
    }
};

/// The correction over sequences [s0, s1) of a view, writing the outputs
/// and returning the accumulator: run() walks the sequences; each part
/// below is one step of the two phases described at the top of this file.
template <class V, class W, class T, class M>
class correction_kernel {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    static constexpr std::size_t L = ops::size;
    static_assert(chunk_tokens % L == 0, "chunk must hold whole batches");
    using seq_t = sequence_pass<V>;

public:
    correction_kernel(const paired_view<T, M>& v, const correction_options& o, const correction_outputs<W>& out,
                      kept_sequence<T, M>& kept)
        : view_(v), v_(&v), kept_(&kept), o_(o), out_(out), p_(make_correction_plan(o, L > 1)),
          short_cut_(p_.short_cut()), omit_(o.nonfinite == nonfinite_policy::omit),
          snapshot_(omit_ && !p_.need_phase1), k_(p_), acc_(o) {}

    /// Sequences [s0, s1); with omit, a sequence holding a NaN/Inf runs once
    /// more over a view of its own without them (the totals it touched
    /// restored, the outputs shifted to it) -- one flat loop and one copy of
    /// the steps for both runs (a nested retry loop or a second copy measured
    /// slower at AVX-512, or twice the compile time).
    LOGRATIO_ALWAYS_INLINE correction_accumulator run(std::uint64_t s0, std::uint64_t s1) {
        bool omit = false;
        for (std::uint64_t s = s0; s < s1;) {
            if (snapshot_ && !omit) saved_ = a_;
            const std::uint64_t i = omit ? 0 : s;  // sequence i of *v_
            seq_t q(s, v_->sequence_begin(i), v_->sequence_end(i));
            q.omit = omit;
            if (run_sequence(q)) {
                if (omit) use_caller_view(s);
                omit = false;
                ++s;
                continue;
            }
            if (snapshot_) a_ = saved_;
            use_kept_view(q.b, q.e);
            omit = true;
        }
        reduce_lanes();
        return std::move(acc_);
    }

private:
    const paired_view<T, M>& view_;  ///< the caller's view (errors name its tokens)
    const paired_view<T, M>* v_;     ///< the view the steps read: view_, or kept_->view
    kept_sequence<T, M>* kept_;
    const correction_options& o_;
    correction_outputs<W> out_;      ///< (shifted to the sequence with kept_->view)
    correction_plan p_;
    bool short_cut_;
    bool omit_;      ///< nonfinite_policy::omit
    bool snapshot_;  ///< ... without phase 1: a_ is copied before each sequence
    correction_consts<V> k_;
    correction_accumulator acc_;
    chunk_buffers buf_;
    token_totals<V> a_;
    token_totals<V> saved_;  ///< a_ before the current sequence (snapshot_)

    /// omit: back to the caller's view after sequence s.
    LOGRATIO_ALWAYS_INLINE void use_caller_view(std::uint64_t s) {
        const std::uint64_t b = view_.sequence_begin(s);
        v_ = &view_;
        out_.weights = out_.weights ? out_.weights - b : nullptr;
        out_.mask = out_.mask ? out_.mask - b : nullptr;
    }

    /// omit: the steps read tokens [b, e) alone, their masked-in NaN/Inf
    /// masked out (counted), the outputs shifted to b.
    LOGRATIO_ALWAYS_INLINE void use_kept_view(std::uint64_t b, std::uint64_t e) {
        const std::uint64_t n = e - b;
        const T* tp = view_.train() + b;
        const T* rp = view_.rollout() + b;
        M* keep = kept_->mask.get();
        std::uint64_t dropped = 0;
        for (std::uint64_t k = 0; k < n; ++k) {
            const bool in = view_.counts(b + k);
            const bool finite = std::isfinite(to_double(tp[k])) && std::isfinite(to_double(rp[k]));
            dropped += in && !finite;
            keep[k] = static_cast<M>(in && finite ? 1 : 0);
        }
        acc_.nonfinite_tokens += dropped;
        kept_->view = paired_view<T, M>::padded(tp, rp, keep, 1, n);
        v_ = &kept_->view;
        out_.weights = out_.weights ? out_.weights + b : nullptr;
        out_.mask = out_.mask ? out_.mask + b : nullptr;
    }

    /// One run over sequence q (the two phases and the end of the
    /// sequence): false when it found a NaN/Inf to omit (then nothing but
    /// the totals, restored from saved_, and the sequence's outputs, written
    /// again, was touched).
    LOGRATIO_ALWAYS_INLINE bool run_sequence(seq_t& q) {
        if (p_.need_phase1) {
            phase1_sums(q);
            if (!valid(q)) return false;
            if (q.rs.n == 0) {  // not a sequence: outputs are 0
                if (out_.weights) std::fill(out_.weights + q.b, out_.weights + q.e, W(0));
                if (out_.mask) std::fill(out_.mask + q.b, out_.mask + q.e, std::uint8_t(0));
                return true;
            }
            decide_sequence_rejection(q);
            q.vetoed = o_.veto && ops::hmin(q.rs.dmin) < p_.log_veto;
            if (p_.has_is && !p_.tok_is) sequence_is_weight(q);
        }
        q.row_keep = ops::splat((q.rs_keep && !q.vetoed) ? 1.0 : 0.0) != k_.zero;
        q.row_rs = ops::splat(q.rs_keep ? 1.0 : 0.0) != k_.zero;
        phase2(q);
        if (short_cut_) merge_inside_rows(q);
        if (!p_.need_phase1) {
            if (!valid(q)) return false;
            if (q.rs.n == 0) return true;  // not a sequence (phase 2 wrote zeros, added nothing)
        }
        if (short_cut_) merge_inside(q);
        add_sequence_sums(q);
        finish_sequence_veto(q);
        finish_sequence_is(q);
        finish_sequence_token_rs(q);
        return true;
    }

    LOGRATIO_ALWAYS_INLINE void add_row(row_sums<V>& rs, const V& t, const V& r, const V& d, const V& dc, mask_t on,
                                        bool sum_d) {
        rs.top = ops::max(rs.top, ops::max(t, r));
        rs.n += ops::count(on);
        if (sum_d) rs.d = rs.d + d;
        rs.t = rs.t + t;
        rs.r = rs.r + r;
        rs.dc = rs.dc + dc;
    }

    /// The sequence's log-probs checked from its sums (guard_sequence): true
    /// when valid; false when a NaN/Inf is to be omitted (the first run with
    /// omit); otherwise value_error naming the first bad token (with omit: a
    /// positive log-prob, or a sum that overflows).
    LOGRATIO_ALWAYS_INLINE bool valid(const seq_t& q) const {
        const double st = ops::sum(q.rs.t), sr = ops::sum(q.rs.r);
        if (omit_ && !q.omit && !(std::isfinite(st) && std::isfinite(sr))) return false;
        guard_sequence(view_, q.s, st, sr, q.rs.top, o_.nonfinite, o_.positive_tolerance);
        return true;
    }

    // ---- phase 1: the sequence's sums and decisions (only when needed)
    LOGRATIO_ALWAYS_INLINE void phase1_sums(seq_t& q) {
        row_sums<V>& rs = q.rs;
        auto step = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            const V t = ops::select(on, t0, k_.zero);
            const V r = ops::select(on, r0, k_.zero);
            const V d = token_delta(t, r);
            const V dc = clamped_delta(d);
            add_row(rs, t, r, d, dc, on, true);
            rs.dmin = ops::min(rs.dmin, ops::select(on, d, k_.pinf));
            if (p_.need_k) sequence_stat_sums(rs, dc);
        };
        for_each_batch<V>(*v_, q.b, q.e, buf_, step);
    }

    /// Phase 1's sums and maxima of every statistic with lanes of its own
    /// (when a sequence option needs one; without a branch per statistic).
    LOGRATIO_ALWAYS_INLINE void sequence_stat_sums(row_sums<V>& rs, const V& dc) {
        const V em = ratio_minus_one(dc);  // dropped by the compiler when no statistic reads it
        for_each_rs_stat([&](auto j, auto s) LOGRATIO_ALWAYS_INLINE {
            using S = decltype(s);
            if constexpr (S::sums != rs_stats::lanes::minus_dc) {
                const V x = S::value(dc, em);
                rs.x[j] = rs.x[j] + x;
                rs.xmax[j] = ops::max(rs.xmax[j], x);
            }
        });
    }

    /// The sum over a sequence of statistic S: its own lanes, or -sum dc.
    template <class S>
    static double stat_sum(const V& dc, const V& own) noexcept {
        if constexpr (S::sums == rs_stats::lanes::minus_dc) return -ops::sum(dc);
        else return ops::sum(own);
    }

    /// The sequence rejection options: each one's statistic X of the
    /// sequence, its metrics, and whether it keeps the sequence.
    LOGRATIO_ALWAYS_INLINE void decide_sequence_rejection(seq_t& q) {
        const row_sums<V>& rs = q.rs;
        const double n = static_cast<double>(rs.n);
        double sum[rs_stat_count], max[rs_stat_count];  // per statistic (constant indices into the lanes)
        for_each_rs_stat([&](auto j, auto s) LOGRATIO_ALWAYS_INLINE {
            sum[j] = stat_sum<decltype(s)>(rs.dc, rs.x[j]);
            max[j] = ops::hmax(rs.xmax[j]);
        });
        for (std::size_t k = 0; k < o_.rejection.size(); ++k) {
            const rs_option& r = o_.rejection[k];
            if (r.is_token_level()) continue;
            const std::size_t j = static_cast<std::size_t>(r.stat);
            double X = r.aggregate == rs_aggregate::seq_max ? max[j] : sum[j];
            if (r.aggregate == rs_aggregate::seq_mean) X /= n;
            const double lo = r.stat_lower(), up = r.stat_upper();
            const bool keep = r.has_lower() ? (X >= lo && X <= up) : X <= up;
            rs_accumulator& a = acc_.rs[k];
            a.sum_x += n * X;
            a.xc.add(std::min(std::max(X, lo), up), n);
            a.seq.add(X);
            a.seq_hi += X > up;
            a.seq_lo += r.has_lower() && X < lo;
            a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
            if (!keep) {
                a.rejected_tokens += rs.n;
                a.rejected_seqs += 1;
                q.rs_keep = false;
            }
        }
    }

    /// The sequence-level IS weight (sequence or geometric) and its metrics.
    LOGRATIO_ALWAYS_INLINE void sequence_is_weight(seq_t& q) {
        const double n = static_cast<double>(q.rs.n);
        const double sd = ops::sum(q.rs.d);
        const double lr = o_.is->level == is_level::sequence ? sd : sd / n;
        const double w = std::exp(clamp_delta(lr));
        double t = std::min(w, p_.C);
        if (p_.clip_low) t = std::max(t, p_.clip);
        q.w_row = ops::splat(w);  // as lanes once: phase 2 reads them per batch
        q.t_row = ops::splat(t);
        is_accumulator& a = acc_.is;
        a.lr_min = std::min(a.lr_min, lr);
        a.lr_max = std::max(a.lr_max, lr);
        a.lr_hi += lr > p_.log_C;
        a.lr_lo += lr < p_.log_clo;
        a.sum_w += n * w;
        a.wc.add(std::min(std::max(w, p_.c_lo), p_.C), n);
        a.seq.add(w);
        a.seq_hi += w > p_.C;
        a.seq_lo += w < p_.c_lo;
        a.seq_max_dev = std::max(a.seq_max_dev, std::fabs(w - 1.0));
        a.sum_t += n * t;
        a.sum_seq_t += t;
    }

    // ---- phase 2: per token
    /// Runs of the short cut where it applies (whole batches read straight
    /// from memory), every other batch by the full step. One loop whether
    /// the short cut applies or not: the full step -- the largest code of
    /// the library -- is compiled twice per view type (one direct batch, the
    /// staged tail) instead of once per loop of for_each_batch and call site.
    LOGRATIO_ALWAYS_INLINE void phase2(seq_t& q) {
        auto step = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE { token_batch(q, t0, r0, on); };
#if LOGRATIO_X86
        if constexpr (is_simd_batch<V>::template direct<T, M>) {
            const std::uint64_t full_end = q.b + (q.e - q.b) / L * L;
            for (std::uint64_t i = q.b; i < full_end; i += L) {
                if (short_cut_) {
                    i = p_.inside.own ? inside_run<V, W, true>(*v_, i, full_end, out_.weights, out_.mask, p_.inside, q.f)
                                     : inside_run<V, W, false>(*v_, i, full_end, out_.weights, out_.mask, p_.inside, q.f);
                    if (i == full_end) break;
                } else {
                    prefetch_ahead(v_->train(), v_->rollout(), v_->mask(), i, q.b);
                }
                q.pos = i;
                direct_batch<V>(*v_, i, step);
            }
            q.pos = full_end;
            for_each_staged<V>(*v_, full_end, q.e, buf_, step);  // the tail (< L tokens)
        } else  // (not compiled where the loop above is)
#endif
        {
            for_each_batch<V>(*v_, q.b, q.e, buf_, step);
        }
    }

    /// One batch of phase 2: the short cut's step when its deltas all lie
    /// inside the interval, else the full step.
    LOGRATIO_ALWAYS_INLINE void token_batch(seq_t& q, const V& t0, const V& r0, mask_t on) {
        const V t = ops::select(on, t0, k_.zero);
        const V r = ops::select(on, r0, k_.zero);
        const V d = token_delta(t, r);
        const std::size_t lanes = static_cast<std::size_t>(std::min<std::uint64_t>(L, q.e - q.pos));
        if (short_cut_ && all_inside(d, k_.in_lo, k_.in_hi)) {
            inside_batch<V, W>(q.f, t, r, d, on, p_.inside, out_.weights ? out_.weights + q.pos : nullptr,
                               out_.mask ? out_.mask + q.pos : nullptr, lanes);
        } else {
            full_step(q, t, r, d, on, lanes);
        }
        q.pos += L;
    }

    /// The full step: dc, rho = 1 + expm1(dc), the divergence sums, the
    /// veto, every token rejection option, the IS weight, and the outputs.
    LOGRATIO_ALWAYS_INLINE void full_step(seq_t& q, const V& t, const V& r, const V& d, mask_t on,
                                          std::size_t lanes) {
        const V dc = clamped_delta(d);
        if (!p_.need_phase1) add_row(q.rs, t, r, d, dc, on, false);  // sum delta = sum dc + row_fix
        const V em = ratio_minus_one(dc);
        const V k3 = k3_term(em, dc);
        a_.k3 = a_.k3 + k3;
        a_.chi2 = ops::mul_add(em, em + V(2.0), a_.chi2);
        a_.dcmin = ops::min(a_.dcmin, ops::select(on, dc, k_.pinf));
        a_.dcmax = ops::max(a_.dcmax, ops::select(on, dc, k_.ninf));
        if (!ops::none(ops::abs(d) > k_.hi20)) beyond_clamp(q, d, on);
        if (o_.veto) tally(q.q_veto, p_.veto_on_zero ? mask_t(on & (d < k_.log_veto)) : mask_t(d < k_.log_veto));
        mask_t keep_rs = on;
        if (p_.any_tok_rs)
            for_each_rs_stat([&](auto j, auto s) LOGRATIO_ALWAYS_INLINE { token_option(j, s, q, dc, em, on, keep_rs); });
        const mask_t keep_all_rs = keep_rs & q.row_rs;
        tally(a_.n_rs_rej, on & !keep_all_rs);
        const mask_t keep = keep_all_rs & q.row_keep;
        if (p_.has_is) is_weight_step(q, em, on, keep, lanes);
        if (out_.mask) store_mask_lanes<V>(keep, out_.mask + q.pos, lanes);
    }

    /// Rare lanes with |delta| > 20: k3_kl and the sequence's sum of delta
    /// use the unclamped delta.
    LOGRATIO_ALWAYS_INLINE void beyond_clamp(seq_t& q, const V& d, mask_t on) {
        alignas(64) double dd[L];
        alignas(64) double mm[L];
        store_lanes<V, double>(d, dd, L);
        store_lanes<V, double>(ops::select(on, k_.one, k_.zero), mm, L);
        for (std::size_t k = 0; k < L; ++k)
            if (mm[k] != 0.0 && std::fabs(dd[k]) > clamp_log_ratio) {
                const double dck = clamp_delta(dd[k]);
                a_.k3_fix += k3_term(std::expm1(dd[k]), dd[k]) - k3_term(std::expm1(dck), dck);
                q.row_fix += dd[k] - dck;
            }
    }

    /// The token rejection option of statistic S (id J), unrolled at compile
    /// time: its sums and counts, and the tokens it rejects. x is tested
    /// against [lo, up] in its own space (against up only without a lower
    /// bound: then x >= 0, 0 on masked-out lanes); a masked-out lane's x = 0
    /// that fails a bound is masked.
    template <std::size_t J, class S>
    LOGRATIO_ALWAYS_INLINE void token_option(rs_index<J>, S, seq_t& q, const V& dc, const V& em, mask_t on,
                                             mask_t& keep_rs) {
        if (p_.tok_opt[J] < 0) return;
        const V x = S::value(dc, em);
        mask_t hi = x > k_.tup[J];
        V xc = ops::min(ops::max(x, k_.tlo[J]), k_.tup[J]);
        if constexpr (S::has_lower) {
            mask_t lo = x < k_.tlo[J];
            if (!p_.zero_inside[J]) {
                hi = hi & on;
                lo = lo & on;
                xc = ops::select(on, xc, k_.zero);
            }
            tally(q.q_lo[J], lo);
            keep_rs = keep_rs & !(hi | lo);
        } else {
            keep_rs = keep_rs & !hi;
        }
        tally(q.q_hi[J], hi);
        if constexpr (S::sums != rs_stats::lanes::minus_dc) {  // -dc: the sums and extremes of dc
            q.q_x[J] = q.q_x[J] + x;
            a_.min[J] = ops::min(a_.min[J], ops::select(on, x, k_.pinf));
        }
        a_.xc[J] = a_.xc[J] + xc;
        a_.xc2[J] = ops::mul_add(xc, xc, a_.xc2[J]);
    }

    /// The IS weight of a batch (token level: w = rho; sequence levels: the
    /// sequence's), its truncation, its metrics, and the weights' output.
    LOGRATIO_ALWAYS_INLINE void is_weight_step(seq_t& q, const V& em, mask_t on, mask_t keep, std::size_t lanes) {
        V w, tw;
        if (p_.tok_is) {
            w = em + k_.one;
            tw = ops::min(w, k_.C);
            if (p_.clip_low) tw = ops::max(tw, k_.clip);
            mask_t hi = w > k_.C, lo = w < k_.clo;
            V wc = ops::min(ops::max(w, k_.clo), k_.C) - k_.one;
            if (!p_.w_one_inside) {
                hi = hi & on;
                lo = lo & on;
                wc = ops::select(on, wc, k_.zero);
            }
            tally(a_.n_hi, hi);
            tally(a_.n_lo, lo);
            a_.c = a_.c + wc;
            a_.c2 = ops::mul_add(wc, wc, a_.c2);
            q.q_e = q.q_e + em;
        } else {
            w = q.w_row;
            tw = q.t_row;
        }
        tw = ops::select(on, tw, k_.zero);
        q.q_t = q.q_t + tw;
        tally(q.q_kept, keep);
        tally(q.q_changed, on & ((tw != w) | !keep));
        q.q_post = q.q_post + ops::select(keep, tw, k_.zero);
        q.q_pmin = ops::min(q.q_pmin, ops::select(keep, tw, k_.pinf));
        q.q_pmax = ops::max(q.q_pmax, ops::select(keep, tw, k_.ninf));
        if (out_.weights) store_lanes<V, W>(tw, out_.weights + q.pos, lanes);
    }

    /// Adds the short cut's sums over the sequence to the sequence's own
    /// (count, l_T, l_E, dc: validation reads them) ...
    LOGRATIO_ALWAYS_INLINE void merge_inside_rows(seq_t& q) {
        const inside_sums<V>& f = q.f;
        q.rs.top = ops::max(q.rs.top, f.top);
        q.rs.n += f.n;
        q.rs.t = q.rs.t + f.t;
        q.rs.r = q.rs.r + f.r;
        q.rs.dc = q.rs.dc + f.d;
    }

    /// ... and, once the sequence is valid, to the full step's; the sums it
    /// leaves out are derived (inside_sums).
    LOGRATIO_ALWAYS_INLINE void merge_inside(seq_t& q) {
        const inside_sums<V>& f = q.f;
        a_.k3 = a_.k3 + f.k3;
        a_.chi2 = a_.chi2 + (p_.has_is ? V(ops::mul_add(f.c, V(2.0), f.c2)) : f.chi2);
        a_.dcmin = ops::min(a_.dcmin, f.dmin);
        a_.dcmax = ops::max(a_.dcmax, f.dmax);
        for_each_rs_stat([&](auto j, auto s) LOGRATIO_ALWAYS_INLINE {
            using S = decltype(s);
            if (!p_.inside.stat[j]) return;
            if constexpr (S::sums == rs_stats::lanes::minus_dc) {
                a_.xc[j] = a_.xc[j] - f.d;
            } else {
                const V& sum = S::sums == rs_stats::lanes::kl_k3 ? f.k3 : f.x[j];
                q.q_x[j] = q.q_x[j] + sum;
                a_.xc[j] = a_.xc[j] + sum;
                a_.min[j] = ops::min(a_.min[j], f.min[j]);
            }
            a_.xc2[j] = a_.xc2[j] + f.sq[j];
        });
        if (!p_.has_is) return;
        const V n_lane = ops::splat(static_cast<double>(f.n) / static_cast<double>(L));  // exact: L = 2^j
        const V tw = f.c + n_lane;  // sum of t = w over the masked-in lanes
        q.q_kept = q.q_kept + n_lane;
        a_.c = a_.c + f.c;
        a_.c2 = a_.c2 + f.c2;
        q.q_e = q.q_e + f.c;
        q.q_t = q.q_t + tw;
        q.q_post = q.q_post + tw;
        // lanes that saw a token: extremes of w from those of delta
        const mask_t seen = f.dmin <= f.dmax;
        q.q_pmin = ops::min(q.q_pmin, ops::select(seen, V(ops::expm1(ops::min(f.dmin, k_.hi20)) + k_.one), k_.pinf));
        q.q_pmax = ops::max(q.q_pmax, ops::select(seen, V(ops::expm1(ops::max(f.dmax, k_.lo20)) + k_.one), k_.ninf));
    }

    // ---- the end of a sequence
    /// The off-policy sums of the sequence (perplexities, chi2 of the
    /// sequence ratio).
    LOGRATIO_ALWAYS_INLINE void add_sequence_sums(const seq_t& q) {
        const row_sums<V>& rs = q.rs;
        const double n = static_cast<double>(rs.n);
        const double sd = p_.need_phase1 ? ops::sum(rs.d) : ops::sum(rs.dc) + q.row_fix;
        const double mean_t = ops::sum(rs.t) / n, mean_r = ops::sum(rs.r) / n;
        acc_.tokens += rs.n;
        acc_.sequences += 1;
        acc_.sum_delta += sd;
        acc_.sum_train_ppl += std::exp(-mean_t);
        acc_.sum_train_log_ppl += -mean_t;
        acc_.sum_rollout_ppl += std::exp(-mean_r);
        acc_.sum_rollout_log_ppl += -mean_r;
        const double lpd = mean_r - mean_t;
        acc_.log_ppl_diff.add(lpd);
        acc_.sum_abs_log_ppl_diff += std::fabs(lpd);
        acc_.sum_ppl_ratio += std::exp(lpd);
        acc_.sum_chi2_seq += std::expm1(2.0 * clamp_delta(sd));
    }

    /// The veto's counts; without phase 1 a veto is found at the end of the
    /// sequence, and its mask is rewritten.
    LOGRATIO_ALWAYS_INLINE void finish_sequence_veto(seq_t& q) {
        const std::uint64_t row_veto = tally_total(q.q_veto);
        a_.n_veto = a_.n_veto + q.q_veto;
        if (p_.need_phase1 || row_veto == 0) return;
        q.vetoed = true;
        if (out_.mask) std::fill(out_.mask + q.b, out_.mask + q.e, std::uint8_t(0));
        q.q_kept = k_.zero;
        q.q_post = k_.zero;
        q.q_pmin = k_.pinf;
        q.q_pmax = k_.ninf;
        q.q_changed = k_.zero;
        if (p_.has_is) acc_.is.changed += q.rs.n;  // every token rejected
    }

    /// The IS sums of the sequence (token level: the mean weight).
    LOGRATIO_ALWAYS_INLINE void finish_sequence_is(const seq_t& q) {
        if (!p_.has_is) return;
        a_.n_kept = a_.n_kept + q.q_kept;
        a_.n_changed = a_.n_changed + q.q_changed;
        a_.post = a_.post + q.q_post;
        a_.pmin = ops::min(a_.pmin, q.q_pmin);
        a_.pmax = ops::max(a_.pmax, q.q_pmax);
        if (!p_.tok_is) return;
        const double n = static_cast<double>(q.rs.n);
        is_accumulator& a = acc_.is;
        const double m = (ops::sum(q.q_e) + n) / n;  // mean of w = 1 + em over the sequence
        a.seq.add(m);
        a.seq_hi += m > p_.C;
        a.seq_lo += m < p_.c_lo;
        a.seq_max_dev = std::max(a.seq_max_dev, std::fabs(m - 1.0));
        a.sum_seq_t += ops::sum(q.q_t) / n;
        a_.e = a_.e + q.q_e;
        a_.t = a_.t + q.q_t;
    }

    /// The token rejection options' per-sequence statistics, and the
    /// sequence counts of rejection and veto.
    LOGRATIO_ALWAYS_INLINE void finish_sequence_token_rs(const seq_t& q) {
        const double n = static_cast<double>(q.rs.n);
        bool rejected = !q.rs_keep;
        for_each_rs_stat([&](auto j, auto s) LOGRATIO_ALWAYS_INLINE {
            using S = decltype(s);
            if (p_.tok_opt[j] < 0) return;
            rs_accumulator& a = acc_.rs[static_cast<std::size_t>(p_.tok_opt[j])];
            const double X = stat_sum<S>(q.rs.dc, q.q_x[j]) / n;
            a.sum_x += X * n;
            a.seq.add(X);
            a.seq_hi += X > p_.tup[j];
            a.seq_lo += S::has_lower && X < p_.tlo[j];
            a.seq_abs_max = std::max(a.seq_abs_max, std::fabs(X));
            if (tally_total(q.q_hi[j]) + tally_total(q.q_lo[j]) > 0) {
                a.rejected_seqs += 1;
                rejected = true;
            }
            a_.hi[j] = a_.hi[j] + q.q_hi[j];
            a_.lo[j] = a_.lo[j] + q.q_lo[j];
        });
        acc_.rs_rejected_seqs += rejected;
        acc_.veto_seqs += q.vetoed;
    }

    // ---- the end of the range: reduce the lanes
    LOGRATIO_ALWAYS_INLINE void reduce_lanes() {
        acc_.sum_k3 = ops::sum(a_.k3) + a_.k3_fix;
        acc_.sum_chi2 = ops::sum(a_.chi2);
        acc_.rs_rejected_tokens = tally_total(a_.n_rs_rej);
        acc_.veto_tokens = tally_total(a_.n_veto);
        const double dcmin = ops::hmin(a_.dcmin), dcmax = ops::hmax(a_.dcmax);
        if (p_.has_is) reduce_is(dcmin, dcmax);
        for_each_rs_stat([&](auto j, auto s) {
            if (p_.tok_opt[j] >= 0) reduce_token_rs(j, s, dcmin, dcmax);
        });
    }

    LOGRATIO_ALWAYS_INLINE void reduce_is(double dcmin, double dcmax) {
        is_accumulator& a = acc_.is;
        if (p_.tok_is && acc_.tokens) {
            // w = 1 + expm1(dc) is monotone in dc: its extremes are those of dc
            // (the same lane arithmetic as the tokens')
            a.sum_w = ops::sum(a_.e) + static_cast<double>(acc_.tokens);
            a.sum_c = ops::sum(a_.c);
            a.sum_c2 = ops::sum(a_.c2);
            a.w_min = ops::sum(ops::expm1(ops::splat(dcmin))) / static_cast<double>(L) + 1.0;
            a.w_max = ops::sum(ops::expm1(ops::splat(dcmax))) / static_cast<double>(L) + 1.0;
            a.tok_hi = tally_total(a_.n_hi);
            a.tok_lo = tally_total(a_.n_lo);
            a.sum_t = ops::sum(a_.t);
        }
        a.kept = tally_total(a_.n_kept);
        a.changed += tally_total(a_.n_changed);
        a.post_sum = ops::sum(a_.post);
        a.post_min = ops::hmin(a_.pmin);
        a.post_max = ops::hmax(a_.pmax);
    }

    /// The token option of statistic S (id J): its extremes come from those
    /// of dc (S::extremes; x at one dc in the same lane arithmetic as the
    /// tokens').
    template <std::size_t J, class S>
    LOGRATIO_ALWAYS_INLINE void reduce_token_rs(rs_index<J>, S, double dcmin, double dcmax) {
        rs_accumulator& a = acc_.rs[static_cast<std::size_t>(p_.tok_opt[J])];
        a.sum_xc = ops::sum(a_.xc[J]);
        a.sum_xc2 = ops::sum(a_.xc2[J]);
        a.tok_min = detail::inf64;
        a.tok_max = -detail::inf64;
        if (acc_.tokens) {
            auto at = [&](double x) {
                const V dc = ops::splat(x);
                return ops::hmax(S::value(dc, V(ops::expm1(dc))));
            };
            const std::pair<double, double> m = S::extremes(dcmin, dcmax, ops::hmin(a_.min[J]), at);
            a.tok_min = m.first;
            a.tok_max = m.second;
        }
        a.tok_hi = tally_total(a_.hi[J]);
        a.tok_lo = tally_total(a_.lo[J]);
        a.rejected_tokens = a.tok_hi + a.tok_lo;
    }
};

template <class V, class W, class T, class M>
correction_accumulator correct_range_impl(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1,
                                          const correction_options& o, const correction_outputs<W>& out) {
    kept_sequence<T, M> kept(v, s0, s1, o.nonfinite == nonfinite_policy::omit);
    return correction_kernel<V, W, T, M>(v, o, out, kept).run(s0, s1);
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
