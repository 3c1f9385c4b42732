#pragma once
// Counting tokens against a few value intervals of delta and |delta| in
// float32 lanes: the classification of the fused panel-with-quantiles pass
// (panel/panel_quantiles.hpp) for float32, bfloat16 and float16 inputs.
//
// A token is classified by c = float32(t - r), the float32 difference of
// its two log-probs (both exact as floats). Subtraction is correctly
// rounded, so c is a monotone (non-decreasing) function of the exact
// delta = double(t) - double(r): c(d1) < c(d2) implies d1 < d2. Every token
// whose c lies below an interval is therefore smaller than every token
// whose c lies inside it, and a rank's position inside an interval is
// exact; only the stored tokens' exact deltas are ever computed (and |c|
// is monotone in |delta| in the same way).
//
// Keys are ordered int32s: key(c) = bits ^ ((bits >> 31) >>> 1) (negative
// floats reversed, -0 just below +0), |c| -> bits & 0x7fffffff. Interval j
// is [lo[j], hi[j]) in keys; per interval the pass counts the tokens at or
// above lo[j], and it stores (t, r) of every token inside any interval.
#include <cstdint>
#include <cstring>
#include <limits>

#include "../core/view.hpp"
#include "../detail/batches.hpp"  // LOGRATIO_ALWAYS_INLINE
#include "../detail/widen.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The fixed interval counts of the pass: one per default delta and |delta|
/// probability of the panel (unused ones are empty: lo = hi = INT32_MAX).
constexpr int f32_delta_intervals = 7, f32_abs_intervals = 5;

inline std::int32_t f32_order_key(float c) noexcept {
    std::int32_t b;
    std::memcpy(&b, &c, 4);
    return b ^ static_cast<std::int32_t>(static_cast<std::uint32_t>(b >> 31) >> 1);
}
inline std::int32_t f32_abs_key(float c) noexcept {
    std::int32_t b;
    std::memcpy(&b, &c, 4);
    return b & 0x7fffffff;
}

/// Buckets of the sample: the top 16 bits of a key. Delta keys (int32)
/// shifted into [0, 65536) in value order; |delta| keys in [0, 32768).
constexpr std::int64_t f32_key_half = 32768;
inline std::size_t f32_delta_bucket(std::int32_t o) noexcept { return static_cast<std::size_t>((o >> 16) + f32_key_half); }
inline std::size_t f32_abs_bucket(std::int32_t a) noexcept { return static_cast<std::size_t>(a >> 16); }

/// The intervals, in keys (from the sample: panel_quantiles.hpp).
struct f32_interval_set {
    std::int32_t lo_d[f32_delta_intervals], hi_d[f32_delta_intervals];
    std::int32_t lo_a[f32_abs_intervals], hi_a[f32_abs_intervals];
    f32_interval_set() {
        constexpr std::int32_t top = std::numeric_limits<std::int32_t>::max();
        for (int j = 0; j < f32_delta_intervals; ++j) lo_d[j] = hi_d[j] = top;
        for (int j = 0; j < f32_abs_intervals; ++j) lo_a[j] = hi_a[j] = top;
    }
    bool inside(float c) const noexcept {
        const std::int32_t o = f32_order_key(c), a = f32_abs_key(c);
        bool in = false;
        for (int j = 0; j < f32_delta_intervals; ++j) in |= o >= lo_d[j] && o < hi_d[j];
        for (int j = 0; j < f32_abs_intervals; ++j) in |= a >= lo_a[j] && a < hi_a[j];
        return in;
    }
};

/// What one or more passes counted and stored. The caller sizes t and r
/// (room for every token of a range, plus 16) before each pass.
struct f32_interval_counts {
    std::uint64_t ge_d[f32_delta_intervals] = {}, ge_a[f32_abs_intervals] = {};
    std::uint64_t tokens = 0;  // masked-in (and, when omitting, finite) tokens
    float* t = nullptr;        // stored train / rollout log-probs, [0, used)
    float* r = nullptr;
    std::size_t used = 0;
};

