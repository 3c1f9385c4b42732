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
#include "../panel/panel_quantiles.hpp"
#include "../quantiles/quantiles.hpp"
#include "kernel_list.hpp"
#endif

LOGRATIO_NAMESPACE_BEGIN
namespace kernels {

// The kernels of kernel_list.hpp, and compute_panel.
#if LOGRATIO_WITH_DISPATCH
#define LOGRATIO_KERNELS_USING(R, name, fn, with_defaults, params, args) using dispatch::name;
LOGRATIO_VIEW_KERNELS(LOGRATIO_KERNELS_USING, T, M)
LOGRATIO_TYPE_KERNELS(LOGRATIO_KERNELS_USING, T)
#undef LOGRATIO_KERNELS_USING
using dispatch::compute_panel;
/// True: the calls run through logratio::dispatch.
constexpr bool with_dispatch = true;
/// The SIMD level the calls run ("avx512", "avx2", "sse2", "scalar").
inline const char* simd_level() { return dispatch::simd_level(); }
/// The levels this CPU can run (LOGRATIO_SIMD's choices).
inline std::vector<std::string> simd_levels() { return dispatch::available_simd_levels(); }
#else
constexpr bool with_dispatch = false;
#define LOGRATIO_KERNELS_VIEW(R, name, fn, with_defaults, params, args) \
    template <class T, class M>                                         \
    R name with_defaults {                                              \
        return fn args;                                                 \
    }
#define LOGRATIO_KERNELS_TYPE(R, name, fn, with_defaults, params, args) \
    template <class T>                                                  \
    R name with_defaults {                                              \
        return fn args;                                                 \
    }
LOGRATIO_VIEW_KERNELS(LOGRATIO_KERNELS_VIEW, T, M)
LOGRATIO_TYPE_KERNELS(LOGRATIO_KERNELS_TYPE, T)
#undef LOGRATIO_KERNELS_VIEW
#undef LOGRATIO_KERNELS_TYPE
template <class T, class M>
panel compute_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return logratio::compute_panel(v, o, threads);
}
inline const char* simd_level() { return xsimd::default_arch::name(); }
inline std::vector<std::string> simd_levels() { return {xsimd::default_arch::name()}; }
#endif

}  // namespace kernels
LOGRATIO_NAMESPACE_END
