// logratio::dispatch: the panel at the CPU's widest level, no -march flag.
#include <logratio/dispatch/dispatch.hpp>

#include <cstdio>
#include <vector>

int main() {
    std::vector<float> train{-0.5f, -1.0f, -0.25f, -2.0f}, rollout{-0.51f, -0.98f, -0.25f, -2.1f};
    std::vector<std::uint8_t> mask{1, 1, 1, 0};
    const auto p = logratio::dispatch::compute_panel(logratio::padded(train, rollout, mask, 2, 2));
    if (p.tokens != 3) {
        std::fprintf(stderr, "dispatch consumer FAILED\n");
        return 1;
    }
    std::printf("dispatch ok (%s)\n", logratio::dispatch::simd_level());
    return 0;
}
