// Exact quantiles at one level (see level.hpp). Selection is exact at every
// level; the level only changes the speed of the bracketing pass. The scalar
// level's table holds the SSE2 code here (there is no one-lane quantile kernel).
#include "level.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {

template <class T, class M>
std::vector<double> quantiles(const lr::paired_view<T, M>& v, lr::quantile_of what, const std::vector<double>& probs,
                              const lr::quantile_options& o) {
    return lr::quantiles(v, what, probs, o);  // xsimd::default_arch == arch (level.hpp)
}

template <class T, class M>
void add_quantiles(lr::panel& p, const lr::paired_view<T, M>& v, lr::nonfinite_policy nonfinite) {
    lr::add_panel_quantiles(p, v, nonfinite);
}

}  // namespace

void fill_quantiles(ld::kernel_table& t) {
    for_each_view_type(t, [](auto& k) {
        using types = view_types<std::remove_reference_t<decltype(k)>>;
        k.quantiles = &quantiles<typename types::value, typename types::mask>;
        k.add_panel_quantiles = &add_quantiles<typename types::value, typename types::mask>;
    });
}

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
