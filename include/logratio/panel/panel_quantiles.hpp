#pragma once
// The panel with its exact quantiles in one pass over memory.
//
//   panel p = compute_panel_with_quantiles(view, options, threads);
//
// gives what compute_panel + add_panel_quantiles give (delta_q* and
// abs_delta_q* of SPEC: numpy.quantile's linear method, bit for bit), but
// reads the tokens once instead of three times:
//
//  1. A sample (blocks of 64 tokens spread over the view: 2^18 tokens, or
//     all of a smaller view) predicts, for every rank the quantiles need,
//     which buckets of delta hold it (delta_buckets below: 128 buckets per
//     binade, per sign), with a margin of z = 5 binomial standard
//     deviations of the sample rank.
//  2. The panel kernel hands each batch's delta to a collector
//     (quantile_collector), which stages delta and its bucket key in an
//     L1-resident block and, every 1024 tokens, runs a scalar loop: one
//     histogram increment per token and one store into a candidate buffer
//     that advances only when the token's bucket was predicted.
//  3. The exact histogram says which bucket holds each rank and where in
//     it; the candidates of those buckets are selected (nth_element). A rank
//     whose bucket was not predicted falls back to the separate exact pass
//     (add_panel_quantiles), so the result never depends on the sample.
//
// For float32, bfloat16 and float16 inputs a nonzero delta is at least
// 2^-149 (a difference of two such numbers), so the zero bucket of each
// sign holds only +-0 (see delta_buckets): it is never stored, its rank's
// value is 0. (bfloat16 inputs give delta = 0 for a large share of tokens.)
// For float64 inputs those buckets are ordinary ones.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <type_traits>
#include <vector>

#include "detail/panel_kernel.hpp"
#include "../detail/parallel.hpp"
#include "../quantiles/f32_interval_select.hpp"
#include "../quantiles/quantiles.hpp"
#include "panel.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// SPEC's default quantile probabilities of the panel.
inline const std::vector<double>& default_delta_probs() {
    static const std::vector<double> p{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    return p;
}
inline const std::vector<double>& default_abs_delta_probs() {
    static const std::vector<double> p{0.5, 0.9, 0.99, 0.999, 0.9999};
    return p;
}

/// The panel's second pass: fills p.delta_quantiles and
/// p.abs_delta_quantiles (SPEC's delta_q*, abs_delta_q*) with numpy's
/// linear method. Nothing is added when the view has no masked-in token.
/// Non-finite tokens follow `nonfinite` (use the panel's policy).
template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, quantile_workspace& ws,
                         nonfinite_policy nonfinite = nonfinite_policy::raise) {
    p.delta_quantiles.clear();
    p.abs_delta_quantiles.clear();
    quantile_options o;
    o.nonfinite = nonfinite;
    const auto& dp = default_delta_probs();
    const auto& ap = default_abs_delta_probs();
    const auto qd = quantiles(v, quantile_of::delta, dp, o, ws);
    if (std::isnan(qd.front())) return;  // no token: no quantile keys (SPEC: absent or null)
    const auto qa = quantiles(v, quantile_of::abs_delta, ap, o, ws);
    for (std::size_t i = 0; i < qd.size(); ++i) p.delta_quantiles.emplace_back(dp[i], qd[i]);
    for (std::size_t i = 0; i < qa.size(); ++i) p.abs_delta_quantiles.emplace_back(ap[i], qa[i]);
}

template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, nonfinite_policy nonfinite = nonfinite_policy::raise) {
    quantile_workspace ws;
    add_panel_quantiles(p, v, ws, nonfinite);
}

namespace detail {

/// The buckets of delta: the top 16 bits (sign, exponent, 7 mantissa bits)
/// of float32(delta * 2^64). Rounding to float32 is monotone, so each
/// bucket is an interval of delta; the scale (exact in double) keeps every
/// nonzero delta of float32/bf16/f16 inputs (|delta| >= 2^-149) out of the
/// zero buckets (float32 |x| < 2^-133 means |delta| < 2^-197) and every
/// |delta| below 2^64 finite. A token's "raw" bucket is those 16 bits (one
/// shift, on the kernel's side); the histogram is walked in value order:
/// ordered = per_sign - 1 - (raw & 0x7fff) for negative floats (and -0),
/// per_sign + raw for positive ones. Magnitude x = raw & 0x7fff sums the
/// ordered buckets per_sign + x and per_sign - 1 - x.
struct delta_buckets {
    static constexpr double scale = 18446744073709551616.0;  // 2^64
    static constexpr std::uint64_t per_sign = 0x8000;
    static constexpr std::uint64_t count = 2 * per_sign;
    static constexpr std::uint64_t zero_pos = per_sign, zero_neg = per_sign - 1;  // x = 0 of each sign
    static constexpr std::uint64_t sample_block = 64;  // tokens per sample block
    static constexpr double margin_z = 5.0;
};

inline std::uint32_t raw_bucket(double d) noexcept {
    const float f = static_cast<float>(d * delta_buckets::scale);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u >> 16;
}
inline std::uint64_t ordered_bucket(std::uint32_t raw) noexcept {
    // per_sign - 1 - m for a negative float, per_sign + m else: no branch
    // (the sample's signs are random)
    const std::int64_t m = raw & 0x7fffu, neg = -static_cast<std::int64_t>(raw >> 15);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(delta_buckets::per_sign) + (m ^ neg));
}
/// The bucket, in value order, of one delta (NaN lands in range too).
inline std::uint64_t delta_bucket(double d) noexcept { return ordered_bucket(raw_bucket(d)); }

