#pragma once
// The doctor's one pass over memory: every sum the checks need, per token,
// with each sequence read once (its tokens stay in cache for the neighbour
// reads of the alignment sums and the desync change-point scan).
//
// Filled values are recognised per token and kept OUT of every other sum:
//   a log-prob that is exactly 0.0 while the other side's is below log(1/2)
//     (a probability-1 token the other side finds unlikely: measured, never
//     seen in clean bf16-vs-f32 data, see checks/filled_values.hpp), or
//   a log-prob <= -50 or -inf (p < 2e-22: a sampled token never has it).
// So a 3% fill cannot move the temperature slope, the position buckets or
// the numeric levels; NaN and positive log-probs are counted and skipped
// (the doctor reports, it does not throw on values).
//
// Per token the pass does no log/exp: probability bins come from tables
// or, on AVX-512, from an approximate logit and one edge comparison
// (prob_cells.hpp), kl_k3's term e^δ − 1 − δ from a degree-7 polynomial for
// |δ| <= 1/16 (error < 3e-12 relative) and the vector expm1 beyond.
//
// Per sequence (each stage in xsimd batches, each tested against its
// scalar reference): load_sequence (memory → double slots, the usable
// bits, the rare tokens; on AVX-512 for float/bf16/f16 inputs
// load_sequence_x16: 16 float lanes, the joint cells from the same
// registers), store_sequence_cells (the joint cells, other levels),
// scan_pairs (alignment sums), desync_cut (only where some |δ| > 0.5),
// then per position bucket scan_bucket (its sums, the tokens queued for
// the probability scatter) and scatter_probability (scalar: histogram
// increments, four tokens per step into four copies of the sums).
//
// What the speed rests on (measured, bench/bench_doctor.cpp): no function
// call inside a vector loop (zmm/ymm registers are caller-saved, so one
// std::expm1 or push_back call on a rare path kept every accumulator of
// the loop in memory: 25% of the whole pass), counts by popcount of lane
// bits rather than vector adds of 0/1 (the vector ports are the limit),
// and the AVX-512 alignment sums as masked adds under the usable bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "../detail/batches.hpp"
#include "../detail/token_terms.hpp"
#include "../detail/parallel.hpp"
#include "../detail/simd.hpp"
#include "../core/dtype.hpp"
#include "../core/limits.hpp"
#include "../core/view.hpp"
#include "breakdowns.hpp"
#include "prob_cells.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

/// A tensor's filled values: exact zeros the other side finds unlikely, and
/// the most frequent values <= -50 (sentinels), with where they sit.
struct fill_stats {
    static constexpr int slots = 4;
    std::uint64_t zeros = 0;           ///< masked-in exact 0.0 (any)
    std::uint64_t unlikely_zeros = 0;  ///< 0.0 where the other side's l < log(1/2)
    std::array<double, slots> sentinel{};
    std::array<std::uint64_t, slots> sentinel_count{};
    std::uint64_t other_low = 0;  ///< values <= -50 beyond the 4 tracked ones
    std::uint64_t flagged = 0;    ///< unlikely zeros + values <= -50
    std::uint64_t at_last = 0;    ///< flagged tokens that are their sequence's last masked-in token
    std::uint64_t in_last4 = 0;   ///< ... within its last 4
    std::uint64_t at_first = 0;   ///< ... at response position 0
    std::uint64_t sequences = 0;  ///< sequences with at least one flagged token

    void add_low(double x) { add_low_n(x, 1); }
    void merge(const fill_stats& o) {
        zeros += o.zeros;
        unlikely_zeros += o.unlikely_zeros;
        for (int k = 0; k < slots; ++k)
            if (o.sentinel_count[k]) add_low_n(o.sentinel[k], o.sentinel_count[k]);
        other_low += o.other_low;
        flagged += o.flagged;
        at_last += o.at_last;
        in_last4 += o.in_last4;
        at_first += o.at_first;
        sequences += o.sequences;
    }
    void add_low_n(double x, std::uint64_t n) {
        for (int k = 0; k < slots; ++k) {
            if (sentinel_count[k] && sentinel[k] == x) {
                sentinel_count[k] += n;
                return;
            }
            if (!sentinel_count[k]) {
                sentinel[k] = x;
                sentinel_count[k] = n;
                return;
            }
        }
        other_low += n;
    }
    /// The most frequent tracked sentinel (count 0 when none).
    std::pair<double, std::uint64_t> top_sentinel() const {
        int best = 0;
        for (int k = 1; k < slots; ++k)
            if (sentinel_count[k] > sentinel_count[best]) best = k;
        return {sentinel[best], sentinel_count[best]};
    }
};

/// Within-position-bucket regression sums of y = l_E on x = l_T.
struct slope_sums {
    std::uint64_t n = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    void merge(const slope_sums& o) {
        n += o.n;
        sx += o.sx;
        sy += o.sy;
        sxx += o.sxx;
        sxy += o.sxy;
    }
};

struct scan_state {
    static constexpr int max_shift = 2;
    static constexpr double big_delta = 0.5;  ///< "large" |δ| of the desync scan (see checks/desync.hpp)
    breakdowns bd;
    std::uint64_t sequences = 0, nan_or_positive = 0;
    fill_stats fill[2];  ///< [0] train_logprobs, [1] rollout_logprobs
    std::array<double, 2 * max_shift + 1> shift_abs{};
    std::array<std::uint64_t, 2 * max_shift + 1> shift_n{};
    std::uint64_t negative = 0, positive = 0;  ///< tokens with δ < 0, δ > 0
    static constexpr double tail_delta = 0.05;  ///< the numeric check's tail (checks/numeric.hpp)
    std::uint64_t above_tail = 0;              ///< breakdown tokens with |δ| > tail_delta
    std::uint64_t usable = 0, above_big = 0;   ///< usable tokens, and those with |δ| > big_delta
    std::array<slope_sums, breakdowns::position_buckets> slope{};
    // desync: sequences with a change point, and where it sits
    std::uint64_t desync_scanned = 0, desync_sequences = 0, desync_tokens_after = 0;
    std::array<std::uint64_t, 10> desync_at{};  ///< change point / length, in tenths

