#pragma once
// Shared by the per-level translation units: each is compiled once per level
// with that level's -march flags and these macros (src/dispatch/CMakeLists.txt):
//   LOGRATIO_DISPATCH_NS      the level's own namespace (level_avx2, ...)
//   LOGRATIO_DISPATCH_ARCH    its xsimd architecture tag (xsimd::fma3<xsimd::avx2>, ...)
//   LOGRATIO_DISPATCH_ONE_LANE 1 where the level's objects also hold the
//                             one-lane reference level ("scalar": the SSE2
//                             level's, which has the same flags; the kernels
//                             with a one-lane path instantiate it there, the
//                             others share the SSE2 code)
// The tag must be what the flags give (checked below), so the level really
// runs the instructions its name promises.
#include <type_traits>

#include <logratio/dispatch/kernel_table.hpp>

#if !defined(LOGRATIO_DISPATCH_NS) || !defined(LOGRATIO_DISPATCH_ARCH) || !defined(LOGRATIO_DISPATCH_ONE_LANE)
#error "compile the dispatch level sources through src/dispatch/CMakeLists.txt"
#endif

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {

using arch = LOGRATIO_DISPATCH_ARCH;
static_assert(std::is_same<arch, xsimd::default_arch>::value,
              "the level's -march flags do not give the level's xsimd architecture");

namespace lr = logratio;
namespace ld = logratio::dispatch;

// The table's entries of each kernel; OneLane: the one-lane reference
// level's (instantiated where LOGRATIO_DISPATCH_ONE_LANE). Quantiles and the
// doctor have no one-lane kernel: both tables get the level's.
template <bool OneLane>
void fill_panel(ld::kernel_table& t);
template <bool OneLane>
void fill_correct(ld::kernel_table& t);
template <bool OneLane>
void fill_correct_16(ld::kernel_table& t);  // called by fill_correct
template <bool OneLane>
void fill_logits(ld::kernel_table& t);
void fill_quantiles(ld::kernel_table& t);
void fill_doctor(ld::kernel_table& t);

/// Explicit instantiations of a fill function template: the level's, and
/// the one-lane level's where this level holds it.
#if LOGRATIO_DISPATCH_ONE_LANE
#define LOGRATIO_DISPATCH_FILLS(name)                  \
    template void name<false>(ld::kernel_table & t); \
    template void name<true>(ld::kernel_table & t)
#else
#define LOGRATIO_DISPATCH_FILLS(name) template void name<false>(ld::kernel_table & t)
#endif

/// Calls f.template operator()<T, M>() for every (element, mask) pair the
/// library holds, with the table's slot for it.
template <class F>
void for_each_view_type(ld::kernel_table& t, F&& f) {
    f(t.f32.byte_mask); f(t.f32.float_mask);
    f(t.f64.byte_mask); f(t.f64.float_mask);
    f(t.f16.byte_mask); f(t.f16.float_mask);
    f(t.bf16.byte_mask); f(t.bf16.float_mask);
}

template <class K>
struct view_types;
template <class T, class M>
struct view_types<ld::view_kernels<T, M>> {
    using value = T;
    using mask = M;
};

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