/// float32(d * 2^64) of a batch's lanes into out[0, L) (the float bits).
template <class V>
LOGRATIO_ALWAYS_INLINE inline void store_scaled_floats(const V& d, float* out) noexcept {
    if constexpr (std::is_same<V, double>::value) {
        out[0] = static_cast<float>(d * delta_buckets::scale);
    } else {
        using A = typename V::arch_type;
        const V x = d * V(delta_buckets::scale);
#if LOGRATIO_X86
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) {
            _mm256_store_ps(out, _mm512_cvtpd_ps(x));
            return;
        } else if constexpr (std::is_base_of<xsimd::avx, A>::value) {
            _mm_store_ps(out, _mm256_cvtpd_ps(x));
            return;
        }
#endif
        alignas(64) double t[V::size];
        x.store_aligned(t);
        for (std::size_t l = 0; l < V::size; ++l) out[l] = static_cast<float>(t[l]);
    }
}

/// Which buckets the pass stores (flag 1), from the sample.
struct panel_quantile_plan {
    explicit panel_quantile_plan(std::pmr::memory_resource* mr = std::pmr::get_default_resource())
        : flag(mr), flag_raw(mr) {}
    std::pmr::vector<std::uint8_t> flag;      // by bucket in value order
    std::pmr::vector<std::uint8_t> flag_raw;  // the same by raw bucket (the kernel's side)
    bool zero_exact = false;  // float32/bf16/f16 inputs: the x = 0 buckets hold only +-0
    bool usable = false;      // false: too few sampled tokens, or too much to store
    double stored_share = 0;  // the sample's share of tokens in flagged buckets
};

/// The panel kernel's hook (see no_quantile_hook). Inside the vector loop
/// it only stores each batch's delta and float32(delta * 2^64) into an
/// L1-resident staging block (three vector instructions); after every
/// `block` tokens a scalar loop adds the staged tokens to the histogram
/// (hist[raw * 2 + i % 2]: two copies, so consecutive tokens in one bucket
/// do not wait on one counter; 32-bit counters, views under 2^32 tokens) and
/// appends the values of flagged buckets to the candidates (written always,
/// kept only when flagged: no branch).
/// Interleaving that scalar work with the kernel's, token by token, measured
/// 1.8x the panel alone, separate loops 1.6x (Zen 4, 2^25 float32 tokens);
/// the scalar loop runs at ~2.7 cycles per token, of which the histogram is
/// a third. (Tried and no faster: the flags by one gather per 16 tokens and
/// the values by compression; the flags noted in the scalar loop and the
/// values compressed after it; the flag in its counter's top bit; the
/// masked-out lanes compressed away before staging; 1, 2 or 4 histogram
/// copies; this loop software-pipelined into the vector loop, one block
/// behind (2.1-2.5x the panel: the combined loop spills registers); and,
/// instead of the histogram, counts below the predicted runs by compares of
/// 16-bit keys, 32 per AVX-512 vector, with popcounts or masked 16-bit lane
/// counters (~3 cycles per token on Zen 4 with ~30 bounds: no faster).)
/// The histograms and candidates live in a part of the workspace (reused
/// across calls: no page faults, no zeroing of the candidates; the
/// candidates on huge pages: few faults in a first call either).
template <std::size_t L>
struct quantile_collector {
    static constexpr bool active = true;
    static constexpr std::uint64_t block = 1024;  // tokens staged between scalar loops
    static constexpr std::size_t copies = 2;
    static_assert(block % L == 0, "whole batches per block");
    using part = quantile_workspace::fused_part;
    const std::uint8_t* flag = nullptr;
    part* store = nullptr;
    std::pmr::vector<std::uint32_t> hist;  // hist[raw * copies + lane % copies]
    double* cand = nullptr;
    std::size_t used = 0, staged = 0;
    std::uint64_t lanes = 0;  // lanes seen, masked-out ones included
    alignas(64) float keys[block];
    alignas(64) double values[block];

    quantile_collector(const panel_quantile_plan& plan, part& p, std::size_t expected, std::pmr::memory_resource* mr)
        : flag(plan.flag_raw.data()), store(&p), hist(delta_buckets::count * copies, 0u, mr) {
        if (p.cap < expected) grow(expected);
        cand = p.cand.get();
    }
    quantile_collector(const quantile_collector&) = delete;