/// The one-token reference of the pass (and its tail).
template <class T, class M>
void count_intervals_scalar(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, bool omit,
                            const f32_interval_set& s, f32_interval_counts& out) {
    for (std::uint64_t i = b; i < e; ++i) {
        if (!v.counts(i)) continue;
        const float t = static_cast<float>(to_double(v.train()[i])), r = static_cast<float>(to_double(v.rollout()[i]));
        if (omit && !(t - t == 0.0f && r - r == 0.0f)) continue;
        const float c = t - r;
        const std::int32_t o = f32_order_key(c), a = f32_abs_key(c);
        ++out.tokens;
        for (int j = 0; j < f32_delta_intervals; ++j) out.ge_d[j] += o >= s.lo_d[j];
        for (int j = 0; j < f32_abs_intervals; ++j) out.ge_a[j] += a >= s.lo_a[j];
        out.t[out.used] = t;
        out.r[out.used] = r;
        out.used += s.inside(c);
    }
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
/// One side's search tables over the top 16 bits of the keys (the
/// intervals are whole 2^16-key buckets, so those bits decide), 32 lanes:
/// q = #{lo[j] <= key} (0..7, lo sorted, padded with INT16_MAX) in three
/// steps (lo[3], then lo[q + 1] of q in {0, 4}, then lo[q] of q in
/// {0, 2, 4, 6}), and hi of interval q - 1 (INT16_MIN for q = 0: none).
struct f32_search_side {
    __m512i l3, step2, step1, hi;
    template <int N>
    f32_search_side(const std::int32_t (&lo)[N], const std::int32_t (&up)[N]) {
        static_assert(N <= 7, "three steps search 7 bounds");
        constexpr std::int16_t top = std::numeric_limits<std::int16_t>::max();
        std::int16_t l[8], h[32] = {}, s2[32] = {}, s1[32] = {};
        for (int j = 0; j < 8; ++j) l[j] = j < N ? static_cast<std::int16_t>(lo[j] >> 16) : top;
        h[0] = std::numeric_limits<std::int16_t>::min();
        for (int q = 1; q < 8; ++q) h[q] = q <= N ? static_cast<std::int16_t>(up[q - 1] >> 16) : top;
        s2[0] = l[1];
        s2[4] = l[5];
        for (int q = 0; q < 8; q += 2) s1[q] = l[q];
        l3 = _mm512_set1_epi16(l[3]);
        step2 = _mm512_loadu_si512(s2);
        step1 = _mm512_loadu_si512(s1);
        hi = _mm512_loadu_si512(h);
    }
    /// The lanes of `on` whose key lies inside an interval; each lane's q.
    LOGRATIO_ALWAYS_INLINE __mmask32 classify(__m512i key, __mmask32 on, __m512i& q) const noexcept {
        q = _mm512_maskz_mov_epi16(_mm512_mask_cmpge_epi16_mask(on, key, l3), _mm512_set1_epi16(4));
        q = _mm512_mask_add_epi16(q, _mm512_mask_cmpge_epi16_mask(on, key, _mm512_permutexvar_epi16(q, step2)), q,
                                  _mm512_set1_epi16(2));
        q = _mm512_mask_add_epi16(q, _mm512_mask_cmpge_epi16_mask(on, key, _mm512_permutexvar_epi16(q, step1)), q,
                                  _mm512_set1_epi16(1));
        return _mm512_mask_cmplt_epi16_mask(on, key, _mm512_permutexvar_epi16(q, hi));
    }
};

/// Per-lane bin counts of one side: 4-bit counters in 16-bit lanes (bins
/// 0-3 in `low`, 4-7 in `high`), moved to 16-bit counters every 15 batches.
struct f32_bin_counts {
    __m512i low = _mm512_setzero_si512(), high = _mm512_setzero_si512();
    __m512i wide[8];
    f32_bin_counts() {
        for (auto& w : wide) w = _mm512_setzero_si512();
    }
    LOGRATIO_ALWAYS_INLINE void add(__m512i q, __mmask32 on) noexcept {
        const __m512i bit = _mm512_sllv_epi16(_mm512_set1_epi16(1), _mm512_slli_epi16(_mm512_and_si512(q, _mm512_set1_epi16(3)), 2));
        const __mmask32 up = _mm512_mask_test_epi16_mask(on, q, _mm512_set1_epi16(4));
        high = _mm512_mask_add_epi16(high, up, high, bit);
        low = _mm512_mask_add_epi16(low, on & ~up, low, bit);
    }
    void flush() noexcept {
        const __m512i f = _mm512_set1_epi16(15);
        for (int k = 0; k < 4; ++k) {
            wide[k] = _mm512_add_epi16(wide[k], _mm512_and_si512(_mm512_srli_epi16(low, static_cast<unsigned>(4 * k)), f));
            wide[k + 4] = _mm512_add_epi16(wide[k + 4], _mm512_and_si512(_mm512_srli_epi16(high, static_cast<unsigned>(4 * k)), f));
        }
        low = high = _mm512_setzero_si512();
    }
    /// Tokens per bin (the 16-bit counters hold up to 65535: at most 2^20
    /// tokens per call, 32768 per lane).
    void totals(std::uint64_t (&out)[8]) const noexcept {
        for (int k = 0; k < 8; ++k)
            out[k] = static_cast<std::uint32_t>(_mm512_reduce_add_epi32(_mm512_madd_epi16(wide[k], _mm512_set1_epi16(1))));
    }
};

/// The pass in 32 lanes, as the panel kernel's hook (after_sequence: the
/// tokens of one sequence just summed, still in L1; the panel's own float32
/// loop stays on, active = false): the float32 differences of two batches
/// of 16, their keys' top 16 bits packed into one vector; each side's bin
/// q (f32_search_side) counted per lane (f32_bin_counts); the inside lanes'
/// (t, r) compressed in registers and stored unconditionally (a branch on
/// "any lane inside" is taken for most batches, unpredictably). The caller
/// leaves room in out.t / out.r for every token of a sequence plus 32.
/// Measured, Zen 4 shared, 2^25 tokens (CPU time): one masked compare and
/// count per interval bound in 16 lanes ~4 cycles per token; this search
/// in 32-bit lanes ~2.1; in 16-bit lanes ~1.6 over data in L2, but ~30 ms
/// as a second pass over each 2^20-token block after the panel's (the
/// block no longer in cache), hence the per-sequence hook.
template <class T, class M>
class f32_interval_pass {
public:
    static constexpr bool active = false;
    f32_interval_pass(const paired_view<T, M>& v, bool omit, const f32_interval_set& s, f32_interval_counts& out)
        : v_(v), omit_(omit), sd_(s.lo_d, s.hi_d), sa_(s.lo_a, s.hi_a), out_(&out) {}
    template <class V>
    void add(const V&, const V&) noexcept {}
    template <class F>
    LOGRATIO_ALWAYS_INLINE void for_blocks(std::uint64_t b, std::uint64_t e, F&& f) {
        f(b, e);
    }
    void after_sequence(std::uint64_t b, std::uint64_t e) noexcept { run(b, e); }
    /// Adds the counts into out (call once, after the last sequence).
    void finish() noexcept {
        cd_.flush();
        ca_.flush();
        drain();
        std::uint64_t above = 0;  // bins -> counts at or above each lower bound
        for (int q = 7; q >= 1; --q) {
            above += hd_[q];
            if (q - 1 < f32_delta_intervals) out_->ge_d[q - 1] += above;
        }
        out_->tokens += above + hd_[0];
        above = 0;
        for (int q = 7; q >= 1; --q) {
            above += ha_[q];
            if (q - 1 < f32_abs_intervals) out_->ge_a[q - 1] += above;
        }
    }

private:
    void drain() noexcept {
        std::uint64_t d[8], a[8];
        cd_.totals(d);
        ca_.totals(a);
        for (int q = 0; q < 8; ++q) hd_[q] += d[q], ha_[q] += a[q];
        for (auto& w : cd_.wide) w = _mm512_setzero_si512();
        for (auto& w : ca_.wide) w = _mm512_setzero_si512();
        flushes_ = 0;
    }
    void run(std::uint64_t b, std::uint64_t e) noexcept {
        // locals, not members, in the loop: the float stores may alias
        // the __m512i members (may_alias), which would be reloaded per batch
        f32_bin_counts cd = cd_, ca = ca_;
        const f32_search_side sd = sd_, sa = sa_;
        alignas(64) std::int16_t pick[32];  // the high word of each 32-bit lane of two vectors, in lane order
        for (int k = 0; k < 32; ++k) pick[k] = static_cast<std::int16_t>(2 * k + 1);
        const __m512i high_words = _mm512_load_si512(pick), magnitude = _mm512_set1_epi16(0x7fff);
        float* pt = out_->t + out_->used;
        float* pr = out_->r + out_->used;
        const T* tr = v_.train();
        const T* ro = v_.rollout();
        const M* mk = v_.mask();
        const auto lanes_at = [e](std::uint64_t i) {
            return i + 16 <= e ? __mmask16(0xffff) : i >= e ? __mmask16(0) : static_cast<__mmask16>((1u << (e - i)) - 1);
        };
        int since = since_flush_;
        for (std::uint64_t i = b; i < e; i += 32) {
            const __mmask16 l0 = lanes_at(i), l1 = lanes_at(i + 16);
            const __m512 t0 = widen16(tr + i, l0), r0 = widen16(ro + i, l0);
            const __m512 t1 = widen16(tr + i + 16, l1), r1 = widen16(ro + i + 16, l1);
            __mmask16 on0 = mk ? mask16(mk + i, l0) : l0, on1 = mk ? mask16(mk + i + 16, l1) : l1;
            if (omit_) {
                const __m512 z = _mm512_setzero_ps();
                on0 = _mm512_mask_cmp_ps_mask(on0, _mm512_sub_ps(t0, t0), z, _CMP_EQ_OQ);
                on0 = _mm512_mask_cmp_ps_mask(on0, _mm512_sub_ps(r0, r0), z, _CMP_EQ_OQ);
                on1 = _mm512_mask_cmp_ps_mask(on1, _mm512_sub_ps(t1, t1), z, _CMP_EQ_OQ);
                on1 = _mm512_mask_cmp_ps_mask(on1, _mm512_sub_ps(r1, r1), z, _CMP_EQ_OQ);
            }
            const __mmask32 on = _mm512_kunpackw(on1, on0);
            const __m512i raw = _mm512_permutex2var_epi16(_mm512_castps_si512(_mm512_sub_ps(t0, r0)), high_words,
                                                          _mm512_castps_si512(_mm512_sub_ps(t1, r1)));
            const __m512i o = _mm512_xor_si512(raw, _mm512_srli_epi16(_mm512_srai_epi16(raw, 15), 1));
            const __m512i a = _mm512_and_si512(raw, magnitude);
            __m512i qd, qa;
            const __mmask32 in = sd.classify(o, on, qd) | sa.classify(a, on, qa);
            cd.add(qd, on);
            ca.add(qa, on);
            const __mmask16 in0 = static_cast<__mmask16>(in), in1 = static_cast<__mmask16>(in >> 16);
            _mm512_storeu_ps(pt, _mm512_maskz_compress_ps(in0, t0));
            _mm512_storeu_ps(pr, _mm512_maskz_compress_ps(in0, r0));
            const unsigned n0 = static_cast<unsigned>(__builtin_popcount(in0));
            _mm512_storeu_ps(pt + n0, _mm512_maskz_compress_ps(in1, t1));
            _mm512_storeu_ps(pr + n0, _mm512_maskz_compress_ps(in1, r1));
            const unsigned n = n0 + static_cast<unsigned>(__builtin_popcount(in1));
            pt += n;
            pr += n;
            if (++since == 15) {  // 4-bit counters: at most 15 batches
                cd.flush();
                ca.flush();
                since = 0;
                if (++flushes_ == 4000) {  // 16-bit counters: at most 4000 * 15 per lane
                    cd_ = cd, ca_ = ca;
                    drain();
                    cd = cd_, ca = ca_;
                }
            }
        }
        since_flush_ = since;
        cd_ = cd, ca_ = ca;
        out_->used = static_cast<std::size_t>(pt - out_->t);
    }

    const paired_view<T, M>& v_;
    bool omit_;
    f32_search_side sd_, sa_;
    f32_bin_counts cd_, ca_;
    f32_interval_counts* out_;
    std::uint64_t hd_[8] = {}, ha_[8] = {};
    int since_flush_ = 0, flushes_ = 0;
};

/// The pass over tokens [b, e) as one sequence.
template <class T, class M>
void count_intervals_avx512(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e, bool omit,
                            const f32_interval_set& s, f32_interval_counts& out) {
    f32_interval_pass<T, M> pass(v, omit, s, out);
    pass.after_sequence(b, e);
    pass.finish();
}
#endif

}  // namespace detail
LOGRATIO_NAMESPACE_END
