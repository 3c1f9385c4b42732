#pragma once
// The resolution bins of the stored tokens (f32_interval_select.hpp's
// f32_bins), in SIMD lanes: per stored token (t, r), the flat bin of its
// delta key and of its |delta| key, packed as bin_d | bin_a << 16 (both
// below 2^15: at most 8 and 6 slots of 4096 bins). The one-token reference
// is stored_bin_pair_scalar (the slot tables of f32_bins); the lane version
// finds the slot by comparing the key with each interval's first and last
// key (the intervals are whole 2^16-key buckets, so both agree key for key,
// NaN and Inf keys included: tests/test_quantiles_f32.cpp checks every
// instruction set the machine has). Measured (Zen 4 shared, 2^25 bench
// tokens, 1.5 M stored, CPU time): the two scalar scans of the resolution,
// keys and slot lookups per token in each, 20.6 ms; these bins computed once
// per 1024-token block in L1, then the scalar histogram increments: see
// bench/FLOORS.md.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "../core/view.hpp"
#include "../detail/batches.hpp"
#include "../detail/widen.hpp"
#include "f32_intervals.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// One side's intervals as a bucket -> interval map (the intervals are
/// whole buckets) and, per interval, 4096 bins of keys: bin (key - lo) >>
/// shift. The resolution histograms the stored tokens' bins, then selects
/// among the values of the bins that hold a rank only (an nth_element over
/// a whole interval, 1-2% of the tokens, cost more than the counting pass).
template <int N>
struct f32_bins {
    static constexpr std::size_t bins = 4096;
    std::vector<std::uint8_t> slot;  // bucket -> interval + 1 (0: none)
    // by slot: slot 0 is a dump bin (no branch on "inside an interval":
    // about half the stored tokens are, unpredictably)
    std::int32_t lo[N + 1];
    int shift[N + 1];
    // the first and last key of each slot's interval (first > last: empty),
    // for the lane search of stored_bin_pairs
    std::int32_t first[N + 1], last[N + 1];
    std::vector<std::uint32_t> hist = std::vector<std::uint32_t>((N + 1) * bins, 0);  // [slot][bin]
    std::vector<std::uint8_t> wanted = std::vector<std::uint8_t>((N + 1) * bins, 0);

    f32_bins(const std::int32_t (&l)[N], const std::int32_t (&h)[N], std::size_t buckets, std::int64_t base)
        : slot(buckets, 0) {
        lo[0] = std::numeric_limits<std::int32_t>::min();
        shift[0] = 20;  // slot 0's keys spread over its bins: one dump counter made a chain of increments
        first[0] = 1, last[0] = 0;
        for (int j = 0; j < N; ++j) {
            lo[j + 1] = l[j];
            const std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(h[j]) - l[j]);
            shift[j + 1] = 0;
            // hi = INT32_MAX is a clamp (the top bucket's keys, INT32_MAX included) or an empty slot
            first[j + 1] = h[j] > l[j] ? l[j] : 1;
            last[j + 1] = h[j] > l[j] ? (h[j] == std::numeric_limits<std::int32_t>::max() ? h[j] : h[j] - 1) : 0;
            while ((span >> shift[j + 1]) >= bins) ++shift[j + 1];
            for (std::int64_t k = l[j]; k < h[j]; k += 1 << 16)
                slot[static_cast<std::size_t>((k - base) >> 16)] = static_cast<std::uint8_t>(j + 1);
        }
    }
    /// The flat bin of a key of slot s ([s * bins, (s + 1) * bins); interval s - 1).
    std::size_t bin(std::uint8_t s, std::int32_t key) const noexcept {
        return static_cast<std::size_t>(s) * bins +
               static_cast<std::size_t>(static_cast<std::uint64_t>(static_cast<std::int64_t>(key) - lo[s]) >> shift[s]);
    }
};

/// The "instruction set" of the one-token reference (stored_bin_pairs<scalar_bins>).
struct scalar_bins {};

template <int ND, int NA>
inline std::uint32_t stored_bin_pair_scalar(float t, float r, const f32_bins<ND>& bd, const f32_bins<NA>& ba) noexcept {
    const float c = t - r;
    const std::int32_t o = f32_order_key(c), a = f32_abs_key(c);
    const std::size_t fd = bd.bin(bd.slot[f32_delta_bucket(o)], o), fa = ba.bin(ba.slot[f32_abs_bucket(a)], a);
    return static_cast<std::uint32_t>(fd) | static_cast<std::uint32_t>(fa) << 16;
}

