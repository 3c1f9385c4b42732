// The level's entry point: its filled table (see level.hpp). The only
// global symbol of the level's object.
#include "level.hpp"

#if !defined(LOGRATIO_DISPATCH_ENTRY_NAME) || !defined(LOGRATIO_DISPATCH_LEVEL_ID)
#error "compile the dispatch level sources through src/dispatch/CMakeLists.txt"
#endif
#define LOGRATIO_DISPATCH_STR2(x) #x
#define LOGRATIO_DISPATCH_STR(x) LOGRATIO_DISPATCH_STR2(x)

LOGRATIO_DISPATCH_ENTRY const logratio::dispatch::kernel_table* LOGRATIO_DISPATCH_ENTRY_NAME() {
    namespace lv = logratio_dispatch::LOGRATIO_DISPATCH_NS;
    static const logratio::dispatch::kernel_table table = [] {
        logratio::dispatch::kernel_table t;
        t.id = logratio::dispatch::level::LOGRATIO_DISPATCH_LEVEL_ID;
        t.name = LOGRATIO_DISPATCH_STR(LOGRATIO_DISPATCH_LEVEL_ID);
        lv::fill_panel(t);
        lv::fill_correct(t);
        lv::fill_quantiles(t);
        lv::fill_logits(t);
        lv::fill_doctor(t);
        return t;
    }();
    return &table;
}
