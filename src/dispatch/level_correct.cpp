// The IS correction at one level (see level.hpp).
#include "level.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {

template <class T, class M>
lr::correction_result correct(const lr::paired_view<T, M>& v, const lr::correction_options& o, float* weights,
                              std::uint8_t* mask, unsigned threads) {
    if constexpr (scalar) {
        // correct() on one thread with the one-lane kernel.
        (void)threads;
        lr::correction_result r =
            lr::correct_range_scalar(v, 0, v.num_sequences(), o, weights, mask).finish();
        if (weights && r.weight_scale != 1.0)
            lr::scale_weights(weights, v.sequence_begin(0), v.sequence_begin(v.num_sequences()), r.weight_scale);
        return r;
    } else {
        return lr::correct<arch>(v, o, weights, mask, threads);
    }
}

}  // namespace

void fill_correct(ld::kernel_table& t) {
    for_each_view_type(t, [](auto& k) {
        using types = view_types<std::remove_reference_t<decltype(k)>>;
        k.correct = &correct<typename types::value, typename types::mask>;
    });
}

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
