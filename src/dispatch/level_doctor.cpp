// The doctor's diagnosis at one level (see level.hpp): its scan runs the
// level's xsimd batches. The scalar level's table holds the SSE2 code here
// (the scan's scalar references are tested against it in test_doctor, not
// dispatched).
#include "level.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {

template <class T, class M>
lr::doctor::diagnosis diagnose(const lr::paired_view<T, M>& v, const lr::doctor::diagnose_options& o) {
    return lr::doctor::diagnose(v, o);  // xsimd::default_arch == arch (level.hpp)
}

}  // namespace

void fill_doctor(ld::kernel_table& t) {
    for_each_view_type(t, [](auto& k) {
        using types = view_types<std::remove_reference_t<decltype(k)>>;
        k.diagnose = &diagnose<typename types::value, typename types::mask>;
    });
}

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