    void merge(const scan_state& o) {
        bd.merge(o.bd);
        sequences += o.sequences;
        nan_or_positive += o.nan_or_positive;
        fill[0].merge(o.fill[0]);
        fill[1].merge(o.fill[1]);
        for (std::size_t k = 0; k < shift_abs.size(); ++k) {
            shift_abs[k] += o.shift_abs[k];
            shift_n[k] += o.shift_n[k];
        }
        negative += o.negative;
        positive += o.positive;
        above_tail += o.above_tail;
        usable += o.usable;
        above_big += o.above_big;
        for (std::size_t k = 0; k < slope.size(); ++k) slope[k].merge(o.slope[k]);
        desync_scanned += o.desync_scanned;
        desync_sequences += o.desync_sequences;
        desync_tokens_after += o.desync_tokens_after;
        for (std::size_t k = 0; k < desync_at.size(); ++k) desync_at[k] += o.desync_at[k];
    }
};

namespace detail {

/// e^d − 1 − d (d clamped to ±20 as the panel does): the series below
/// |d| = 1/16, expm1 beyond (detail/token_terms.hpp, with its error bound).
inline double k3_term(double d) noexcept { return logratio::detail::k3_term_of(d); }

/// Minimum counts of the desync change point (see checks/desync.hpp).
constexpr std::size_t desync_min_side = 4;

/// The change point of one sequence's |δ| series: the split c maximising
/// (fraction of |δ| > big after c) − (fraction before), with at least 4
/// tokens on each side. Returns true and c when the after side is mostly
/// large and the before side mostly small.
inline bool change_point(const std::vector<float>& a, std::size_t& at) {
    const std::size_t n = a.size();
    if (n < 2 * desync_min_side) return false;
    std::size_t total = 0;
    for (float x : a) total += x > scan_state::big_delta;
    std::size_t before = 0, best_c = 0;
    double best = -1;
    for (std::size_t c = 1; c < n; ++c) {
        before += a[c - 1] > scan_state::big_delta;
        if (c < desync_min_side || n - c < desync_min_side) continue;
        const double fb = static_cast<double>(before) / static_cast<double>(c);
        const double fa = static_cast<double>(total - before) / static_cast<double>(n - c);
        if (fa - fb > best) {
            best = fa - fb;
            best_c = c;
        }
    }
    const std::size_t after_big = total - [&] {
        std::size_t b = 0;
        for (std::size_t i = 0; i < best_c; ++i) b += a[i] > scan_state::big_delta;
        return b;
    }();
    const double fa = static_cast<double>(after_big) / static_cast<double>(n - best_c);
    const double fb = static_cast<double>(total - after_big) / static_cast<double>(best_c);
    // Thresholds measured (checks/desync.hpp): after >= 30% large, before <= 10%.
    if (fa >= 0.3 && fb <= 0.1 && after_big >= 3) {
        at = best_c;
        return true;
    }
    return false;
}

/// Per-range scratch: one sequence converted to double (0.0 where a token is
/// not usable, so that loops can multiply by the 0/1 `ok` instead of
/// branching), its |δ| series, its tokens' joint-histogram cells
/// (prob_cells.hpp) and the probability accumulators of the range.
struct scan_scratch {
    /// copies of the probability sums, by slot & 3: consecutive tokens in
    /// the same bucket do not wait on each other's read-modify-writes
    static constexpr std::size_t prob_copies = 4;
    std::vector<double> t, r, ok;  ///< ok: 1.0 masked-in, finite, not filled; else 0.0
    /// ok as bits (slot k: bit k & 63 of word k >> 6; zero past the
    /// sequence, with a word of padding): counts by popcount, AVX-512 masks
    std::vector<std::uint64_t> okbits;
    std::vector<float> a;
    std::vector<std::uint32_t> cell;  ///< joint cell per slot (unusable_cell when not usable)
    std::vector<std::uint64_t> rare;  ///< slots of masked-in tokens that are filled or invalid
    /// the SIMD loads' rare slots as found (grown, never shrunk): plain
    /// stores in the loop, no push_back call (a call there would keep the
    /// loop's vector constants in memory: zmm registers are caller-saved)
    std::vector<std::uint64_t> rare_buf;
    /// Σδ, Σ|δ|, max|δ|, Σk3 by rollout-probability bucket (one extra slot
    /// takes the unusable tokens, branch-free); counts come from `joint`
    std::array<std::array<delta_stats, breakdowns::prob_buckets + 1>, prob_copies> prob{};
    std::vector<std::uint32_t> joint = std::vector<std::uint32_t>(unusable_cell + 1, 0);  ///< by cell
    std::uint64_t joint_tokens = 0;  ///< tokens in `joint` since the last flush (32-bit cells)
    /// the tokens of one breakdown range waiting for scatter_probability
    struct queue {
        std::vector<std::uint32_t> cell;
        std::vector<double> d, k3;
    } q;
    logratio::detail::chunk_buffers staging;  ///< load_sequence's staged batches (tails, SSE2)
};

/// Moves the range's probability sums and joint counts into st (the joint
/// transposed to st's p_T-major layout; bucket counts from the joint).
inline void flush_probability(scan_scratch& w, scan_state& st) {
    constexpr int B = prob_axis::bins;
    for (int je = 0; je < B; ++je)
        for (int jt = 0; jt < B; ++jt) {
            const std::uint32_t c = w.joint[static_cast<std::size_t>(je * B + jt)];
            st.bd.joint[static_cast<std::size_t>(jt * B + je)] += c;
            st.bd.by_rollout_prob[static_cast<std::size_t>(je >> 2)].count += c;
        }
    for (auto& copy : w.prob)
        for (int b = 0; b < breakdowns::prob_buckets; ++b) st.bd.by_rollout_prob[b].merge(copy[static_cast<std::size_t>(b)]);
    w.prob = {};
    std::fill(w.joint.begin(), w.joint.end(), 0u);
    w.joint_tokens = 0;
}

/// One token's share of the probability sums (copy: one of the copies).
LOGRATIO_ALWAYS_INLINE inline void scatter_one(delta_stats* copy, std::uint32_t* joint, std::uint32_t c, double d,
                                               double k3) noexcept {
    ++joint[c];
    delta_stats& p = copy[c >> 8];  // je >> 2: the rollout-probability bucket; 16 when unusable
    const double ad = std::fabs(d);
#if LOGRATIO_X86
    // two 16-byte updates: {Σδ, Σ|δ|} += {δ, |δ|}; {max|δ|, Σk3} = {max(., |δ|), . + k3}
    static_assert(offsetof(delta_stats, sum_abs) == offsetof(delta_stats, sum_delta) + 8 &&
                      offsetof(delta_stats, sum_k3) == offsetof(delta_stats, max_abs) + 8,
                  "delta_stats: the pairs updated together are adjacent");
    const __m128d a = _mm_set_pd(ad, d), b = _mm_set_pd(k3, ad);
    _mm_storeu_pd(&p.sum_delta, _mm_add_pd(_mm_loadu_pd(&p.sum_delta), a));
    const __m128d m = _mm_loadu_pd(&p.max_abs);
    _mm_storeu_pd(&p.max_abs, _mm_move_sd(_mm_add_pd(m, b), _mm_max_sd(m, b)));
#else
    p.sum_delta += d;
    p.sum_abs += ad;
    p.sum_k3 += k3;
    if (ad > p.max_abs) p.max_abs = ad;
#endif
}

/// Adds the n tokens queued in w.q (cell, δ, kl_k3's term) to the
/// probability sums and the joint counts: four tokens per step, each into
/// its own copy of the sums.
inline void scatter_probability(scan_scratch& w, scan_state& st, std::size_t n) {
    constexpr std::uint64_t chunk = std::uint64_t(1) << 31;  // 32-bit cells never overflow
    for (std::size_t i0 = 0; i0 < n;) {
        const std::size_t i1 = i0 + static_cast<std::size_t>(std::min<std::uint64_t>(n - i0, chunk));
        if (w.joint_tokens + (i1 - i0) >= 2 * chunk) flush_probability(w, st);
        const std::uint32_t* c = w.q.cell.data();
        const double* d = w.q.d.data();
        const double* k3 = w.q.k3.data();
        std::uint32_t* jp = w.joint.data();
        delta_stats* c0 = w.prob[0].data();
        delta_stats* c1 = w.prob[1].data();
        delta_stats* c2 = w.prob[2].data();
        delta_stats* c3 = w.prob[3].data();
        std::size_t i = i0;
        for (; i + 4 <= i1; i += 4) {
            scatter_one(c0, jp, c[i], d[i], k3[i]);
            scatter_one(c1, jp, c[i + 1], d[i + 1], k3[i + 1]);
            scatter_one(c2, jp, c[i + 2], d[i + 2], k3[i + 2]);
            scatter_one(c3, jp, c[i + 3], d[i + 3], k3[i + 3]);
        }
        for (; i < i1; ++i) scatter_one(c0, jp, c[i], d[i], k3[i]);
        w.joint_tokens += i1 - i0;
        i0 = i1;
    }
}

/// The queue's arrays, read once before a loop (the intrinsic stores may
/// alias anything, so the vectors' data pointers would be reloaded per batch).
struct queue_ptrs {
    double* d;
    double* k3;
    std::uint32_t* cell;
    explicit queue_ptrs(scan_scratch::queue& q) noexcept : d(q.d.data()), k3(q.k3.data()), cell(q.cell.data()) {}
};

/// Queues a batch of slots for scatter_probability: on AVX-512 only the
/// usable lanes (compressed; the rest would go to the dummy slot), else all.
template <class A>
LOGRATIO_ALWAYS_INLINE inline void queue_batch(const queue_ptrs& q, std::size_t& n,
                                               const xsimd::batch<double, A>& ok, const xsimd::batch<double, A>& d,
                                               const xsimd::batch<double, A>& k3, const std::uint32_t* cells) noexcept {
#if LOGRATIO_X86 && defined(__AVX512F__)
    if constexpr (logratio::detail::is_avx512<A>) {
        const __mmask8 u = _mm512_cmp_pd_mask(ok, _mm512_setzero_pd(), _CMP_NEQ_UQ);
        _mm512_storeu_pd(q.d + n, _mm512_maskz_compress_pd(u, d));
        _mm512_storeu_pd(q.k3 + n, _mm512_maskz_compress_pd(u, k3));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q.cell + n),
                            _mm256_maskz_compress_epi32(u, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cells))));
        n += static_cast<std::size_t>(__builtin_popcount(u));
        return;
    }
