// logratio::stats: the run statistics (Boost.Math's t distribution).
#include <logratio/runs/runs.hpp>

#include <cmath>
#include <cstdio>

int main() {
    const double x[] = {1, 2, 3, 4}, y[] = {1, 3, 5, 7};
    const auto fit = logratio::stats::linregress(x, y, 4);
    if (!(std::fabs(fit.slope - 2.0) < 1e-12)) {
        std::fprintf(stderr, "stats consumer FAILED: slope %g\n", fit.slope);
        return 1;
    }
    std::printf("stats ok\n");
    return 0;
}
