#pragma once
// logratio::kernels -- the same calls as logratio::dispatch, for code that
// is built both with and without the compiled dispatch library (the CLI,
// the tests, a trainer's extension with an optional dependency):
//
//   #include <logratio/dispatch/kernels.hpp>
//   auto p = logratio::kernels::compute_panel(view, {}, threads);
//
// Linking logratio::dispatch defines LOGRATIO_WITH_DISPATCH=1 (an interface
// definition of the CMake target): the calls go to the CPU's widest level,
// chosen once at run time (LOGRATIO_SIMD forces one). Otherwise -- the
// sanitizer and fuzz builds, which do not build dispatch, or a non-x86 CPU
// -- they are the header-only kernels at the level this file is compiled
// for. Both give the same numbers: dispatch's levels are the same templates,
// tested against the scalar path.
//
// Views come with a byte (std::uint8_t) or float mask and int64 token ids
// (the instantiations dispatch holds).
#include <cstdint>
#include <string>
#include <vector>

#if LOGRATIO_WITH_DISPATCH
#include "dispatch.hpp"
#else
#include "../correction/correction.hpp"
#include "../doctor/diagnose.hpp"
#include "../logits/logits.hpp"
#include "../panel/mismatch_split.hpp"
#include "../panel/panel.hpp"
#include "../quantiles/panel_quantiles.hpp"
#include "../quantiles/quantiles.hpp"
#endif

LOGRATIO_NAMESPACE_BEGIN
namespace kernels {

#if LOGRATIO_WITH_DISPATCH
using dispatch::accumulate_panel;
using dispatch::accumulate_panel_range;
using dispatch::add_panel_quantiles;
using dispatch::compare_logits;
using dispatch::compute_mismatch_split;
using dispatch::compute_panel;
using dispatch::compute_panel_with_quantiles;
using dispatch::correct;
using dispatch::diagnose;
using dispatch::quantiles;
/// True: the calls run through logratio::dispatch.
constexpr bool with_dispatch = true;
/// The SIMD level the calls run ("avx512", "avx2", "sse2", "scalar").
inline const char* simd_level() { return dispatch::simd_level(); }
/// The levels this CPU can run (LOGRATIO_SIMD's choices).
inline std::vector<std::string> simd_levels() { return dispatch::available_simd_levels(); }
#else
constexpr bool with_dispatch = false;
template <class T, class M>
panel_accumulator accumulate_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return logratio::accumulate_panel(v, o, threads);
}
template <class T, class M>
panel compute_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return logratio::compute_panel(v, o, threads);
}
template <class T, class M>
panel_accumulator accumulate_panel_range(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                         const panel_options& o = {}) {
    return logratio::accumulate_panel_range(v, first, last, o);
}
template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, nonfinite_policy nf = nonfinite_policy::raise) {
    logratio::add_panel_quantiles(p, v, nf);
}
template <class T, class M>
panel compute_panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return logratio::compute_panel_with_quantiles(v, o, threads);
}
template <class T, class M>
mismatch_split compute_mismatch_split(const paired_view<T, M>& v, const T* old, const panel_options& o = {},
                                      unsigned threads = 1) {
    return logratio::compute_mismatch_split(v, old, o, threads);
}
template <class T, class M>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, float* weights,
                          std::uint8_t* mask, unsigned threads = 1) {
    return logratio::correct(v, o, weights, mask, threads);
}
template <class T, class M>
std::vector<double> quantiles(const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,
                              const quantile_options& o = {}) {
    return logratio::quantiles(v, what, probs, o);
}
template <class T>
void compare_logits(const logits_view<T>& train, const logits_view<T>& rollout, const std::int64_t* tokens,
                    logits_row* out, const logits_options& o = {}, unsigned threads = 1) {
    logratio::compare_logits(train, rollout, tokens, out, o, threads);
}
template <class T, class M>
doctor::diagnosis diagnose(const paired_view<T, M>& v, const doctor::diagnose_options& o = {}) {
    return doctor::diagnose(v, o);
}
inline const char* simd_level() { return xsimd::default_arch::name(); }
inline std::vector<std::string> simd_levels() { return {xsimd::default_arch::name()}; }
#endif

}  // namespace kernels
LOGRATIO_NAMESPACE_END