#endif
    (void)ok;
    d.store_unaligned(q.d + n);
    k3.store_unaligned(q.k3 + n);
    std::memcpy(q.cell + n, cells, sizeof(std::uint32_t) * xsimd::batch<double, A>::size);
    n += xsimd::batch<double, A>::size;
}

/// Marks a filled value x of `side` (other = the other side's log-prob);
/// true when x is one (exact 0.0 the other side finds unlikely, or <= -50).
inline bool note_fill(fill_stats& f, double x, double other, std::uint64_t k, std::uint64_t first,
                      std::uint64_t last) {
    constexpr double log_half = -0.69314718055994531;
    if (x == 0.0) ++f.zeros;
    const bool zero = x == 0.0 && other < log_half;
    const bool low = x <= -50.0;
    if (!zero && !low) return false;
    if (zero) ++f.unlikely_zeros;
    else f.add_low(x);
    ++f.flagged;
    f.at_last += k == last;
    f.in_last4 += last - k < 4;
    f.at_first += k == first;
    return true;
}

/// A token that is not plainly usable: NaN, positive, an exact 0.0, or <= -50.
/// Non-short-circuit (&): no branch per token (the mask and these tests
/// are data-dependent; branches on them mispredict).
inline bool unusual(double t, double r) noexcept {
    return !((t < 0.0) & (r < 0.0) & (t > -50.0) & (r > -50.0));
}

/// x where keep, else +0.0 (NaN included), without a branch.
inline double kept_or_zero(double x, bool keep) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &x, 8);
    bits &= std::uint64_t(0) - static_cast<std::uint64_t>(keep);
    std::memcpy(&x, &bits, 8);
    return x;
}

/// Clears w.okbits for a sequence of n slots.
inline void clear_okbits(scan_scratch& w, std::size_t n) { w.okbits.assign(n / 64 + 2, 0); }

/// Marks slot k usable in w.okbits.
inline void set_okbit(scan_scratch& w, std::size_t k) noexcept { w.okbits[k >> 6] |= std::uint64_t(1) << (k & 63); }

/// The set bits of x: the instruction where the build level has it, else
/// the SWAR sum inline (the SSE2 baseline's __builtin_popcountll is a call).
inline std::uint64_t ones(std::uint64_t x) noexcept {
#if defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
    return static_cast<std::uint64_t>(__builtin_popcountll(x));
#else
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return (x * 0x0101010101010101u) >> 56;
#endif
}

