// logratio::core alone: the panel, quantiles, the correction, the doctor.
#include <logratio/correction/correction.hpp>
#include <logratio/doctor/diagnose.hpp>
#include <logratio/quantiles/kll_sketch.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/panel.hpp>
#include <logratio/panel/panel_stream.hpp>
#include <logratio/quantiles/quantiles.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    std::vector<float> train{-0.5f, -1.0f, -0.25f, -2.0f}, rollout{-0.51f, -0.98f, -0.25f, -2.1f};
    std::vector<std::uint8_t> mask{1, 1, 1, 0};
    const auto v = logratio::padded(train, rollout, mask, 2, 2);
    const auto p = logratio::compute_panel(v);
    const auto q = logratio::quantiles(v, logratio::quantile_of::abs_delta, {1.0});
    if (p.tokens != 3 || !(std::fabs(p.delta_abs_mean - 0.01) < 1e-6) || q.size() != 1 ||
        !(std::fabs(q[0] - 0.02) < 1e-6)) {
        std::fprintf(stderr, "core consumer FAILED: %llu tokens\n", static_cast<unsigned long long>(p.tokens));
        return 1;
    }
    std::printf("core ok\n");
    return 0;
}