/// x >> s lane by lane (logical): xsimd 8.1 has no AVX-512 variable shift
/// (its batch >> batch falls back to a scalar loop there).
template <class A>
LOGRATIO_ALWAYS_INLINE inline xsimd::batch<std::uint32_t, A> shift_right_lanes(const xsimd::batch<std::uint32_t, A>& x,
                                                                               const xsimd::batch<std::uint32_t, A>& s) noexcept {
#if LOGRATIO_X86
    if constexpr (std::is_base_of<xsimd::avx512f, A>::value) return _mm512_srlv_epi32(x, s);
    else if constexpr (std::is_base_of<xsimd::avx2, A>::value) return _mm256_srlv_epi32(x, s);
    else
#endif
        return x >> s;
}

/// t[idx] lane by lane (idx below the lane count; AVX2 and AVX-512 only).
template <class A>
LOGRATIO_ALWAYS_INLINE inline xsimd::batch<std::int32_t, A> table_lanes(const xsimd::batch<std::int32_t, A>& idx,
                                                                        const xsimd::batch<std::int32_t, A>& t) noexcept {
#if LOGRATIO_X86
    if constexpr (std::is_base_of<xsimd::avx512f, A>::value) return _mm512_permutexvar_epi32(idx, t);
    else if constexpr (std::is_base_of<xsimd::avx2, A>::value) return _mm256_permutevar8x32_epi32(t, idx);
    else
#endif
        return idx;  // not reached (side_lanes::tables)
}

/// One side's slots as lane constants, built once per call (the bounds
/// re-read from memory per batch cost as much as the search: the stores of
/// the packed bins may alias them): slot j + 1 where first[j] <= key <=
/// last[j] (the non-empty intervals only), else slot 0 (the dump slot).
template <class A, int N>
struct side_lanes {
    using ib = xsimd::batch<std::int32_t, A>;
    using ub = xsimd::batch<std::uint32_t, A>;
    ib first[N], last[N], lo[N], shift[N], base[N];
    ib lo0, shift0;
    int k = 0;  // the non-empty intervals
    explicit side_lanes(const f32_bins<N>& b) : lo0(b.lo[0]), shift0(b.shift[0]) {
        for (int j = 1; j <= N; ++j) {
            if (b.first[j] > b.last[j]) continue;
            first[k] = ib(b.first[j]), last[k] = ib(b.last[j]), lo[k] = ib(b.lo[j]), shift[k] = ib(b.shift[j]);
            base[k] = ib(static_cast<std::int32_t>(j * f32_bins<N>::bins));
            ++k;
        }
        if constexpr (tables) fill_tables(b);
    }
    // by slot index (0: the dump slot, j + 1: non-empty interval j), for
    // table_lanes where the lanes hold every slot
    ib lo_tab, shift_tab, base_tab;
#if LOGRATIO_X86
    static constexpr bool tables =
        ib::size >= N + 1 && (std::is_base_of<xsimd::avx2, A>::value || std::is_base_of<xsimd::avx512f, A>::value);
#else
    static constexpr bool tables = false;
#endif
    void fill_tables(const f32_bins<N>& b) noexcept {
        alignas(64) std::int32_t l[ib::size] = {}, s[ib::size] = {}, f[ib::size] = {};
        l[0] = b.lo[0], s[0] = b.shift[0];
        for (int j = 1, i = 1; j <= N; ++j) {
            if (b.first[j] > b.last[j]) continue;  // as the constructor's k
            l[i] = b.lo[j], s[i] = b.shift[j], f[i] = static_cast<std::int32_t>(j * f32_bins<N>::bins);
            ++i;
        }
        lo_tab = ib::load_aligned(l), shift_tab = ib::load_aligned(s), base_tab = ib::load_aligned(f);
    }
    /// The flat bins of a batch of keys.
    LOGRATIO_ALWAYS_INLINE ub bins(const ib& key) const noexcept {
        ib l = lo0, s = shift0, f(0);
        if constexpr (tables) {
            // one select per interval (of the slot index), then the slot's
            // constants by lane permutes: 3 vector operations per interval
            // fewer than selecting each constant
            ib idx(0);
            for (int j = 0; j < k; ++j) idx = xsimd::select((key >= first[j]) & (key <= last[j]), ib(j + 1), idx);
            l = table_lanes(idx, lo_tab), s = table_lanes(idx, shift_tab), f = table_lanes(idx, base_tab);
        } else {
            for (int j = 0; j < k; ++j) {
                const auto in = (key >= first[j]) & (key <= last[j]);
                l = xsimd::select(in, lo[j], l);
                s = xsimd::select(in, shift[j], s);
                f = xsimd::select(in, base[j], f);
            }
        }
        // key - lo wraps in the lanes (slot 0: lo = INT32_MIN), as the
        // reference's unsigned difference
        const ub off = xsimd::bitwise_cast<ub>(key - l);
        return xsimd::bitwise_cast<ub>(f) + shift_right_lanes<A>(off, xsimd::bitwise_cast<ub>(s));
    }
};

