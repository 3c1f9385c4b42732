// vendoring: the smallest program that uses logratio (umbrella header, one
// panel). Build it with this folder's CMakeLists.txt either way.
#include <cmath>
#include <cstdio>
#include <vector>

#include <logratio/logratio.hpp>

int main() {
    std::vector<float> train{-0.5f, -1.0f, -0.25f, -2.0f}, rollout{-0.51f, -0.98f, -0.25f, -2.1f};
    std::vector<std::uint8_t> mask{1, 1, 1, 0};
    const auto p = logratio::compute_panel(logratio::padded(train, rollout, mask, 2, 2));
    // |delta| = 0.01, 0.02, 0 over the three masked-in tokens (float32 inputs),
    // checked before "ok" is printed
    if (p.tokens != 3 || !(std::fabs(p.delta_abs_mean - 0.01) < 1e-6)) {
        std::fprintf(stderr, "vendoring FAILED: %llu tokens, delta_abs_mean %.9g (want 3, 0.01)\n",
                     static_cast<unsigned long long>(p.tokens), p.delta_abs_mean);
        return 1;
    }
    std::printf("vendoring ok: logratio %s, %llu tokens, delta_abs_mean %.6g\n", LOGRATIO_VERSION_STRING,
                static_cast<unsigned long long>(p.tokens), p.delta_abs_mean);
    return 0;
}
