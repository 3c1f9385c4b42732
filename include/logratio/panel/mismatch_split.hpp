#pragma once
// Numeric mismatch vs policy lag. In asynchronous training the rollout
// engine samples with stale weights theta_old, so delta = l_T(theta) - l_E
// mixes two effects. With the trainer's log-probs under the rollout's own
// weights, l_T(theta_old) ("old_logprobs"), each token splits exactly:
//
//   total   l_T(theta)     - l_E(theta_old)
//   numeric l_T(theta_old) - l_E(theta_old)   kernels, precision, reduction order
//   lag     l_T(theta)     - l_T(theta_old)   staleness of the rollout weights
//
// (total = numeric + lag token by token). Each part gets the panel's
// delta_mean, delta_abs_mean, delta_std and kl_k3 (SPEC formulas, same
// masked-in tokens). A large numeric part says: fix kernels; a large lag
// part says: reduce staleness.
#include "panel.hpp"
#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN

struct mismatch_part {
    double delta_mean = 0, delta_abs_mean = 0, delta_std = 0, kl_k3 = 0;
};

struct mismatch_split {
    std::uint64_t tokens = 0;
    mismatch_part total, numeric, lag;
};

namespace detail {
inline mismatch_part part_of(const panel& p) { return {p.delta_mean, p.delta_abs_mean, p.delta_std, p.kl_k3}; }
}  // namespace detail

/// v pairs (train = l_T(theta), rollout = l_E); `old_logprobs` has
/// v.size() entries in v's layout. Three panel passes (one per part).
template <class Arch = xsimd::default_arch, class T, class M>
mismatch_split compute_mismatch_split(const paired_view<T, M>& v, const T* old_logprobs, const panel_options& o = {},
                                      unsigned threads = 1) {
    const panel total = compute_panel<Arch>(v, o, threads);
    const panel numeric = compute_panel<Arch>(v.with_arrays(old_logprobs, v.rollout()), o, threads);
    const panel lag = compute_panel<Arch>(v.with_arrays(v.train(), old_logprobs), o, threads);
    mismatch_split s;
    s.tokens = total.tokens;
    s.total = detail::part_of(total);
    s.numeric = detail::part_of(numeric);
    s.lag = detail::part_of(lag);
    return s;
}

LOGRATIO_NAMESPACE_END
