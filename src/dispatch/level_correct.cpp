// The IS correction at one level for float and double views (level_correct.hpp).
#include "level_correct.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {

template <bool OneLane>
void fill_correct(ld::kernel_table& t) {
    fill_correct_of<OneLane>(t.f32.byte_mask, t.f32.float_mask);
    fill_correct_of<OneLane>(t.f64.byte_mask, t.f64.float_mask);
    fill_correct_16<OneLane>(t);
}
LOGRATIO_DISPATCH_FILLS(fill_correct);

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