    template <class V>
    LOGRATIO_ALWAYS_INLINE void add(const V& d, const V&) noexcept {
        static_assert(simd_ops<V>::size == L, "collector built for another lane count");
        store_scaled_floats(d, keys + staged);
        if constexpr (L == 1) values[staged] = d;
        else d.store_aligned(values + staged);
        staged += L;
    }

    template <class F>
    LOGRATIO_ALWAYS_INLINE void for_blocks(std::uint64_t b, std::uint64_t e, F&& f) {
        for (std::uint64_t bb = b; bb < e; bb += block) {
            f(bb, std::min(e, bb + block));
            flush();
        }
    }

    void after_sequence(std::uint64_t, std::uint64_t) noexcept {}

    /// The scalar loop over the staged tokens.
    void flush() noexcept {
        if (store->cap < used + staged) grow(std::max<std::size_t>(used + staged, 2 * store->cap));
        count_and_keep(staged);
        lanes += staged;
        staged = 0;
    }

    /// Histogram increments, and the flagged values appended (written
    /// always, kept only when flagged: no branch).
    void count_and_keep(std::size_t n) noexcept {
        std::uint32_t* h = hist.data();
        double* c = cand;
        std::size_t u = used;
        std::size_t i = 0;
        for (; i + copies <= n; i += copies)
            for (std::size_t j = 0; j < copies; ++j) {
                std::uint32_t bits;
                std::memcpy(&bits, keys + i + j, 4);
                const std::uint32_t k = bits >> 16;
                h[k * copies + j] += 1;
                c[u] = values[i + j];
                u += flag[k];
            }
        for (; i < n; ++i) {  // one lane (L = 1) leaves a remainder
            std::uint32_t bits;
            std::memcpy(&bits, keys + i, 4);
            const std::uint32_t k = bits >> 16;
            h[k * copies] += 1;
            c[u] = values[i];
            u += flag[k];
        }
        used = u;
    }

    void grow(std::size_t need) {
        huge_array<double> bigger = make_huge_array<double>(need);
        if (used) std::memcpy(bigger.get(), store->cand.get(), used * sizeof(double));
        store->cand = std::move(bigger);
        store->cap = need;
        cand = store->cand.get();
    }
};

/// Where the sample reads: `blocks` blocks of sample_block consecutive
/// positions, block k at k * stride + first. 2^18 positions (1/128 of 2^25
/// tokens), or every position of a view that small (the "sample" is then
/// the data: its predictions are exact).
struct sample_geometry {
    std::uint64_t blocks = 0, stride = 0, first = 0;
};
inline sample_geometry sample_blocks(std::uint64_t n) noexcept {
    const std::uint64_t B = delta_buckets::sample_block;
    sample_geometry g;
    g.blocks = std::min<std::uint64_t>(n / B, (std::uint64_t(1) << 18) / B);
    if (g.blocks == 0) return g;
    g.stride = n / g.blocks;
    g.first = (g.stride - B) / 2;
    return g;
}

/// The sample's histogram over delta_buckets; masked-in tokens with finite
/// log-probs only. `sampled` counts them. A block is a few cache lines of
/// one page of each array: blocks of 16 tokens measured twice the time
/// (one page walk per 16 tokens). Tokens of a block are neighbours in a
/// sequence, so the sample is less informative than 2^18 independent
/// draws; the margin (z = 5) absorbs that, and a miss falls back.
template <class T, class M>
std::pmr::vector<std::uint64_t> sample_delta_histogram(const paired_view<T, M>& v, std::uint64_t& sampled,
                                                       std::pmr::memory_resource* mr) {
    const std::uint64_t B = delta_buckets::sample_block;
    const sample_geometry geo = sample_blocks(v.size());
    const std::uint64_t capped = geo.blocks, stride = geo.stride, first = geo.first;
    std::pmr::vector<std::uint64_t> h(delta_buckets::count, 0, mr);
    sampled = 0;
    constexpr std::uint64_t ahead = 16;  // blocks: the sample is latency-bound without prefetch
    for (std::uint64_t k = 0; k < capped; ++k) {
#if LOGRATIO_X86
        if (k + ahead < capped) {
            const std::uint64_t p = (k + ahead) * stride + first;
            constexpr std::uint64_t line = 64 / sizeof(T);  // every line of the block, and its last token's
            for (std::uint64_t q = p; q < p + B + line - 1; q += line) {
                const std::uint64_t at = std::min(q, p + B - 1);
                __builtin_prefetch(v.train() + at);
                __builtin_prefetch(v.rollout() + at);
            }
            if (v.has_mask()) {
                __builtin_prefetch(v.mask() + p);
                __builtin_prefetch(v.mask() + p + B - 1);
            }
        }
#endif
        const std::uint64_t b = k * stride + first;
        for (std::uint64_t i = b; i < b + B; ++i) {
            const double a = to_double(v.train()[i]), r = to_double(v.rollout()[i]);
            const bool ok = v.counts(i) && (a - a == 0.0) && (r - r == 0.0);  // masked in, both finite
            h[delta_bucket(a - r)] += ok;
            sampled += ok;
        }
    }
    return h;
}

