#pragma once
// The batch machinery every kernel shares (the panel, the correction, the
// quantiles, the doctor): memory is read once, each sequence walked one
// batch of lanes at a time (for_each_batch). On AVX2/AVX-512, f32/f64/bf16/
// f16 values and byte or float masks are widened straight from memory, with
// software prefetch; other types, and each sequence's tail, are staged
// through L1-resident double arrays (for_each_staged). The per-token terms
// the kernels compute from each batch are in token_terms.hpp; the bad-token
// guard (throw_bad_token, guard_sequence) names the first invalid token.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/limits.hpp"
#include "../core/nonfinite.hpp"
#include "../core/view.hpp"
#include "simd.hpp"
#include "widen.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define LOGRATIO_ALWAYS_INLINE __attribute__((always_inline))
#else
#define LOGRATIO_ALWAYS_INLINE
#endif

LOGRATIO_NAMESPACE_BEGIN
namespace detail {


constexpr std::size_t chunk_tokens = 512;

template <class V>
struct is_simd_batch {
    template <class T, class M>
    static constexpr bool direct = false;
    template <int Dummy>
    static constexpr bool avx512 = false;
};
template <class A>
struct is_simd_batch<xsimd::batch<double, A>> {
    template <class T, class M>
    static constexpr bool direct = direct_load<A, T, M>;
    template <int Dummy>
    static constexpr bool avx512 = is_avx512<A>;
};

struct alignas(64) chunk_buffers {
    double t[chunk_tokens];
    double r[chunk_tokens];
    double w[chunk_tokens];
};

/// Throws value_error for the first invalid masked-in token of [i0, i0+n) in
/// sequence s. Called only once the kernel has seen an invalid value there.
template <class T, class M>
[[noreturn]] void throw_bad_token(const paired_view<T, M>& v, std::uint64_t s, std::uint64_t i0, std::size_t n,
                                  nonfinite_policy nonfinite, double positive_tolerance) {
    const std::uint64_t base = v.sequence_begin(s);
    const bool padded = v.kind() == layout::padded;
    const char* seq_word = padded ? "row" : "sequence";
    const char* pos_word = padded ? "column" : "position";
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t i = i0 + k;
        if (!v.counts(i)) continue;
        const double vals[2] = {to_double(v.train()[i]), to_double(v.rollout()[i])};
        const char* names[2] = {"train_logprobs", "rollout_logprobs"};
        const bool finite = std::isfinite(vals[0]) && std::isfinite(vals[1]);
        if (!finite && nonfinite == nonfinite_policy::omit) continue;  // left out, not an error
        for (int a = 0; a < 2; ++a) {
            const double x = vals[a];
            if (std::isfinite(x) && x <= positive_tolerance) continue;
            const std::string what = std::isfinite(x) ? concat("positive log-prob ", x, " (> ", positive_tolerance, ")")
                                                      : concat("non-finite log-prob ", x);
            throw value_error(concat(names[a], ": ", what, " at ", seq_word, " ", s, ", ", pos_word, " ", i - base,
                                     " (flat index ", i, ")"),
                              names[a], s, i - base, x);
        }
    }
    throw value_error(concat("sequence ", s, ": the sum of its log-probs overflows a double"), "train_logprobs", s, 0,
                      0.0);
}

/// The bad-token guard of the SIMD kernels, once per sequence, without a
/// per-lane test: a NaN/Inf among the masked-in log-probs makes the sums of
/// l_T or l_E non-finite, a positive one raises the largest (`top`, lanes);
/// then the first bad token of sequence s is found and thrown.
template <class V, class T, class M>
LOGRATIO_ALWAYS_INLINE inline void guard_sequence(const paired_view<T, M>& v, std::uint64_t s, double sum_train,
                                                  double sum_rollout, const V& top, nonfinite_policy nonfinite,
                                                  double positive_tolerance) {
    if (std::isfinite(sum_train) && std::isfinite(sum_rollout) &&
        simd_ops<V>::none(top > simd_ops<V>::splat(positive_tolerance)))
        return;
    const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
    throw_bad_token(v, s, b, static_cast<std::size_t>(e - b), nonfinite, positive_tolerance);
}

/// Converts [i0, i0+n) of the three arrays into buf (plain conversion
/// loops the compiler vectorizes), zero-padded to `padded` entries with
/// weight 0. Validation and masking happen in the SIMD loop.
template <class T, class M>
void load_chunk(const paired_view<T, M>& v, std::uint64_t i0, std::size_t n, std::size_t padded,
                chunk_buffers& buf) noexcept {
    const T* tp = v.train() + i0;
    const T* rp = v.rollout() + i0;
    for (std::size_t k = 0; k < n; ++k) buf.t[k] = to_double(tp[k]);
    for (std::size_t k = 0; k < n; ++k) buf.r[k] = to_double(rp[k]);
    if (v.has_mask()) {
        const M* mp = v.mask() + i0;
        for (std::size_t k = 0; k < n; ++k) buf.w[k] = mask_on(mp[k]) ? 1.0 : 0.0;
    } else {
        for (std::size_t k = 0; k < n; ++k) buf.w[k] = 1.0;
    }
    for (std::size_t k = n; k < padded; ++k) buf.t[k] = buf.r[k] = buf.w[k] = 0.0;
}