/// The number of set bits of w.okbits in slots [k0, k1).
inline std::uint64_t count_okbits(const scan_scratch& w, std::size_t k0, std::size_t k1) noexcept {
    if (k0 >= k1) return 0;
    const std::size_t w0 = k0 >> 6, w1 = (k1 - 1) >> 6;
    const std::uint64_t lo = ~std::uint64_t(0) << (k0 & 63);
    const std::uint64_t hi = ~std::uint64_t(0) >> (63 - ((k1 - 1) & 63));
    if (w0 == w1) return ones(w.okbits[w0] & lo & hi);
    std::uint64_t c = ones(w.okbits[w0] & lo) + ones(w.okbits[w1] & hi);
    for (std::size_t i = w0 + 1; i < w1; ++i) c += ones(w.okbits[i]);
    return c;
}

/// Σ_k ok_k ok_{k+s} over a sequence (s >= 0; the count of shift −s too):
/// the popcount of the bits AND the bits moved down by s.
inline std::uint64_t pair_count(const scan_scratch& w, unsigned s) noexcept {
    const std::vector<std::uint64_t>& b = w.okbits;
    std::uint64_t c = 0;
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
        const std::uint64_t up = s ? (b[i] >> s) | (b[i + 1] << (64 - s)) : b[i];
        c += ones(b[i] & up);
    }
    return c;
}

/// Classifies the rare tokens of a sequence (filled values, NaN, positive
/// log-probs) once its masked-in bounds are known.
template <class T, class M>
void note_rare(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t first, std::uint64_t last,
               scan_state& st, scan_scratch& w) {
    bool touched[2] = {false, false};
    for (std::uint64_t k : w.rare) {
        const double t = logratio::to_double(v.train()[b + k]);
        const double r = logratio::to_double(v.rollout()[b + k]);
        if (std::isnan(t) || std::isnan(r) || t > default_positive_tolerance || r > default_positive_tolerance) {
            ++st.nan_or_positive;
            continue;
        }
        const bool ft = note_fill(st.fill[0], t, r, k, first, last);
        const bool fr = note_fill(st.fill[1], r, t, k, first, last);
        touched[0] |= ft;
        touched[1] |= fr;
        if (ft || fr) continue;
        w.t[k] = t;  // an exact 0.0 both sides agree on, or a tolerated tiny positive: usable
        w.r[k] = r;
        w.ok[k] = 1.0;
        w.cell[k] = the_prob_cells().cell(t, r, true);  // load_sequence_x16 computed its cells before
        set_okbit(w, static_cast<std::size_t>(k));
        ++st.usable;
    }
    st.fill[0].sequences += touched[0];
    st.fill[1].sequences += touched[1];
}

/// The index of the lowest set bit of a nonzero x.
inline unsigned lowest_bit(unsigned x) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return static_cast<unsigned>(__builtin_ctz(x));
#else
    unsigned i = 0;
    while (!(x & 1u)) x >>= 1, ++i;
    return i;
#endif
}

/// The masked-in bounds of sequence [b, e): the first and the last
/// masked-in slot; false when no token is masked in.
template <class T, class M>
bool masked_bounds(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, std::uint64_t& first,
                   std::uint64_t& last) {
    const std::uint64_t n = e - b;
    first = 0;
    while (first < n && !v.counts(b + first)) ++first;
    if (first == n) return false;
    last = n - 1;
    while (!v.counts(b + last)) --last;
    return true;
}

/// Converts sequence [b, e) into w, one token at a time; returns false when
/// no token is masked in. first: the first masked-in slot. The scalar
/// reference of load_sequence (tests compare the two); branch-free: the
/// mask and the usable test are 80/20 and 98/2 coin flips in real dumps,
/// so branches on them mispredict; the rare slots are written
/// unconditionally and the count advanced by 0 or 1.
template <class T, class M>
bool load_sequence_scalar(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, scan_state& st,
                          scan_scratch& w, std::uint64_t& first) {
    std::uint64_t last = 0;
    if (!masked_bounds(v, b, e, first, last)) return false;
    const std::uint64_t n = e - b;
    w.t.resize(n);
    w.r.resize(n);
    w.ok.resize(n);
    w.rare.resize(n + 1);
    clear_okbits(w, static_cast<std::size_t>(n));
    const T* tp = v.train() + b;
    const T* rp = v.rollout() + b;
    std::uint64_t usable = 0, nrare = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
        const bool on = v.counts(b + k);
        const double t = logratio::to_double(tp[k]), r = logratio::to_double(rp[k]);
        const bool odd = unusual(t, r);
        const bool use = on & !odd;
        w.t[k] = kept_or_zero(t, use);
        w.r[k] = kept_or_zero(r, use);
        w.ok[k] = static_cast<double>(use);
        if (use) set_okbit(w, static_cast<std::size_t>(k));
        usable += use;
        w.rare[nrare] = k;
        nrare += on & odd;
    }
    w.rare.resize(nrare);
    ++st.sequences;
    st.usable += usable;
    w.cell.resize(n);
    if (!w.rare.empty()) note_rare(v, b, first, last, st, w);
    const prob_lut& lut = the_prob_lut();  // the byte table: independent of prob_cells
    for (std::uint64_t k = 0; k < n; ++k)
        w.cell[k] = w.ok[k] != 0.0
                        ? static_cast<std::uint32_t>(prob_bin(lut, w.r[k]) * prob_axis::bins + prob_bin(lut, w.t[k]))
                        : unusable_cell;
    return true;
}

/// The joint cells of the n loaded slots of w, in batches over the stored
/// slots (a loop of its own: the bins' dependency chain overlaps across
/// iterations; inside the load loop it measured slower). w's arrays hold
/// whole batches past n.
inline void store_sequence_cells(scan_scratch& w, std::size_t n) {
    using V = xsimd::batch<double>;
    const cell_lookup<V::arch_type> lk;
    const double* t = w.t.data();
    const double* r = w.r.data();
    const double* ok = w.ok.data();
    std::uint32_t* cell = w.cell.data();
    for (std::size_t k = 0; k < n; k += V::size)
        store_cells(lk, V::load_unaligned(t + k), V::load_unaligned(r + k), V::load_unaligned(ok + k), cell + k);
}

/// The SIMD loads' set-up for a sequence of n slots (arrays with a batch of
/// room past n, the usable bits cleared): returns where the rare slots go.
inline std::uint64_t* begin_load(scan_scratch& w, std::size_t n, std::size_t room) {
    for (auto* a : {&w.t, &w.r, &w.ok}) a->resize(n + room);
    w.cell.resize(n + room);
    if (w.rare_buf.size() < n + room) w.rare_buf.resize(n + room);
    clear_okbits(w, n);
    return w.rare_buf.data();
}

