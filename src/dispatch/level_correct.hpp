#pragma once
// The IS correction at one level (see level.hpp), for one view type. The
// table's eight view types are compiled in two translation units
// (level_correct.cpp: float and double; level_correct_16.cpp: float16 and
// bfloat16): the correction kernel is the largest instantiation, and all
// eight in one unit took more than 600 MB at -O3 at the AVX2 and AVX-512 levels.
#include "level.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {

template <bool OneLane, class T, class M>
lr::correction_result correct(const lr::paired_view<T, M>& v, const lr::correction_options& o, float* weights,
                              std::uint8_t* mask, unsigned threads) {
    if constexpr (OneLane)
        return lr::correct_scalar(v, o, weights, mask, threads);
    else
        return lr::correct<arch>(v, o, weights, mask, threads);
}

/// Fills the correction slots of one element type (both mask types).
template <bool OneLane, class T>
void fill_correct_of(ld::view_kernels<T, std::uint8_t>& bytes, ld::view_kernels<T, float>& floats) {
    bytes.correct = &correct<OneLane, T, std::uint8_t>;
    floats.correct = &correct<OneLane, T, float>;
}

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
