// close A B TOL: exit 0 when |A - B| <= TOL |B| (or <= 1e-12 for |B| < 1e-6).
#include <cmath>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const double a = std::strtod(argv[1], nullptr), b = std::strtod(argv[2], nullptr), tol = std::strtod(argv[3], nullptr);
    const double err = std::fabs(a - b);
    const bool ok = std::fabs(b) < 1e-6 ? err <= std::fmax(1e-12, tol * std::fabs(b)) : err <= tol * std::fabs(b);
    return ok ? 0 : 1;
}