/// A histogram's prefix sums: the bucket holding a rank by binary search
/// (a walk over the 65,536 buckets per rank was ~3 ms of serial time).
class rank_index {
public:
    explicit rank_index(const std::pmr::vector<std::uint64_t>& h) : cum_(h.size() + 1, 0, h.get_allocator()) {
        for (std::size_t b = 0; b < h.size(); ++b) cum_[b + 1] = cum_[b] + h[b];
    }
    /// The bucket (in h's order) holding rank r of the values h counts, or
    /// h.size() when r is past the end; `below` = the values before it.
    std::size_t bucket_of_rank(std::uint64_t r, std::uint64_t& below) const {
        const auto first = cum_.begin() + 1;
        const std::size_t b = static_cast<std::size_t>(std::upper_bound(first, cum_.end(), r) - first);
        below = cum_[b];
        return b;
    }

private:
    std::pmr::vector<std::uint64_t> cum_;
};

/// |delta|'s histogram from delta's: magnitude index x sums the buckets
/// per_sign + x and per_sign - 1 - x.
inline std::pmr::vector<std::uint64_t> magnitude_histogram(const std::pmr::vector<std::uint64_t>& h) {
    const std::uint64_t P = delta_buckets::per_sign;
    std::pmr::vector<std::uint64_t> a(P, h.get_allocator());
    for (std::uint64_t x = 0; x < P; ++x) a[x] = h[P + x] + h[P - 1 - x];
    return a;
}

/// Flags, for every probability, the buckets of h (a sample histogram of
/// `m` values) between the sample ranks f (m - 1) -+ (z sigma + 4), sigma
/// the binomial standard deviation of the sample rank. `mark(b)` flags one.
template <class Mark>
void flag_probable_buckets(const std::pmr::vector<std::uint64_t>& h, std::uint64_t m, const std::vector<double>& probs,
                           Mark&& mark) {
    const double md = static_cast<double>(m);
    const rank_index index(h);
    for (double f : probs) {
        const double s = f * (md - 1), w = delta_buckets::margin_z * std::sqrt(md * f * (1 - f)) + 4.0;
        std::uint64_t below = 0;
        const std::size_t b0 = index.bucket_of_rank(static_cast<std::uint64_t>(std::max(0.0, std::floor(s - w))), below);
        const std::size_t b1 =
            index.bucket_of_rank(static_cast<std::uint64_t>(std::min(md - 1, std::ceil(s + w))), below);
        for (std::size_t b = b0; b <= b1 && b < h.size(); ++b) mark(b);
    }
}

/// The plan of a fused pass over v: which buckets to store (its vectors, and
/// its temporaries, from mr).
template <class T, class M>
panel_quantile_plan plan_panel_quantiles(const paired_view<T, M>& v,
                                         std::pmr::memory_resource* mr = std::pmr::get_default_resource()) {
    panel_quantile_plan plan(mr);
    plan.zero_exact = !std::is_same<T, double>::value;
    std::uint64_t m = 0;
    const std::pmr::vector<std::uint64_t> h = sample_delta_histogram(v, m, mr);
    if (m < 512) return plan;
    const std::uint64_t P = delta_buckets::per_sign;
    plan.flag.assign(delta_buckets::count, 0);
    flag_probable_buckets(h, m, default_delta_probs(), [&](std::size_t b) { plan.flag[b] = 1; });
    flag_probable_buckets(magnitude_histogram(h), m, default_abs_delta_probs(), [&](std::size_t x) {
        plan.flag[P + x] = 1;
        plan.flag[P - 1 - x] = 1;
    });
    if (plan.zero_exact) plan.flag[delta_buckets::zero_pos] = plan.flag[delta_buckets::zero_neg] = 0;
    plan.flag_raw.resize(delta_buckets::count);
    for (std::uint32_t k = 0; k < delta_buckets::count; ++k) plan.flag_raw[k] = plan.flag[ordered_bucket(k)];
    std::uint64_t stored = 0;
    for (std::size_t b = 0; b < h.size(); ++b) stored += plan.flag[b] ? h[b] : 0;
    plan.usable = stored * 4 <= m;  // more than a quarter stored: the separate pass is as good
    plan.stored_share = static_cast<double>(stored) / static_cast<double>(m);
    return plan;
}

/// What the fused pass collected, merged over lanes and parts: the exact
/// histogram of the masked-in tokens' delta (the masked-out lanes, which
/// carry delta = +0, taken out of the zero bucket) and the stored values.
struct collected_deltas {
    explicit collected_deltas(std::pmr::memory_resource* mr = std::pmr::get_default_resource()) : hist(mr) {}
    std::pmr::vector<std::uint64_t> hist;  // its resource also serves the resolve's temporaries
    std::vector<std::pair<const double*, std::size_t>> cand;  // one span per part
    std::uint64_t fakes = 0;  // +0 lanes that were not tokens (stored too where flagged)
};