/// The SIMD loads' end: the counts into st, the rare slots classified
/// (note_rare), the arrays cut to the n slots.
template <class T, class M>
void end_load(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t first, std::uint64_t last, scan_state& st,
              scan_scratch& w, std::size_t n, std::uint64_t zeros_t, std::uint64_t zeros_r, std::size_t nrare) {
    ++st.sequences;
    st.usable += count_okbits(w, 0, n);
    st.fill[0].zeros += zeros_t;
    st.fill[1].zeros += zeros_r;
    w.rare.assign(w.rare_buf.data(), w.rare_buf.data() + nrare);
    if (!w.rare.empty()) note_rare(v, b, first, last, st, w);
    for (auto* a : {&w.t, &w.r, &w.ok}) a->resize(n);
    w.cell.resize(n);
}

#if LOGRATIO_X86 && defined(__AVX512BW__) && defined(__AVX512VL__)
/// d rounded up to a float: for every float x, x < d exactly when x < the result.
inline float float_above(double d) noexcept {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) < d) f = std::nextafter(f, INFINITY);
    return f;
}

/// load_sequence for float, bfloat16 and float16 inputs on AVX-512: 16
/// tokens per step in float lanes (their values are floats, so the usable
/// test is load_sequence_scalar's, exactly), the cells from the same
/// registers (bins16, both sides), the double slots by masked conversions,
/// the tail by masked loads (nothing staged). Half the vector operations
/// of the 8-lane double path plus its separate cells loop.
template <class T, class M>
bool load_sequence_x16(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, scan_state& st, scan_scratch& w,
                       std::uint64_t& first) {
    std::uint64_t last = 0;
    if (!masked_bounds(v, b, e, first, last)) return false;
    const std::size_t n = static_cast<std::size_t>(e - b);
    std::uint64_t* rare = begin_load(w, n, 16);
    std::size_t nrare = 0;
    const T* tp = v.train();
    const T* rp = v.rollout();
    const M* mp = v.mask();
    const cell_lookup<xsimd::default_arch> lk;
    const __m512 zero = _mm512_setzero_ps(), low = _mm512_set1_ps(-50.0f);
    const __m512 log_half = _mm512_set1_ps(float_above(-0.69314718055994531));
    const __m512 sign = _mm512_set1_ps(-0.0f);
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512i unusable = _mm512_set1_epi32(static_cast<int>(unusable_cell));
    std::uint64_t zeros_t = 0, zeros_r = 0;
    for (std::size_t k = 0; k < n; k += 16) {
        const std::uint64_t i = b + k;
        const __mmask16 lanes = n - k >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - k)) - 1);
        logratio::detail::prefetch_ahead(tp, rp, mp, i, b);
        const __m512 t = logratio::detail::widen16(tp + i, lanes), r = logratio::detail::widen16(rp + i, lanes);
        const __mmask16 on = mp ? logratio::detail::mask16(mp + i, lanes) : lanes;
        // load_sequence's test in float lanes (max/min operand order kept: NaN-safe on x86)
        const __m512 hi = _mm512_max_ps(t, r), lo = _mm512_min_ps(r, t);
        const __mmask16 tz = _mm512_cmp_ps_mask(t, zero, _CMP_EQ_OQ), rz = _mm512_cmp_ps_mask(r, zero, _CMP_EQ_OQ);
        const __mmask16 plain = _mm512_cmp_ps_mask(hi, zero, _CMP_LE_OQ) & _mm512_cmp_ps_mask(lo, low, _CMP_GT_OQ) &
                                ~((tz | rz) & _mm512_cmp_ps_mask(lo, log_half, _CMP_LT_OQ));
        const unsigned use = on & plain, odd = on & ~plain & 0xFFFFu;
        w.okbits[k >> 6] |= std::uint64_t(use) << (k & 63);
        zeros_t += static_cast<std::uint64_t>(__builtin_popcount(use & tz));
        zeros_r += static_cast<std::uint64_t>(__builtin_popcount(use & rz));
        for (unsigned bits = odd; bits; bits &= bits - 1) rare[nrare++] = k + lowest_bit(bits);
        // the cells: m = −l, +0 for l >= 0 (max returns its second operand on ±0)
        const __m512i jt = bins16(lk.pe, _mm512_max_ps(_mm512_xor_ps(t, sign), zero));
        const __m512i je = bins16(lk.pe, _mm512_max_ps(_mm512_xor_ps(r, sign), zero));
        _mm512_storeu_si512(w.cell.data() + k, _mm512_mask_blend_epi32(static_cast<__mmask16>(use), unusable,
                                                                     _mm512_add_epi32(_mm512_slli_epi32(je, 6), jt)));
        // the double slots, +0.0 where not usable
        const __mmask8 u0 = static_cast<__mmask8>(use), u1 = static_cast<__mmask8>(use >> 8);
        _mm512_storeu_pd(w.t.data() + k, _mm512_maskz_cvtps_pd(u0, _mm512_castps512_ps256(t)));
        _mm512_storeu_pd(w.t.data() + k + 8, _mm512_maskz_cvtps_pd(u1, _mm512_extractf32x8_ps(t, 1)));
        _mm512_storeu_pd(w.r.data() + k, _mm512_maskz_cvtps_pd(u0, _mm512_castps512_ps256(r)));
        _mm512_storeu_pd(w.r.data() + k + 8, _mm512_maskz_cvtps_pd(u1, _mm512_extractf32x8_ps(r, 1)));
        _mm512_storeu_pd(w.ok.data() + k, _mm512_maskz_mov_pd(u0, one));
        _mm512_storeu_pd(w.ok.data() + k + 8, _mm512_maskz_mov_pd(u1, one));
    }
    end_load(v, b, first, last, st, w, n, zeros_t, zeros_r, nrare);
    return true;
}
#endif

