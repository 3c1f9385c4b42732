// The IS correction at one level for float and double views (level_correct.hpp).
#include "level_correct.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {

void fill_correct(ld::kernel_table& t) {
    fill_correct_of(t.f32.byte_mask, t.f32.float_mask);
    fill_correct_of(t.f64.byte_mask, t.f64.float_mask);
    fill_correct_16(t);
}

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
