#pragma once
// Importance-sampling correction of the train-inference mismatch, as verl's
// rollout correction defines it: truncated IS weights (TIS) at token,
// sequence or geometric level, rejection masks (MIS, IcePop bands, Geo-RS)
// from k1/k2/k3 statistics per token or per sequence, a veto, and verl's
// metrics -- in one fused pass that writes into caller buffers.
//
//   correction_options o;
//   o.is = is_options{is_level::token, 2.0};
//   o.rejection = parse_rejection("token_k1,seq_max_k2", "0.999_1.001,0.01");
//   std::vector<float> w(v.size());
//   std::vector<std::uint8_t> keep(v.size());
//   correction_result r = correct(v, o, w.data(), keep.data());
//   for (auto& [name, value] : correction_entries(r, "rollout_corr/")) log(name, value);
//
// Outputs (view.size() entries, the view's layout): the IS weight of each
// token (0 on masked-out tokens; not zeroed on rejected tokens, as verl),
// and the response mask with rejections and veto applied (1 = keep).
// Formulas: correction_accumulator.hpp. Kernel: detail/correction_kernel.hpp.
// With correction_options::flavour slime or trl (and a named mode), the
// weights, mask and metrics are that framework's: flavour.hpp.
// A masked-in NaN/Inf log-prob raises value_error (naming the tensor,
// sequence and position), or with correction_options::nonfinite = omit is
// a masked-out token (weight 0, mask 0, in no metric), counted in
// correction_result::nonfinite_tokens.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "correction_accumulator.hpp"
#include "correction_options.hpp"
#include "detail/correction_kernel.hpp"
#include "../detail/parallel.hpp"
#include "flavour.hpp"
#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN

namespace detail {
inline void require_verl(const correction_options& o) {
    if (o.flavour != framework::verl)
        throw argument_error(concat("flavour ", framework_name(o.flavour),
                           ": its metrics are means over the whole batch; use correct(), not correct_range()"));
}
}  // namespace detail

/// The correction over sequences [first, last) of v: writes their weights
/// and mask entries (before batch normalisation) and returns the mergeable
/// metric state. The unit of chunked, parallel and multi-rank work: merge
/// the states, then divide the weights by the merged weight_scale()
/// (scale_weights) and finish().
template <class Arch = xsimd::default_arch, class T, class M, class W = float>
correction_accumulator correct_range(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                     const correction_options& o, W* weights, std::uint8_t* mask) {
    if (first > last || last > v.num_sequences())
        throw argument_error(detail::concat("correct_range: sequence range [", first, ", ", last, ") is outside [0, ",
                                         v.num_sequences(), ")"));
    o.validate();
    detail::require_verl(o);
    return detail::correct_range_impl<xsimd::batch<double, Arch>, W>(v, first, last, o,
                                                                     detail::correction_outputs<W>{weights, mask});
}

/// Scalar reference path (one lane, the same kernel); the SIMD path is
/// tested against it.
template <class T, class M, class W = float>
correction_accumulator correct_range_scalar(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                            const correction_options& o, W* weights, std::uint8_t* mask) {
    o.validate();
    detail::require_verl(o);
    return detail::correct_range_impl<double, W>(v, first, last, o, detail::correction_outputs<W>{weights, mask});
}

/// Divides weights [first, last) by `scale` (batch normalisation).
template <class W>
void scale_weights(W* weights, std::uint64_t first, std::uint64_t last, double scale) noexcept {
    if (weights == nullptr || scale == 1.0) return;
    for (std::uint64_t i = first; i < last; ++i) weights[i] = static_cast<W>(static_cast<double>(weights[i]) / scale);
}

/// The whole correction of a batch: weights (may be null if not wanted, or
/// without IS), mask (may be null), both of v.size() entries; `threads`
/// splits the sequences. Returns the metrics; the weights are final
/// (batch-normalised if asked).
template <class Arch = xsimd::default_arch, class T, class M, class W = float>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, W* weights, std::uint8_t* mask,
                          unsigned threads = 1);