/// load_sequence_scalar in xsimd batches of doubles, read straight from
/// memory where the level and types allow (the panel's for_each_batch):
/// the same slots, usable count and rare slots (collected from the lane
/// bits of the few batches that hold one).
template <class T, class M>
bool load_sequence(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, scan_state& st, scan_scratch& w,
                   std::uint64_t& first) {
    using V = xsimd::batch<double>;
    using ops = logratio::detail::simd_ops<V>;
#if LOGRATIO_X86 && defined(__AVX512BW__) && defined(__AVX512VL__)
    if constexpr (logratio::detail::is_avx512<V::arch_type> && logratio::detail::direct_load16<T, M>)
        return load_sequence_x16(v, b, e, st, w, first);
#endif
    std::uint64_t last = 0;
    if (!masked_bounds(v, b, e, first, last)) return false;
    const std::size_t n = static_cast<std::size_t>(e - b);
    std::uint64_t* rare = begin_load(w, n, V::size);  // the staged tail writes up to a batch past n
    std::size_t nrare = 0;
    std::uint64_t* okbits = w.okbits.data();
    double* wt = w.t.data();
    double* wr = w.r.data();
    double* wo = w.ok.data();
    const V zero(0.0), one(1.0), low(-50.0), log_half(-0.69314718055994531);
    std::size_t k = 0;
    std::uint64_t zeros_t = 0, zeros_r = 0;  // counts by popcount: off the vector ports
    logratio::detail::for_each_batch<V>(v, b, e, w.staging, [&](const V& t, const V& r, const typename ops::mask& on) LOGRATIO_ALWAYS_INLINE {
        // not unusual(), or an exact 0.0 on one or both sides the other side
        // finds likely. hi = max(t, r), lo = min(r, t): on x86 a NaN on either
        // side reaches one of them (max/min return their second operand when
        // one is NaN) and fails its comparison; t r == 0: a side is 0.0
        const V hi = xsimd::max(t, r), lo = xsimd::min(r, t);
        auto plain = (hi <= zero) & (lo > low) & !((t * r == zero) & (lo < log_half));
#if !LOGRATIO_X86
        plain = plain & (t == t) & (r == r);
#endif
        const auto use = on & plain;
        const V tu = xsimd::select(use, t, zero), ru = xsimd::select(use, r, zero), ou = xsimd::select(use, one, zero);
        tu.store_unaligned(wt + k);
        ru.store_unaligned(wr + k);
        ou.store_unaligned(wo + k);
        okbits[k >> 6] |= std::uint64_t(ops::bits(use)) << (k & 63);  // V::size divides 64
        zeros_t += ops::count(use & (t == zero));
        zeros_r += ops::count(use & (r == zero));
        const auto odd = on & !plain;
        if (!ops::none(odd))
            for (unsigned bits = ops::bits(odd); bits; bits &= bits - 1) rare[nrare++] = k + lowest_bit(bits);
        k += V::size;
    });
    store_sequence_cells(w, n);  // before note_rare, which sets the cells of the slots it makes usable
    end_load(v, b, first, last, st, w, n, zeros_t, zeros_r, nrare);
    return true;
}

/// Alignment sums of one loaded sequence (branch-free over the 0/1 ok): one
/// loop with an accumulator per shift (independent add chains), the two
/// slots at each end by the bounds-checked loop. Returns the number of
/// usable tokens with |δ| > big_delta (the desync scan's trigger).
/// The scalar reference of scan_pairs (tests compare the two).
inline std::size_t scan_pairs_scalar(const scan_scratch& w, scan_state& st) {
    constexpr int K = scan_state::max_shift;
    const std::size_t n = w.ok.size();
    const double* t = w.t.data();
    const double* r = w.r.data();
    const double* ok = w.ok.data();
    double sum[2 * K + 1] = {}, cnt[2 * K + 1] = {};
    std::size_t big = 0;
    auto edge = [&](std::size_t k) {
        for (int s = -K; s <= K; ++s) {
            const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(k) + s;
            if (j < 0 || j >= static_cast<std::ptrdiff_t>(n)) continue;
            const double both = ok[k] * ok[static_cast<std::size_t>(j)];
            sum[s + K] += both * std::fabs(t[k] - r[static_cast<std::size_t>(j)]);
            cnt[s + K] += both;
        }
        big += std::fabs(t[k] - r[k]) > scan_state::big_delta;  // 0 - 0 on unusable slots
    };
    const std::size_t K2 = static_cast<std::size_t>(K);
    for (std::size_t k = 0; k < std::min(n, K2); ++k) edge(k);
    for (std::size_t k = K2; k + K2 < n; ++k) {
        const double tk = t[k], ok_k = ok[k];
        for (int s = -K; s <= K; ++s) {  // unrolled by the compiler: 2K+1 independent chains
            const std::size_t j = k + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(s));
            const double both = ok_k * ok[j];
            sum[s + K] += both * std::fabs(tk - r[j]);
            cnt[s + K] += both;
        }
        big += std::fabs(tk - r[k]) > scan_state::big_delta;
    }
    for (std::size_t k = std::max(K2, n > K2 ? n - K2 : 0); k < n; ++k) edge(k);
    for (int s = 0; s <= 2 * K; ++s) {
        st.shift_abs[static_cast<std::size_t>(s)] += sum[s];
        st.shift_n[static_cast<std::size_t>(s)] += static_cast<std::uint64_t>(cnt[s]);
    }
    return big;
}

/// The 8 lanes i where slots k + i and k + i + s are both usable, from u16:
/// the usable bits of slots [k − at, k − at + 16) (at >= −s; at + s + 7 < 16).
LOGRATIO_ALWAYS_INLINE inline unsigned pair_lanes(unsigned u16, unsigned at, int s) noexcept {
    return (u16 >> at) & (u16 >> static_cast<unsigned>(static_cast<int>(at) + s)) & 0xFFu;
}