/// The buckets the needed ranks fall in, and where in them. `value_of`
/// gives a rank its value outright (the +-0 buckets of zero_exact inputs);
/// false when a rank's bucket was not stored.
struct bucket_needs {
    explicit bucket_needs(std::pmr::memory_resource* mr) : slot(mr) {}
    std::pmr::vector<std::int32_t> slot;  // bucket -> index into need, -1: not needed
    struct need {
        explicit need(std::pmr::memory_resource* mr) : values(mr) {}
        std::pmr::vector<double> values;
        std::vector<std::pair<std::uint64_t, std::size_t>> at;  // (offset in bucket, index of the rank)
        std::uint64_t expected = 0;                                // the bucket's count in the histogram
    };
    std::vector<need> needs;
};

template <class Known>
bool locate_ranks(const std::pmr::vector<std::uint64_t>& h, const std::vector<std::uint64_t>& ranks,
                  const std::pmr::vector<std::uint8_t>& stored, Known&& known, std::vector<double>& stats,
                  bucket_needs& out) {
    out.slot.assign(h.size(), -1);
    stats.assign(ranks.size(), 0.0);
    const rank_index index(h);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        std::uint64_t below = 0;
        const std::size_t b = index.bucket_of_rank(ranks[i], below);
        if (b == h.size()) return false;
        if (known(b, stats[i])) continue;
        if (!stored[b]) return false;
        if (out.slot[b] < 0) {
            out.slot[b] = static_cast<std::int32_t>(out.needs.size());
            out.needs.emplace_back(out.slot.get_allocator().resource());
            out.needs.back().expected = h[b];
        }
        out.needs[out.slot[b]].at.emplace_back(ranks[i] - below, i);
    }
    return true;
}

/// Drops `fakes` zeros from a need's values (masked-out lanes stored as +0).
inline void drop_fake_zeros(std::pmr::vector<double>& values, std::uint64_t fakes) {
    auto zeros = std::stable_partition(values.begin(), values.end(), [](double x) { return x != 0.0; });
    const std::uint64_t z = static_cast<std::uint64_t>(values.end() - zeros);
    values.resize(values.size() - static_cast<std::size_t>(std::min(z, fakes)));
}

/// Selects every need's offsets among its values into stats; false when a
/// need did not collect exactly its bucket's count (never expected: the
/// caller then takes the separate exact pass).
inline bool select_needs(bucket_needs& nd, std::vector<double>& stats) {
    for (auto& n : nd.needs) {
        if (n.values.size() != n.expected) return false;
        std::vector<std::uint64_t> offs;
        for (const auto& a : n.at) offs.push_back(a.first);
        std::sort(offs.begin(), offs.end());
        offs.erase(std::unique(offs.begin(), offs.end()), offs.end());
        multi_select(n.values.data(), 0, n.values.size(), offs.data(), 0, offs.size());
        for (const auto& a : n.at) stats[a.second] = n.values[a.first];
    }
    return true;
}

/// Where one table of needs receives its values: slot s + 1 is need s
/// (capacity: its bucket's count, plus `extra` fake zeros for need
/// `extra_slot`), slot 0 none. Only candidates of a needed bucket reach
/// put() (a branch taken for a few percent of them: a branch-free dump
/// slot made every candidate wait on the last one's counter).
struct need_sink {
    std::vector<double*> base;
    std::vector<std::uint64_t> cnt, cap;

    need_sink(bucket_needs& nd, std::int32_t extra_slot, std::uint64_t extra)
        : base(nd.needs.size() + 1), cnt(nd.needs.size() + 1, 0), cap(nd.needs.size() + 1, 0) {
        for (std::size_t s = 1; s < base.size(); ++s) {
            cap[s] = nd.needs[s - 1].expected + (static_cast<std::int32_t>(s - 1) == extra_slot ? extra : 0);
            nd.needs[s - 1].values.resize(cap[s]);
            base[s] = nd.needs[s - 1].values.data();
        }
    }
    void put(std::uint16_t s, double x) noexcept {
        if (cnt[s] < cap[s]) base[s][cnt[s]] = x;
        ++cnt[s];
    }
    /// False when a need got more values than its bucket holds (never expected).
    bool finish(bucket_needs& nd) const {
        for (std::size_t s = 1; s < base.size(); ++s) {
            if (cnt[s] > cap[s]) return false;
            nd.needs[s - 1].values.resize(cnt[s]);
        }
        return true;
    }
};

/// Copies the stored values of every need's bucket into its values, in one
/// scan: raw_d maps a raw bucket to its delta need + 1, raw_a a magnitude
/// (raw & 0x7fff) to its |delta| need + 1 (0: none).
inline bool gather_needs(const collected_deltas& c, const std::pmr::vector<std::uint16_t>& raw_d, bucket_needs& nd,
                         std::int32_t zd, const std::pmr::vector<std::uint16_t>& raw_a, bucket_needs& na,
                         std::int32_t za) {
    need_sink sd(nd, zd, c.fakes), sa(na, za, c.fakes);
    for (const auto& span : c.cand)
        for (std::size_t i = 0; i < span.second; ++i) {
            const double x = span.first[i];
            const std::uint32_t k = raw_bucket(x);
            if (const std::uint16_t s = raw_d[k]) sd.put(s, x);
            if (const std::uint16_t s = raw_a[k & 0x7fffu]) sa.put(s, std::fabs(x));
        }
    return sd.finish(nd) && sa.finish(na);
}