namespace detail {
template <class Lane, class T, class M, class W>
correction_result correct_lanes(const paired_view<T, M>& v, const correction_options& o, W* weights,
                                std::uint8_t* mask, unsigned threads);

/// The flavours' pass over v with the NaN/Inf tokens the kernel omitted
/// masked out: the same log-probs under `keep` (the kernel's 0/1 mask without
/// rejection: v's mask less those tokens).
template <class T, class M, class W>
metric_entries framework_pass_kept(const paired_view<T, M>& v, const framework_mode& m, W* weights,
                                   std::uint8_t* mask) {
    const std::vector<std::uint8_t> keep(mask, mask + v.size());
    return framework_pass(v.with_mask(keep.data()), m, weights, mask);
}

/// slime / trl: the kernel validates the input and writes the 0/1 mask (no IS,
/// no rejection), then framework_pass() writes the flavour's weights and mask.
template <class Lane, class T, class M, class W>
correction_result correct_flavoured(const paired_view<T, M>& v, const correction_options& o, W* weights,
                                    std::uint8_t* mask, unsigned threads) {
    correction_options k;
    k.positive_tolerance = o.positive_tolerance;
    k.nonfinite = o.nonfinite;
    std::vector<W> own_w(weights ? 0 : v.size());
    std::vector<std::uint8_t> own_m(mask ? 0 : v.size());
    if (!weights) weights = own_w.data();
    if (!mask) mask = own_m.data();
    correction_result r = correct_lanes<Lane>(v, k, static_cast<W*>(nullptr), mask, threads);
    framework_mode m;
    if (o.mode) m = *o.mode;
    r.flavour = o.flavour;
    r.framework_metrics =
        r.nonfinite_tokens ? framework_pass_kept(v, m, weights, mask) : framework_pass(v, m, weights, mask);
    return r;
}

/// correct() with the kernel's lanes `Lane`: xsimd::batch<double, Arch>, or
/// double for the scalar reference.
template <class Lane, class T, class M, class W>
correction_result correct_lanes(const paired_view<T, M>& v, const correction_options& o, W* weights,
                                std::uint8_t* mask, unsigned threads) {
    o.validate();
    if (o.flavour != framework::verl) return correct_flavoured<Lane>(v, o, weights, mask, threads);
    const correction_accumulator total = parallel_reduce(v, threads, [&](std::uint64_t first, std::uint64_t last) {
        return correct_range_impl<Lane, W>(v, first, last, o, correction_outputs<W>{weights, mask});
    });
    correction_result r = total.finish();
    if (weights && r.weight_scale != 1.0) {
        const double scale = r.weight_scale;
        // the weights rescaled in `threads` equal slices of the token range
        run_slices(v.sequence_begin(0), v.sequence_begin(v.num_sequences()), threads,
                   [&](std::uint64_t b, std::uint64_t e) { scale_weights(weights, b, e, scale); });
    }
    return r;
}
}  // namespace detail

template <class Arch, class T, class M, class W>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, W* weights, std::uint8_t* mask,
                          unsigned threads) {
    return detail::correct_lanes<xsimd::batch<double, Arch>>(v, o, weights, mask, threads);
}

/// correct() on the scalar reference path (one lane, the same kernel), every
/// flavour; the SIMD levels are tested against it.
template <class T, class M, class W = float>
correction_result correct_scalar(const paired_view<T, M>& v, const correction_options& o, W* weights,
                                 std::uint8_t* mask, unsigned threads = 1) {
    return detail::correct_lanes<double>(v, o, weights, mask, threads);
}

/// The same with containers (std::vector, std::span, ...) of v.size()
/// entries each.
template <class Arch = xsimd::default_arch, class T, class M, class CW, class CM>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, CW& weights, CM& mask,
                          unsigned threads = 1) {
    detail::check_size(weights, v.size(), "rollout_is_weights");
    detail::check_size(mask, v.size(), "response_mask");
    return correct<Arch>(v, o, std::data(weights), std::data(mask), threads);
}

LOGRATIO_NAMESPACE_END
