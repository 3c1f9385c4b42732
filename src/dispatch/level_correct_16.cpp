// The IS correction at one level for float16 and bfloat16 views (level_correct.hpp).
#include "level_correct.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {

template <bool OneLane>
void fill_correct_16(ld::kernel_table& t) {
    fill_correct_of<OneLane>(t.f16.byte_mask, t.f16.float_mask);
    fill_correct_of<OneLane>(t.bf16.byte_mask, t.bf16.float_mask);
}
LOGRATIO_DISPATCH_FILLS(fill_correct_16);

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