/// SPEC's delta and |delta| quantiles of the p.tokens tokens from what the
/// fused pass collected; false (p untouched) when a rank's bucket was not
/// stored.
inline bool resolve_panel_quantiles(panel& p, const collected_deltas& c, const panel_quantile_plan& plan) {
    const std::uint64_t P = delta_buckets::per_sign;
    const quantile_plan qd = plan_quantiles(p.tokens, default_delta_probs(), quantile_method::linear);
    const quantile_plan qa = plan_quantiles(p.tokens, default_abs_delta_probs(), quantile_method::linear);
    std::pmr::memory_resource* mr = c.hist.get_allocator().resource();
    const std::pmr::vector<std::uint64_t> ha = magnitude_histogram(c.hist);
    std::pmr::vector<std::uint8_t> stored_abs(P, mr);
    for (std::uint64_t x = 0; x < P; ++x) stored_abs[x] = plan.flag[P + x] & plan.flag[P - 1 - x];
    const bool zx = plan.zero_exact;
    bucket_needs nd(mr), na(mr);
    std::vector<double> sd, sa;
    auto known_d = [&](std::size_t b, double& v) {
        if (!zx || (b != delta_buckets::zero_pos && b != delta_buckets::zero_neg)) return false;
        v = b == delta_buckets::zero_neg ? -0.0 : 0.0;
        return true;
    };
    auto known_a = [&](std::size_t x, double& v) {
        v = 0.0;
        return zx && x == 0;
    };
    if (!locate_ranks(c.hist, qd.ranks, plan.flag, known_d, sd, nd)) return false;
    if (!locate_ranks(ha, qa.ranks, stored_abs, known_a, sa, na)) return false;
    std::pmr::vector<std::uint16_t> raw_d(delta_buckets::count, 0, mr), raw_a(P, 0, mr);
    for (std::uint32_t k = 0; k < delta_buckets::count; ++k)
        raw_d[k] = static_cast<std::uint16_t>(nd.slot[ordered_bucket(k)] + 1);
    for (std::uint64_t x = 0; x < P; ++x) raw_a[x] = static_cast<std::uint16_t>(na.slot[x] + 1);
    const std::int32_t zd = nd.slot[delta_buckets::zero_pos], za = na.slot[0];
    if (!gather_needs(c, raw_d, nd, zd, raw_a, na, za)) return false;
    if (c.fakes && nd.slot[delta_buckets::zero_pos] >= 0)
        drop_fake_zeros(nd.needs[nd.slot[delta_buckets::zero_pos]].values, c.fakes);
    if (c.fakes && na.slot[0] >= 0) drop_fake_zeros(na.needs[na.slot[0]].values, c.fakes);
    if (!select_needs(nd, sd) || !select_needs(na, sa)) return false;
    const auto id = [](double x) { return x; };
    const std::vector<double> vd = finish_quantiles(qd, sd, id), va = finish_quantiles(qa, sa, id);
    p.delta_quantiles.clear();
    p.abs_delta_quantiles.clear();
    for (std::size_t i = 0; i < vd.size(); ++i) p.delta_quantiles.emplace_back(default_delta_probs()[i], vd[i]);
    for (std::size_t i = 0; i < va.size(); ++i) p.abs_delta_quantiles.emplace_back(default_abs_delta_probs()[i], va[i]);
    return true;
}

/// The separate pass as panel_with_quantiles's fallback (add_panel_quantiles
/// with the caller's workspace).
template <class T, class M>
struct separate_quantiles {
    const paired_view<T, M>& v;
    quantile_workspace& ws;
    nonfinite_policy nonfinite;
    void add_to(panel& p) const { add_panel_quantiles(p, v, ws, nonfinite); }
    quantile_workspace& workspace() const { return ws; }
};

#if LOGRATIO_PANEL_F32
/// The sample of the float32 path: the same blocks as sample_delta_histogram,
/// keyed by c = float32(t - r) (quantiles/f32_intervals.hpp).
template <class T, class M>
f32_key_sample sample_f32_keys(const paired_view<T, M>& v) {
    const std::uint64_t B = delta_buckets::sample_block;
    const sample_geometry geo = sample_blocks(v.size());
    f32_key_sample s;
    constexpr std::uint64_t ahead = 16;  // blocks, as sample_delta_histogram
    for (std::uint64_t k = 0; k < geo.blocks; ++k) {
        if (k + ahead < geo.blocks) {
            const std::uint64_t p = (k + ahead) * geo.stride + geo.first;
            constexpr std::uint64_t line = 64 / sizeof(T);
            for (std::uint64_t q = p; q < p + B + line - 1; q += line) {
                const std::uint64_t at = std::min(q, p + B - 1);
                __builtin_prefetch(v.train() + at);
                __builtin_prefetch(v.rollout() + at);
            }
            if (v.has_mask()) __builtin_prefetch(v.mask() + p);
        }
        const std::uint64_t b = k * geo.stride + geo.first;
        for (std::uint64_t i = b; i < b + B; ++i) {
            const float t = static_cast<float>(to_double(v.train()[i])), r = static_cast<float>(to_double(v.rollout()[i]));
            s.add(t, r, v.counts(i) && (t - t == 0.0f) && (r - r == 0.0f));
        }
    }
    return s;
}

