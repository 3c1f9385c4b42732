// The level's entry point: its filled table (see level.hpp). The only
// global symbol of the level's object.
#include "level.hpp"

#if !defined(LOGRATIO_DISPATCH_ENTRY_NAME) || !defined(LOGRATIO_DISPATCH_LEVEL_ID)
#error "compile the dispatch level sources through src/dispatch/CMakeLists.txt"
#endif
#define LOGRATIO_DISPATCH_STR2(x) #x
#define LOGRATIO_DISPATCH_STR(x) LOGRATIO_DISPATCH_STR2(x)

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {
template <bool OneLane>
logratio::dispatch::kernel_table make_table(logratio::dispatch::level id, const char* name) {
    logratio::dispatch::kernel_table t;
    t.id = id;
    t.name = name;
    fill_panel<OneLane>(t);
    fill_correct<OneLane>(t);
    fill_quantiles(t);
    fill_logits<OneLane>(t);
    fill_doctor(t);
    return t;
}
}  // namespace
}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch

LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* LOGRATIO_DISPATCH_ENTRY_NAME() {
    namespace lv = logratio_dispatch::LOGRATIO_DISPATCH_NS;
    static const logratio::dispatch::kernel_table table = lv::make_table<false>(
        logratio::dispatch::level::LOGRATIO_DISPATCH_LEVEL_ID, LOGRATIO_DISPATCH_STR(LOGRATIO_DISPATCH_LEVEL_ID));
    return &table;
}

#if LOGRATIO_DISPATCH_ONE_LANE
// The one-lane reference level ("scalar"), held by this level's objects.
LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* logratio_dispatch_table_scalar() {
    namespace lv = logratio_dispatch::LOGRATIO_DISPATCH_NS;
    static const logratio::dispatch::kernel_table table =
        lv::make_table<true>(logratio::dispatch::level::scalar, "scalar");
    return &table;
}
#endif