/// out[i] = the packed bins of stored token i of [0, n) (t, r: its log-probs).
template <class Arch, int ND, int NA>
void stored_bin_pairs(const float* t, const float* r, std::size_t n, const f32_bins<ND>& bd, const f32_bins<NA>& ba,
                      std::uint32_t* out) noexcept {
    std::size_t i = 0;
    if constexpr (!std::is_same<Arch, scalar_bins>::value) {
        using fb = xsimd::batch<float, Arch>;
        using ib = xsimd::batch<std::int32_t, Arch>;
        using ub = xsimd::batch<std::uint32_t, Arch>;
        constexpr std::size_t L = fb::size;
        const side_lanes<Arch, ND> sd(bd);
        const side_lanes<Arch, NA> sa(ba);
        for (; i + L <= n; i += L) {
            const fb c = fb::load_unaligned(t + i) - fb::load_unaligned(r + i);
            const ib bits = xsimd::bitwise_cast<ib>(c);
            // negative floats reversed: bits ^ (sign ? 0x7fffffff : 0), as f32_order_key
            const ib flip = xsimd::bitwise_cast<ib>(xsimd::bitwise_cast<ub>(bits >> 31) >> 1);
            const ub d = sd.bins(bits ^ flip), a = sa.bins(bits & ib(0x7fffffff));
            (d | (a << 16)).store_unaligned(out + i);
        }
    }
    for (; i < n; ++i) out[i] = stored_bin_pair_scalar(t[i], r[i], bd, ba);
}

/// Appends to `at` the positions i of [0, n) whose packed bins u[i] hold a
/// wanted delta bin (low half among wd) or |delta| bin (high half among
/// wa), in order: the resolution's scan 2 over the 5.6% stored tokens,
/// where a few hundred to a few thousand are wanted. The lanes compare 16
/// tokens with each wanted bin (~20 compares) where the scalar loop
/// (scalar_bins) took two table reads and a branch per token (perf: ~1.5 ms
/// of the 6.9 ms resolution at 1.5 M stored tokens).
template <class Arch>
void wanted_positions(const std::uint32_t* u, std::size_t n, const std::vector<std::uint32_t>& wd,
                      const std::vector<std::uint32_t>& wa, std::vector<std::uint32_t>& at) {
    const auto wanted = [&](std::uint32_t w) {
        bool hit = false;
        for (const std::uint32_t b : wd) hit |= (w & 0xffffu) == b;
        for (const std::uint32_t b : wa) hit |= (w >> 16) == b;
        return hit;
    };
    std::size_t i = 0;
    if constexpr (!std::is_same<Arch, scalar_bins>::value) {
        using ub = xsimd::batch<std::uint32_t, Arch>;
        constexpr std::size_t L = ub::size;
        for (; i + L <= n; i += L) {
            const ub w = ub::load_unaligned(u + i);
            const ub d = w & ub(0xffffu), a = w >> 16;
            auto hit = d == ub(0xffffffffu);  // all false: no bin is 2^32 - 1
            for (const std::uint32_t b : wd) hit = hit | (d == ub(b));
            for (const std::uint32_t b : wa) hit = hit | (a == ub(b));
            if (!xsimd::any(hit)) continue;  // most batches
            for (std::size_t k = i; k < i + L; ++k)
                if (wanted(u[k])) at.push_back(static_cast<std::uint32_t>(k));
        }
    }
    for (; i < n; ++i)
        if (wanted(u[i])) at.push_back(static_cast<std::uint32_t>(i));
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