/// Room for `need` stored tokens in a part (the stored ones kept).
inline void reserve_f32_part(quantile_workspace::f32_part& p, std::size_t used, std::size_t need) {
    if (p.cap >= need) return;
    need = std::max(need, 2 * p.cap);
    huge_array<float> t = make_huge_array<float>(need), r = make_huge_array<float>(need);
    if (used) {
        std::memcpy(t.get(), p.t.get(), used * sizeof(float));
        std::memcpy(r.get(), p.r.get(), used * sizeof(float));
    }
    p.t = std::move(t);
    p.r = std::move(r);
    p.cap = need;
}

/// The fused pass of float32, bfloat16 and float16 inputs at AVX-512: the
/// panel's own float32 loop, and after each sequence the interval count of
/// quantiles/f32_intervals.hpp over the same tokens while they are in L1
/// (the kernel's after_sequence hook). The intervals come from
/// sample_f32_keys. False (out untouched) when the
/// sample gives no plan: the caller takes the bucket collector instead.
template <class V, class T, class M, class Separate>
bool panel_with_f32_intervals(const paired_view<T, M>& v, const panel_options& o, unsigned threads,
                              Separate& add_separately, panel& out) {
    const f32_key_sample sample = sample_f32_keys(v);
    f32_interval_set set;
    double share = 0;
    if (!plan_f32_intervals(sample, default_delta_probs(), default_abs_delta_probs(), set, share)) return false;
    const std::vector<std::uint64_t> cut = split_blocks(v);
    const std::size_t blocks = cut.size() - 1;
    const unsigned runs = block_runs(blocks, threads);
    quantile_workspace& ws = add_separately.workspace();
    if (ws.f32.size() < runs) ws.f32.resize(runs);
    std::vector<f32_interval_counts> cnt(runs);
    std::vector<panel_accumulator> acc(blocks);
    const bool omit = o.nonfinite == nonfinite_policy::omit;
    run_block_runs(blocks, runs, [&](unsigned k, std::size_t b0, std::size_t b1) {
        auto& part = ws.f32[k];
        const double run_tokens = static_cast<double>(v.sequence_begin(cut[b1]) - v.sequence_begin(cut[b0]));
        reserve_f32_part(part, 0, static_cast<std::size_t>(run_tokens * share * 1.25) + 4096);
        for (std::size_t b = b0; b < b1; ++b) {
            const std::uint64_t tb = v.sequence_begin(cut[b]), te = v.sequence_begin(cut[b + 1]);
            reserve_f32_part(part, cnt[k].used, cnt[k].used + static_cast<std::size_t>(te - tb) + 32);
            cnt[k].t = part.t.get();
            cnt[k].r = part.r.get();
            f32_interval_pass<T, M> pass(v, omit, set, cnt[k]);
            acc[b] = accumulate_range<V>(v, cut[b], cut[b + 1], o, pass);
            pass.finish();
        }
    });
    for (std::size_t b = 1; b < blocks; ++b) acc[0].merge(acc[b]);
    out = acc[0].finish();
    if (out.tokens == 0) return true;  // no token: no quantile keys, as add_panel_quantiles
    std::vector<const f32_interval_counts*> parts;
    for (const auto& c : cnt) parts.push_back(&c);
    std::vector<double> qd, qa;
    if (!resolve_f32_intervals<typename V::arch_type>(set, parts, out.tokens, default_delta_probs(),
                                                      default_abs_delta_probs(), qd, qa, &ws.f32_bins)) {
        add_separately.add_to(out);  // a rank outside its interval
        return true;
    }
    out.delta_quantiles.clear();
    out.abs_delta_quantiles.clear();
    for (std::size_t i = 0; i < qd.size(); ++i) out.delta_quantiles.emplace_back(default_delta_probs()[i], qd[i]);
    for (std::size_t i = 0; i < qa.size(); ++i) out.abs_delta_quantiles.emplace_back(default_abs_delta_probs()[i], qa[i]);
    return true;
}
#endif

