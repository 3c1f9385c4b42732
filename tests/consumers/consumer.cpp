// A user's program: includes the umbrella header, computes a panel.
#include <logratio/logratio.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    std::vector<float> train{-0.5f, -1.0f, -0.25f, -2.0f}, rollout{-0.51f, -0.98f, -0.25f, -2.1f};
    std::vector<std::uint8_t> mask{1, 1, 1, 0};
    const auto p = logratio::compute_panel(logratio::padded(train, rollout, mask, 2, 2));
    // |delta| = 0.01, 0.02, 0 over the three masked-in tokens: checked before "ok" is printed
    if (p.tokens != 3 || !(std::fabs(p.delta_abs_mean - 0.01) < 1e-6)) {
        std::fprintf(stderr, "consumer FAILED: %llu tokens, delta_abs_mean %.9g\n",
                     static_cast<unsigned long long>(p.tokens), p.delta_abs_mean);
        return 1;
    }
    std::printf("consumer ok: %llu tokens, delta_abs_mean %.6g\n", static_cast<unsigned long long>(p.tokens),
                p.delta_abs_mean);
    return 0;
}
