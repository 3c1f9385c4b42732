#pragma once
// The kernels the CLI runs, in one place. With logratio::dispatch in the
// build (LOGRATIO_CLI_DISPATCH=1, the default on x86-64): the CPU's widest
// SIMD level, chosen once at run time (LOGRATIO_SIMD=scalar|sse2|avx2|avx512
// forces one) -- one binary for every machine. Without it (the sanitizer
// and fuzz builds, which do not build dispatch; other CPUs): the
// header-only kernels at the level this file is compiled for. Both give the
// same numbers (dispatch's levels are tested against the scalar path).
//
// Views reach these with a byte (std::uint8_t) or float mask
// (io/panel_input.cpp converts other mask dtypes) and int64 token ids.
#include <cstdint>
#include <string>
#include <vector>

#if LOGRATIO_CLI_DISPATCH
#include <logratio/dispatch/dispatch.hpp>
#else
#include <logratio/correction/correction.hpp>
#include <logratio/doctor/diagnose.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel.hpp>
#include <logratio/quantiles/quantiles.hpp>
#endif

namespace logratio_cli {
namespace kernels {

#if LOGRATIO_CLI_DISPATCH
using logratio::dispatch::accumulate_panel_range;
using logratio::dispatch::add_panel_quantiles;
using logratio::dispatch::compare_logits;
using logratio::dispatch::compute_panel;
using logratio::dispatch::correct;
using logratio::dispatch::diagnose;
using logratio::dispatch::quantiles;
using logratio::dispatch::compute_mismatch_split;
/// The SIMD level the kernels run ("avx512", "avx2", "sse2", "scalar").
inline const char* simd_level() { return logratio::dispatch::simd_level(); }
/// The levels this CPU can run (LOGRATIO_SIMD's choices).
inline std::vector<std::string> simd_levels() { return logratio::dispatch::available_simd_levels(); }
#else
template <class T, class M>
logratio::panel compute_panel(const logratio::paired_view<T, M>& v, const logratio::panel_options& o,
                              unsigned threads) {
    return logratio::compute_panel(v, o, threads);
}
template <class T, class M>
logratio::panel_accumulator accumulate_panel_range(const logratio::paired_view<T, M>& v, std::uint64_t first,
                                                   std::uint64_t last, const logratio::panel_options& o) {
    return logratio::accumulate_panel_range(v, first, last, o);
}
template <class T, class M>
void add_panel_quantiles(logratio::panel& p, const logratio::paired_view<T, M>& v, logratio::nonfinite_policy nf) {
    logratio::add_panel_quantiles(p, v, nf);
}
template <class T, class M>
logratio::mismatch_split compute_mismatch_split(const logratio::paired_view<T, M>& v, const T* old,
                                        const logratio::panel_options& o, unsigned threads = 1) {
    return logratio::compute_mismatch_split(v, old, o, threads);
}
template <class T, class M>
logratio::correction_result correct(const logratio::paired_view<T, M>& v, const logratio::correction_options& o,
                                    float* weights, std::uint8_t* mask, unsigned threads) {
    return logratio::correct(v, o, weights, mask, threads);
}
template <class T, class M>
std::vector<double> quantiles(const logratio::paired_view<T, M>& v, logratio::quantile_of what,
                              const std::vector<double>& probs, const logratio::quantile_options& o) {
    return logratio::quantiles(v, what, probs, o);
}
template <class T>
void compare_logits(const logratio::logits_view<T>& train, const logratio::logits_view<T>& rollout,
                    const std::int64_t* tokens, logratio::logits_row* out, const logratio::logits_options& o,
                    unsigned threads) {
    logratio::compare_logits(train, rollout, tokens, out, o, threads);
}
template <class T, class M>
logratio::doctor::diagnosis diagnose(const logratio::paired_view<T, M>& v,
                                     const logratio::doctor::diagnose_options& o) {
    return logratio::doctor::diagnose(v, o);
}
inline const char* simd_level() { return xsimd::default_arch::name(); }
inline std::vector<std::string> simd_levels() { return {xsimd::default_arch::name()}; }
#endif

}  // namespace kernels
}  // namespace logratio_cli