/// The fused pass with lanes V (xsimd batch, or double: the one-lane
/// reference), its blocks on up to `threads` threads as accumulate_panel
/// splits them.
/// add_separately.add_to(p) adds the quantiles by the separate pass where the
/// fused one cannot give them (logratio::dispatch passes its own table's
/// entry, so this unit does not compile the separate pass once more).
template <class V, class T, class M, class Separate>
panel panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o, unsigned threads,
                           Separate&& add_separately) {
    constexpr std::size_t L = simd_ops<V>::size;
#if LOGRATIO_PANEL_F32
    if constexpr (panel_f32_path<V, T, M>) {
        panel out;
        if (v.size() < (std::uint64_t(1) << 32) && panel_with_f32_intervals<V>(v, o, threads, add_separately, out))
            return out;
    }
#endif
    quantile_workspace& ws = add_separately.workspace();
    // The panel's blocks as parallel_reduce cuts them (so the panel entries
    // are those of compute_panel at any thread count), in `runs` runs of
    // blocks, one per thread, each with its own collector.
    const std::vector<std::uint64_t> cut = split_blocks(v);
    const std::size_t blocks = cut.size() - 1;
    const unsigned runs = block_runs(blocks, threads);
    // Every histogram and map of this call, and the values of the buckets
    // that hold a rank, from one arena (huge pages, faulted in only where
    // written): 4.3 MiB of maps for one run, +0.5 MiB per further run,
    // ~1.6 MB of values at 2^25 tokens; any excess goes to the heap.
    const std::size_t arena = (std::size_t(12) << 20) + (std::size_t(1) << 19) * runs;
    std::pmr::monotonic_buffer_resource scratch(ws.scratch.reserve(arena), arena, std::pmr::new_delete_resource());
    const panel_quantile_plan plan = plan_panel_quantiles(v, &scratch);
    auto separate = [&] {
        panel p = parallel_reduce(v, threads, [&](std::uint64_t a, std::uint64_t b) {
                      return accumulate_range<V>(v, a, b, o);
                  }).finish();
        add_separately.add_to(p);
        return p;
    };
    // The fused kernel exists for the default four |delta| thresholds only
    // (one instantiation per view type, not two: compile time).
    // 32-bit histogram counters: views of 2^32 tokens and more take the separate pass.
    if (!plan.usable || o.abs_delta_thresholds.size() != 4 || v.size() >= (std::uint64_t(1) << 32))
        return separate();
    // A run's collector is fed by its blocks in turn (the quantiles are
    // exact whatever the order the values arrive in).
    if (ws.fused.size() < runs) ws.fused.resize(runs);
    std::vector<std::unique_ptr<quantile_collector<L>>> col;
    for (unsigned k = 0; k < runs; ++k) {
        const std::uint64_t b0 = cut[run_begin(blocks, runs, k)], b1 = cut[run_begin(blocks, runs, k + 1)];
        const double tokens = static_cast<double>(v.sequence_begin(b1) - v.sequence_begin(b0));
        col.push_back(std::make_unique<quantile_collector<L>>(
            plan, ws.fused[k], static_cast<std::size_t>(tokens * plan.stored_share * 1.25) + 4096, &scratch));
    }
    std::vector<panel_accumulator> acc(blocks);
    run_block_runs(blocks, runs, [&](unsigned k, std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) acc[b] = accumulate_range_impl<V, 4>(v, cut[b], cut[b + 1], o, *col[k]);
    });
    for (std::size_t b = 1; b < blocks; ++b) acc[0].merge(acc[b]);
    panel p = acc[0].finish();
    if (p.tokens == 0) return p;  // no token: no quantile keys, as add_panel_quantiles
    collected_deltas c(&scratch);
    c.hist.assign(delta_buckets::count, 0);
    std::uint64_t lanes = 0;
    for (const auto& qp : col) {
        const auto& q = *qp;
        for (std::uint32_t k = 0; k < delta_buckets::count; ++k)
            for (std::size_t j = 0; j < quantile_collector<L>::copies; ++j)
                c.hist[ordered_bucket(k)] += q.hist[k * quantile_collector<L>::copies + j];
        c.cand.emplace_back(q.cand, q.used);
        lanes += q.lanes;
    }
    c.fakes = lanes - p.tokens;
    c.hist[delta_buckets::zero_pos] -= c.fakes;
    if (resolve_panel_quantiles(p, c, plan)) return p;
    add_separately.add_to(p);  // a rank outside the stored buckets
    return p;
}

}  // namespace detail

/// The panel and its exact quantiles (SPEC's delta_q*, abs_delta_q*) in one
/// pass over the tokens: the same numbers as compute_panel followed by
/// add_panel_quantiles, in little more than the time of compute_panel.
/// `ws` is scratch for the rare fallback.
template <class Arch = xsimd::default_arch, class T, class M>
panel compute_panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o, unsigned threads,
                                   quantile_workspace& ws) {
    return detail::panel_with_quantiles<xsimd::batch<double, Arch>>(
        v, o, threads, detail::separate_quantiles<T, M>{v, ws, o.nonfinite});
}
template <class Arch = xsimd::default_arch, class T, class M>
panel compute_panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    quantile_workspace ws;
    return compute_panel_with_quantiles<Arch>(v, o, threads, ws);
}

LOGRATIO_NAMESPACE_END
