// compare_panel_json EXPECTED.json LAYOUT OUT.json: exit 0 when the panel in
// OUT.json (`logratio panel --json`) has exactly the keys of EXPECTED[LAYOUT]
// (the fixtures' float64 reference) and every value is within SPEC's
// tolerance: 1e-6 relative, or 1e-12 absolute where the value is below 1e-6.
// Prints each key out of tolerance (and the worst relative error).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {
nlohmann::json load(const char* path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(std::string("cannot open ") + path);
    return nlohmann::json::parse(f);
}
bool spec_close(double got, double want) {
    const double err = std::fabs(got - want);
    if (std::fabs(want) < 1e-6) return err <= std::fmax(1e-12, 1e-6 * std::fabs(want));
    return err <= 1e-6 * std::fabs(want);
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: compare_panel_json EXPECTED.json LAYOUT OUT.json\n");
        return 2;
    }
    try {
        const nlohmann::json want = load(argv[1]).at(argv[2]), got = load(argv[3]);
        int bad = 0;
        double worst = 0;
        for (auto it = want.begin(); it != want.end(); ++it) {
            if (!got.contains(it.key()) || !got[it.key()].is_number()) {
                std::fprintf(stderr, "%s: missing from the output (or not a number)\n", it.key().c_str());
                ++bad;
                continue;
            }
            const double g = got[it.key()].get<double>(), w = it.value().get<double>();
            if (w != 0) worst = std::fmax(worst, std::fabs(g - w) / std::fabs(w));
            if (!spec_close(g, w)) {
                std::fprintf(stderr, "%s: logratio %.17g, expected %.17g\n", it.key().c_str(), g, w);
                ++bad;
            }
        }
        for (auto it = got.begin(); it != got.end(); ++it)
            if (!want.contains(it.key())) {
                std::fprintf(stderr, "%s: in the output but not in the expected panel\n", it.key().c_str());
                ++bad;
            }
        if (bad) return 1;
        std::printf("%zu keys within SPEC's tolerance (worst relative error %.2g)\n", want.size(), worst);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "compare_panel_json: %s\n", e.what());
        return 1;
    }
}
