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
#include "../panel/panel_quantiles.hpp"
#include "../quantiles/quantiles.hpp"
#include "kernel_list.hpp"
#include "simd_level.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace dispatch {

// The kernels (kernel_list.hpp), with the header-only calls' defaults:
// accumulate_panel, accumulate_panel_range (sequences [first, last) only:
// the unit of chunked work, e.g. panel_stream::add_accumulated), diagnose,
// correct (weights: v.size() floats, mask: v.size() bytes; either may be
// null), quantiles, add_panel_quantiles, compute_panel_with_quantiles (the
// panel and its quantiles in one pass), compute_mismatch_split, and
// compare_logits. The library holds them for the types of
// LOGRATIO_DISPATCH_ELEMENT_TYPES and LOGRATIO_DISPATCH_MASK_TYPES: others
// fail to link.
#define LOGRATIO_DISPATCH_DECLARE_VIEW(R, name, fn, with_defaults, params, args) \
    template <class T, class M>                                                  \
    R name with_defaults;
#define LOGRATIO_DISPATCH_DECLARE_TYPE(R, name, fn, with_defaults, params, args) \
    template <class T>                                                           \
    R name with_defaults;
LOGRATIO_VIEW_KERNELS(LOGRATIO_DISPATCH_DECLARE_VIEW, T, M)
LOGRATIO_TYPE_KERNELS(LOGRATIO_DISPATCH_DECLARE_TYPE, T)
#undef LOGRATIO_DISPATCH_DECLARE_VIEW
#undef LOGRATIO_DISPATCH_DECLARE_TYPE

template <class T, class M>
panel compute_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return dispatch::accumulate_panel(v, o, threads).finish();  // qualified: ADL also finds logratio::
}

}  // namespace dispatch
LOGRATIO_NAMESPACE_END