/// scan_pairs_scalar with the interior slots in xsimd batches of doubles
/// (the default arch of the build level): the same per-token terms, summed
/// lane-wise, so only the summation order differs. The pair counts come
/// from the usable bits (pair_count: exact); on AVX-512 the sums are masked
/// adds under masks from the same bits (no products by ok: the vector
/// ports are this loop's limit). The edge and tail slots go through the
/// scalar code.
inline std::size_t scan_pairs(const scan_scratch& w, scan_state& st) {
    using B = xsimd::batch<double>;
    using ops = logratio::detail::simd_ops<B>;
    constexpr std::size_t L = B::size;
    constexpr int K = scan_state::max_shift;
    constexpr std::size_t K2 = static_cast<std::size_t>(K);
    const std::size_t n = w.ok.size();
    if (n < 2 * K2 + L) return scan_pairs_scalar(w, st);
    const double* t = w.t.data();
    const double* r = w.r.data();
    const double* ok = w.ok.data();
    B sum[2 * K + 1];
    for (int s = 0; s <= 2 * K; ++s) sum[s] = B(0.0);
    std::size_t nbig = 0;
    const B limit(scan_state::big_delta);
    std::size_t k = K2;
    for (; k + L + K2 <= n; k += L) {
        const B tk = B::load_unaligned(t + k);
#if LOGRATIO_X86 && defined(__AVX512F__)
        if constexpr (logratio::detail::is_avx512<B::arch_type>) {
            // k − K2 is a multiple of 8: the bytes of okbits from slot k − K2 on
            static_assert(L == 8 && 2 * scan_state::max_shift + 8 <= 16, "pair_lanes reads 16 bits");
            std::uint16_t u16;
            std::memcpy(&u16, reinterpret_cast<const unsigned char*>(w.okbits.data()) + ((k - K2) >> 3), 2);
            for (int s = -K; s <= K; ++s) {
                if (s == 0) continue;
                const std::size_t j = k + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(s));
                const __mmask8 m = static_cast<__mmask8>(pair_lanes(u16, static_cast<unsigned>(K2), s));
                const B a = xsimd::abs(tk - B::load_unaligned(r + j));
                sum[s + K] = _mm512_mask_add_pd(sum[s + K], m, sum[s + K], a);
            }
        } else
#endif
        {
            const B ok_k = B::load_unaligned(ok + k);
            for (int s = -K; s <= K; ++s) {
                if (s == 0) continue;
                const std::size_t j = k + static_cast<std::size_t>(static_cast<std::ptrdiff_t>(s));
                sum[s + K] += (ok_k * B::load_unaligned(ok + j)) * xsimd::abs(tk - B::load_unaligned(r + j));
            }
        }
        // shift 0: an unusable slot holds t = r = 0, so |t − r| needs no mask
        const B a0 = xsimd::abs(tk - B::load_unaligned(r + k));
        sum[K] += a0;
        nbig += static_cast<std::size_t>(ops::count(a0 > limit));
    }
    double ssum[2 * K + 1];
    for (int s = 0; s <= 2 * K; ++s) ssum[s] = xsimd::hadd(sum[s]);
    for (; k < n; ++k) {  // the tail and the last K slots, bounds-checked
        for (int s = -K; s <= K; ++s) {
            const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(k) + s;
            if (j >= static_cast<std::ptrdiff_t>(n)) continue;
            ssum[s + K] += ok[k] * ok[static_cast<std::size_t>(j)] * std::fabs(t[k] - r[static_cast<std::size_t>(j)]);
        }
        nbig += std::fabs(t[k] - r[k]) > scan_state::big_delta;
    }
    for (std::size_t k0 = 0; k0 < K2; ++k0) {  // the first K slots
        for (int s = -K; s <= K; ++s) {
            const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(k0) + s;
            if (j < 0) continue;
            ssum[s + K] += ok[k0] * ok[static_cast<std::size_t>(j)] * std::fabs(t[k0] - r[static_cast<std::size_t>(j)]);
        }
        nbig += std::fabs(t[k0] - r[k0]) > scan_state::big_delta;
    }
    std::uint64_t pairs[K + 1];  // by |shift|: shifts s and −s pair the same slots
    for (int s = 0; s <= K; ++s) pairs[s] = pair_count(w, static_cast<unsigned>(s));
    for (int s = 0; s <= 2 * K; ++s) {
        st.shift_abs[static_cast<std::size_t>(s)] += ssum[s];
        st.shift_n[static_cast<std::size_t>(s)] += pairs[s > K ? s - K : K - s];
    }
    return nbig;
}

/// The slot where a desync change point cuts the sequence (n when none);
/// big: its usable tokens with |δ| > big_delta.
inline std::size_t desync_cut(scan_scratch& w, scan_state& st, std::size_t big) {
    const std::size_t n = w.ok.size();
    st.above_big += big;
    if (big == 0) return n;  // no large |δ|: no change point to look for
    ++st.desync_scanned;
    w.a.clear();
    std::vector<std::size_t> slot;
    for (std::size_t k = 0; k < n; ++k)
        if (w.ok[k] != 0.0) {
            w.a.push_back(static_cast<float>(std::fabs(w.t[k] - w.r[k])));
            slot.push_back(k);
        }
    std::size_t at = 0;
    if (!change_point(w.a, at)) return n;
    ++st.desync_sequences;
    st.desync_tokens_after += w.a.size() - at;
    ++st.desync_at[std::min<std::size_t>(9, at * 10 / w.a.size())];
    return slot[at];
}

/// The breakdown sums of slots [k0, k1) of one loaded sequence, all in
/// position bucket pb: the bucket's sums stay in registers. The scalar
/// reference of scan_bucket (tests compare the two).
inline void scan_bucket_scalar(scan_scratch& w, const prob_lut& lut, scan_state& st, int pb, std::size_t k0,
                        std::size_t k1) {
    double sd = 0, sa = 0, mx = 0, s3 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::uint64_t cnt = 0, neg = 0, pos = 0, tail = 0;  // integer counters: no int-to-double conversions
    for (std::size_t k = k0; k < k1; ++k) {
        const double t = w.t[k], r = w.r[k], on = w.ok[k], d = t - r, ad = std::fabs(d);
        const double k3 = k3_term(d);
        const bool use = on != 0.0;
        cnt += use;
        sd += d;
        sa += ad;
        mx = std::max(mx, ad);
        s3 += k3;
        sx += t;
        sy += r;
        sxx += t * t;
        sxy += t * r;
        neg += d < 0;
        pos += d > 0;
        tail += ad > scan_state::tail_delta;
        const int jt = prob_bin(lut, t), je = prob_bin(lut, r);  // the byte table: independent of prob_cells
        const std::size_t c = use ? static_cast<std::size_t>(je) * prob_axis::bins + static_cast<std::size_t>(jt)
                                  : std::size_t(unusable_cell);
        ++w.joint[c];
        ++w.joint_tokens;
        delta_stats& p = w.prob[k % scan_scratch::prob_copies][c >> 8];
        p.sum_delta += d;
        p.sum_abs += ad;
        p.max_abs = std::max(p.max_abs, ad);
        p.sum_k3 += k3;
    }
    delta_stats& p = st.bd.by_position[pb];
    p.count += cnt;
    p.sum_delta += sd;
    p.sum_abs += sa;
    p.max_abs = std::max(p.max_abs, mx);
    p.sum_k3 += s3;
    slope_sums& sl = st.slope[pb];
    sl.n += cnt;
    sl.sx += sx;
    sl.sy += sy;
    sl.sxx += sxx;
    sl.sxy += sxy;
    st.negative += neg;
    st.positive += pos;
    st.above_tail += tail;
}