#if LOGRATIO_X86
/// Software prefetch of the direct-load loops (for_each_batch, the
/// correction's short cut, the doctor's load), `prefetch_tokens` ahead of
/// token i, one prefetch per cache line of each array: i0 is where the
/// loop started (sequences start anywhere in a packed layout, so the
/// line test counts from there, not from token 0). Once per 64 tokens for
/// all three measured 10-14% slower panels and 25-50% slower corrections
/// on Zen 4: the hardware prefetcher did not fill the lines between. mp may
/// be null (no mask).
/// `Ahead` tokens instead: the panel's float32-lane loop (1024: 8% faster
/// than 2048 on Zen 4, the loop going through tokens twice as fast).
constexpr std::uint64_t prefetch_tokens = 2048;
template <std::uint64_t Ahead = prefetch_tokens, class T, class M>
LOGRATIO_ALWAYS_INLINE inline void prefetch_ahead(const T* tp, const T* rp, const M* mp, std::uint64_t i,
                                                  std::uint64_t i0) noexcept {
    if ((i - i0) % (64 / sizeof(T)) == 0) {
        __builtin_prefetch(tp + i + Ahead);
        __builtin_prefetch(rp + i + Ahead);
    }
    if (mp && (i - i0) % (64 / sizeof(M)) == 0) __builtin_prefetch(mp + i + Ahead);
}
#endif

/// Feeds tokens [b, e) of v to step(train, rollout, mask) one batch of
/// lanes at a time through the L1-resident staging buffer, the last batch
/// padded with masked-out lanes: the path of every token where the arch or
/// types have no widening loads, and of each sequence's tail.
template <class V, class T, class M, class F>
LOGRATIO_ALWAYS_INLINE inline void for_each_staged(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e,
                                                   chunk_buffers& buf, F&& step) {
    using ops = simd_ops<V>;
    constexpr std::size_t L = ops::size;
    const V zero = ops::splat(0.0);
    for (std::uint64_t i = b; i < e; i += chunk_tokens) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_tokens, e - i));
        const std::size_t np = (n + L - 1) / L * L;
        load_chunk(v, i, n, np, buf);
        for (std::size_t j = 0; j < np; j += L) step(ops::load(buf.t + j), ops::load(buf.r + j), ops::load(buf.w + j) != zero);
    }
}

#if LOGRATIO_X86
/// The one batch of L tokens at i straight from memory (the arch and types
/// have widening loads): one copy of `step`, where for_each_batch would
/// compile two (its direct and staged loops) for a single batch.
template <class V, class T, class M, class F>
LOGRATIO_ALWAYS_INLINE inline void direct_batch(const paired_view<T, M>& v, std::uint64_t i, F&& step) {
    using A = typename V::arch_type;
    using ops = simd_ops<V>;
    const M* mp = v.mask();
    const auto all = ops::splat(1.0) != ops::splat(0.0);
    step(widen<A>(v.train() + i), widen<A>(v.rollout() + i), mp ? widen_mask<A>(mp + i) : all);
}
#endif

/// Feeds tokens [b, e) of v to step(train, rollout, mask) one batch of
/// lanes at a time: straight from memory with widening loads (and software
/// prefetch a few KiB ahead: the consumers are compute-heavy, so the hardware
/// prefetcher alone leaves memory idle) where the arch and types allow,
/// staged through `buf` otherwise and for the tail (masked-out padding).
template <class V, class T, class M, class F>
LOGRATIO_ALWAYS_INLINE inline void for_each_batch(const paired_view<T, M>& v, std::uint64_t b, std::uint64_t e,
                                                  chunk_buffers& buf, F&& step) {
    std::uint64_t i = b;
#if LOGRATIO_X86
    if constexpr (is_simd_batch<V>::template direct<T, M>) {
        constexpr std::size_t L = simd_ops<V>::size;
        // One loop, the mask's presence tested per batch (direct_batch:
        // predicted, and the loop too large for the compiler to unswitch):
        // one copy of `step` for views with and without a mask.
        for (; i + L <= e; i += L) {
            prefetch_ahead(v.train(), v.rollout(), v.mask(), i, b);
            direct_batch<V>(v, i, step);
        }
    }
#endif
    for_each_staged<V>(v, i, e, buf, step);
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
