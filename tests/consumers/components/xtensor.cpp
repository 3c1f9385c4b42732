// logratio::xtensor: the panel of xtensor arrays through adapt/xtensor.hpp.
#include <logratio/adapt/xtensor.hpp>
#include <logratio/panel/panel.hpp>

#include <cstdio>
#include <xtensor/xtensor.hpp>

int main() {
    xt::xtensor<float, 2> train = {{-0.5f, -1.0f}, {-0.25f, -2.0f}}, rollout = {{-0.51f, -0.98f}, {-0.25f, -2.1f}};
    xt::xtensor<std::uint8_t, 2> mask = {{1, 1}, {1, 0}};
    const auto p = logratio::compute_panel(logratio::xt_padded(train, rollout, mask));
    if (p.tokens != 3) {
        std::fprintf(stderr, "xtensor consumer FAILED\n");
        return 1;
    }
    std::printf("xtensor ok\n");
    return 0;
}