/// scan_bucket_scalar with the per-token arithmetic and the bucket's sums in
/// xsimd batches of doubles (counts as sums of 0/1: exact); each token's
/// cell, δ and kl_k3 term are queued for the probability scatter, which
/// stays scalar (histogram increments). Only the summation order differs.
inline void scan_bucket(scan_scratch& w, scan_state& st, int pb, std::size_t k0,
                        std::size_t k1) {
    using B = xsimd::batch<double>;
    constexpr std::size_t L = B::size;
    if (w.q.d.size() < k1 - k0 + L) {  // grown, never shrunk: no zero-filling per bucket
        for (auto* a : {&w.q.d, &w.q.k3}) a->resize(k1 - k0 + L);
        w.q.cell.resize(k1 - k0 + L);
    }
    std::size_t queued = 0;
    const double* tp = w.t.data();
    const double* rp = w.r.data();
    const double* okp = w.ok.data();
    const std::uint32_t* cellp = w.cell.data();
    const queue_ptrs qp(w.q);
    using ops = logratio::detail::simd_ops<B>;
    const B zero(0.0), small(0.0625), tail_delta(scan_state::tail_delta);
    B sd = zero, sa = zero, mx = zero, s3 = zero, sx = zero, sy = zero, sxx = zero, sxy = zero;
    std::uint64_t nneg = 0, npos = 0, ntail = 0;  // counts by popcount: off the vector ports
    std::size_t k = k0;
    for (; k + L <= k1; k += L) {
        const B t = B::load_unaligned(tp + k), r = B::load_unaligned(rp + k);
        const B d = logratio::detail::token_delta(t, r), ad = xsimd::abs(d);
        B k3 = logratio::detail::k3_series(d);
        if (xsimd::any(ad > small)) {  // rare: the exact term beyond |δ| = 1/16, inline (a call
            // would make every accumulator of this loop live in memory: zmm registers are caller-saved)
            const B c = logratio::detail::clamped_delta(d);
            k3 = xsimd::select(ad > small, logratio::detail::k3_term(logratio::detail::ratio_minus_one(c), c), k3);
        }
        const B ok = B::load_unaligned(okp + k);
        queue_batch(qp, queued, ok, d, k3, cellp + k);
        sd += d;
        sa += ad;
        mx = xsimd::max(mx, ad);
        s3 += k3;
        sx += t;
        sy += r;
        sxx += t * t;
        sxy += t * r;
        nneg += ops::count(d < zero);
        npos += ops::count(d > zero);
        ntail += ops::count(ad > tail_delta);
    }
    double hsd = xsimd::hadd(sd), hsa = xsimd::hadd(sa), hs3 = xsimd::hadd(s3), hsx = xsimd::hadd(sx),
           hsy = xsimd::hadd(sy), hsxx = xsimd::hadd(sxx), hsxy = xsimd::hadd(sxy);
    double hmx = 0;
    alignas(64) double lanes[L];
    mx.store_aligned(lanes);
    for (double x : lanes) hmx = std::max(hmx, x);
    const std::uint64_t ncnt = count_okbits(w, k0, k1);
    for (; k < k1; ++k) {  // the tail slots
        const double t = tp[k], r = rp[k], d = t - r, ad = std::fabs(d);
        const double k3 = k3_term(d);
        if (okp[k] != 0.0) {
            w.q.cell[queued] = w.cell[k];
            w.q.d[queued] = d;
            w.q.k3[queued++] = k3;
        }
        hsd += d;
        hsa += ad;
        hmx = std::max(hmx, ad);
        hs3 += k3;
        hsx += t;
        hsy += r;
        hsxx += t * t;
        hsxy += t * r;
        nneg += d < 0;
        npos += d > 0;
        ntail += ad > scan_state::tail_delta;
    }
    scatter_probability(w, st, queued);
    delta_stats& p = st.bd.by_position[pb];
    p.count += ncnt;
    p.sum_delta += hsd;
    p.sum_abs += hsa;
    p.max_abs = std::max(p.max_abs, hmx);
    p.sum_k3 += hs3;
    slope_sums& sl = st.slope[pb];
    sl.n += ncnt;
    sl.sx += hsx;
    sl.sy += hsy;
    sl.sxx += hsxx;
    sl.sxy += hsxy;
    st.negative += nneg;
    st.positive += npos;
    st.above_tail += ntail;
}

/// The sums of one loaded sequence. Tokens after a desync change point are
/// kept out of the breakdowns, like filled values: the desync finding
/// explains them. Positions count from the first masked-in slot.
inline void scan_loaded(scan_scratch& w, scan_state& st, std::size_t first) {
    const std::size_t cut = desync_cut(w, st, scan_pairs(w, st));
    for (int pb = 0; first + breakdowns::position_lo(pb) < cut; ++pb) {
        const std::size_t k0 = first + breakdowns::position_lo(pb);
        const std::size_t k1 = std::min<std::size_t>(cut, first + breakdowns::position_hi(pb) + 1);
        scan_bucket(w, st, pb, k0, k1);
    }
}

/// The doctor's pass over sequences [s0, s1).
template <class T, class M>
scan_state scan_range(const paired_view<T, M>& v, std::uint64_t s0, std::uint64_t s1) {
    scan_state st;
    scan_scratch w;
    for (std::uint64_t s = s0; s < s1; ++s) {
        std::uint64_t first = 0;
        if (!load_sequence(v, v.sequence_begin(s), v.sequence_end(s), st, w, first)) continue;
        scan_loaded(w, st, static_cast<std::size_t>(first));
    }
    flush_probability(w, st);
    return st;
}

}  // namespace detail

/// The doctor's sums over the whole view: one pass, blocks on up to
/// `threads` threads merged in order (bit-identical at any thread count).
template <class T, class M>
scan_state scan(const paired_view<T, M>& v, unsigned threads = 1) {
    return logratio::detail::parallel_reduce(
        v, threads, [&](std::uint64_t first, std::uint64_t last) { return detail::scan_range(v, first, last); });
}

}  // namespace doctor
LOGRATIO_NAMESPACE_END
