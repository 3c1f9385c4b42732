#pragma once
// The function table behind logratio::dispatch: one per instruction-set
// level, filled by that level's translation units (src/dispatch/level_*.cpp)
// and chosen once (src/dispatch/dispatch.cpp). Consumers use dispatch.hpp.
//
// ODR: every level's translation units include the same inline functions and
// templates (panel_accumulator::merge, std::sort<double*>, quantiles<T, M>,
// ...) compiled with different -march flags. Left alone the linker would keep
// one copy of each -- possibly the AVX-512 one for the SSE2 path, a crash on
// an older CPU. Two things keep the levels apart:
//   1. the kernels are instantiated with the level's xsimd architecture tag
//      (xsimd::batch<double, Arch>), so their symbols differ anyway, and
//      each level's own functions live in a namespace of its own;
//   2. the level's objects are compiled with -fvisibility=hidden, partially
//      linked into one object (ld -r), and then every defined symbol except
//      the entry point is made local and the COMDAT groups are dropped
//      (objcopy --keep-global-symbol=logratio_dispatch_table_<level>
//      --remove-section=.group). Hidden visibility alone is not enough:
//      libstdc++ gives its templates default visibility (std::vector<double>
//      members, std::thread states), so they would still be weak and merge.
//      After this no copy can be merged with another level's or the
//      consumer's; references to libstdc++ stay undefined and resolve as usual.
//      Only GNU-unique data objects stay global (function-local statics of
//      inline functions, inline variables): they hold the same data at every
//      level and must exist once per process anyway.
// src/dispatch/tests checks both (consumer.cpp; check_symbols.cmake: one global
// symbol per level object, no weak ones): a consumer built without -march runs the widest
// level, and each level's results equal the scalar path.
#include <cstdint>
#include <vector>

#include "dispatch.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace dispatch {

/// One slot per kernel of kernel_list.hpp, for one (element, mask) type.
template <class T, class M>
struct view_kernels {
#define LOGRATIO_DISPATCH_SLOT(R, name, fn, with_defaults, params, args) R(*name) params = nullptr;
    LOGRATIO_VIEW_KERNELS(LOGRATIO_DISPATCH_SLOT, T, M)
};

template <class T>
struct type_kernels {
    view_kernels<T, std::uint8_t> byte_mask;
    view_kernels<T, float> float_mask;
    LOGRATIO_TYPE_KERNELS(LOGRATIO_DISPATCH_SLOT, T)
#undef LOGRATIO_DISPATCH_SLOT
};

struct kernel_table {
    level id = level::scalar;
    const char* name = "";
    type_kernels<float> f32;
    type_kernels<double> f64;
    type_kernels<float16> f16;
    type_kernels<bfloat16> bf16;
};

inline type_kernels<float>& kernels_of(kernel_table& t, const float*) { return t.f32; }
inline type_kernels<double>& kernels_of(kernel_table& t, const double*) { return t.f64; }
inline type_kernels<float16>& kernels_of(kernel_table& t, const float16*) { return t.f16; }
inline type_kernels<bfloat16>& kernels_of(kernel_table& t, const bfloat16*) { return t.bf16; }
template <class T>
const type_kernels<T>& kernels_of(const kernel_table& t) {
    return kernels_of(const_cast<kernel_table&>(t), static_cast<const T*>(nullptr));
}
template <class T>
view_kernels<T, std::uint8_t>& mask_kernels(type_kernels<T>& k, const std::uint8_t*) { return k.byte_mask; }
template <class T>
view_kernels<T, float>& mask_kernels(type_kernels<T>& k, const float*) { return k.float_mask; }

}  // namespace dispatch
LOGRATIO_NAMESPACE_END

// The entry points of the levels (global symbols; everything else in a
// level's object is local).
// extern "C": plain names for objcopy --keep-global-symbol (a pointer: C-compatible).
#define LOGRATIO_DISPATCH_ENTRY extern "C" __attribute__((visibility("default")))
LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* logratio_dispatch_table_scalar();
LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* logratio_dispatch_table_sse2();
LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* logratio_dispatch_table_avx2();
LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* logratio_dispatch_table_avx512();
