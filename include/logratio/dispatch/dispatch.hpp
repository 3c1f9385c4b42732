#pragma once
// logratio::dispatch -- the kernels at the widest SIMD level the CPU runs,
// chosen once at run time, for a consumer compiled without any -march flag
// (a trainer's PyTorch extension, the Python module).
//
//   #include <logratio/dispatch/dispatch.hpp>       // link logratio::dispatch
//   auto p = logratio::dispatch::compute_panel(view);  // AVX-512, AVX2 or SSE2
//   std::puts(logratio::dispatch::simd_level());       // "avx512"
//
// The calls have the shape of the header-only ones (panel.hpp,
// correction.hpp, quantiles.hpp, mismatch_split.hpp, logits.hpp,
// doctor/diagnose.hpp) without the
// Arch template parameter. Element types: float, double, float16, bfloat16;
// masks: std::uint8_t (also bool/int8 bytes) or float; token ids: int64.
//
// Why a compiled STATIC library (built with -fPIC, so it links into shared
// objects such as Python extensions) and not per-level sources compiled in
// the consumer's build: the per-level code must be compiled with that
// level's flags and then have every symbol except one entry point made
// local (see src/dispatch/CMakeLists.txt and the ODR note in
// kernel_table.hpp), a link step a consumer's build should not have to
// reproduce. A static archive keeps deployment a single file with no
// run-time search path, and a consumer pays the kernels' compile time once.
//
// Level selection: LOGRATIO_SIMD=scalar|sse2|avx2|avx512 in the environment
// forces a level (the first call reads it; an unknown level, or one the CPU
// cannot run, is an error naming the levels available); otherwise the widest
// level the CPU and OS support. set_simd_level() changes it later (tests).
#include <cstdint>
#include <string>
#include <vector>

#include "../correction/correction.hpp"
#include "../doctor/diagnose.hpp"
#include "../logits/logits.hpp"
#include "../panel/mismatch_split.hpp"
#include "../panel/panel.hpp"
#include "../quantiles/quantiles.hpp"
#include "simd_level.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace dispatch {


template <class T, class M>
panel_accumulator accumulate_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1);
/// Sequences [first, last) only (panel.hpp's accumulate_panel_range): the
/// unit of chunked work, e.g. panel_stream::add_accumulated.
template <class T, class M>
panel_accumulator accumulate_panel_range(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                         const panel_options& o = {});
template <class T, class M>
doctor::diagnosis diagnose(const paired_view<T, M>& v, const doctor::diagnose_options& o = {});
template <class T, class M>
panel compute_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return dispatch::accumulate_panel(v, o, threads).finish();  // qualified: ADL also finds logratio::
}
/// weights: v.size() floats (may be null); mask: v.size() bytes (may be null).
template <class T, class M>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, float* weights, std::uint8_t* mask,
                          unsigned threads = 1);
template <class T, class M>
std::vector<double> quantiles(const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,
                              const quantile_options& o = {});
template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, nonfinite_policy nonfinite = nonfinite_policy::raise);
/// The panel and its quantiles in one pass (quantiles/panel_quantiles.hpp).
template <class T, class M>
panel compute_panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1);
template <class T, class M>
mismatch_split compute_mismatch_split(const paired_view<T, M>& v, const T* old_logprobs, const panel_options& o = {},
                                      unsigned threads = 1);
template <class T>
void compare_logits(const logits_view<T>& train, const logits_view<T>& rollout, const std::int64_t* tokens,
                    logits_row* out, const logits_options& o = {}, unsigned threads = 1);

// The instantiations the library holds (others fail to link).
#define LOGRATIO_DISPATCH_VIEW_EXTERN(T, M)                                                                          \
    extern template panel_accumulator accumulate_panel(const paired_view<T, M>&, const panel_options&, unsigned);   \
    extern template panel_accumulator accumulate_panel_range(const paired_view<T, M>&, std::uint64_t, std::uint64_t, \
                                                             const panel_options&);                                  \
    extern template doctor::diagnosis diagnose(const paired_view<T, M>&, const doctor::diagnose_options&);            \
    extern template correction_result correct(const paired_view<T, M>&, const correction_options&, float*,          \
                                              std::uint8_t*, unsigned);                                             \
    extern template std::vector<double> quantiles(const paired_view<T, M>&, quantile_of, const std::vector<double>&, \
                                                  const quantile_options&);                                         \
    extern template void add_panel_quantiles(panel&, const paired_view<T, M>&, nonfinite_policy);                     \
    extern template panel compute_panel_with_quantiles(const paired_view<T, M>&, const panel_options&, unsigned);    \
    extern template mismatch_split compute_mismatch_split(const paired_view<T, M>&, const T*, const panel_options&,      \
                                                          unsigned);
#define LOGRATIO_DISPATCH_TYPE_EXTERN(T)              \
    LOGRATIO_DISPATCH_VIEW_EXTERN(T, std::uint8_t)    \
    LOGRATIO_DISPATCH_VIEW_EXTERN(T, float)           \
    extern template void compare_logits(const logits_view<T>&, const logits_view<T>&, const std::int64_t*, \
                                        logits_row*, const logits_options&, unsigned);
LOGRATIO_DISPATCH_TYPE_EXTERN(float)
LOGRATIO_DISPATCH_TYPE_EXTERN(double)
LOGRATIO_DISPATCH_TYPE_EXTERN(float16)
LOGRATIO_DISPATCH_TYPE_EXTERN(bfloat16)
#undef LOGRATIO_DISPATCH_TYPE_EXTERN
#undef LOGRATIO_DISPATCH_VIEW_EXTERN

}  // namespace dispatch
LOGRATIO_NAMESPACE_END
