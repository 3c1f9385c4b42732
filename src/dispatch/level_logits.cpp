// Logit divergences at one level (see level.hpp).
#include "level.hpp"

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {

template <bool OneLane, class T>
void logits(const lr::logits_view<T>& train, const lr::logits_view<T>& rollout, const std::int64_t* tokens,
            lr::logits_row* out, const lr::logits_options& o, unsigned threads) {
    if constexpr (OneLane) {
        (void)threads;
        lr::compare_logits_scalar(train, rollout, tokens, out, o);
    } else {
        lr::compare_logits<arch>(train, rollout, tokens, out, o, threads);
    }
}

}  // namespace

template <bool OneLane>
void fill_logits(ld::kernel_table& t) {
    t.f32.compare_logits = &logits<OneLane, float>;
    t.f64.compare_logits = &logits<OneLane, double>;
    t.f16.compare_logits = &logits<OneLane, lr::float16>;
    t.bf16.compare_logits = &logits<OneLane, lr::bfloat16>;
}
LOGRATIO_DISPATCH_FILLS(fill_logits);

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
