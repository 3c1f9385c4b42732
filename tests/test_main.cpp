// doctest main. A test binary built for an x86-64 level above the baseline
// exits with 77 (ctest: skipped) on a CPU that lacks it; so does a binary
// linked with logratio::dispatch when LOGRATIO_SIMD names a level this CPU
// cannot run (ctest runs the kernel tests once per level that way).
// doctest's implementation is doctest_impl.cpp (compiled once).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#if LOGRATIO_WITH_DISPATCH
#include <logratio/dispatch/simd_level.hpp>
#endif

namespace {

constexpr int skipped = 77;

bool cpu_has_build_level() {
#if defined(LOGRATIO_TEST_LEVEL_V4) || defined(LOGRATIO_TEST_LEVEL_V3)
    __builtin_cpu_init();
    bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#if defined(LOGRATIO_TEST_LEVEL_V4)
    ok = ok && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    return ok;
#else
    return true;
#endif
}

/// LOGRATIO_SIMD unset or empty, or a level dispatch can run here.
bool cpu_has_requested_level() {
#if LOGRATIO_WITH_DISPATCH
    const char* want = std::getenv("LOGRATIO_SIMD");
    if (!want || !*want) return true;
    const auto levels = logratio::dispatch::available_simd_levels();
    if (std::find(levels.begin(), levels.end(), std::string(want)) == levels.end()) return false;
    std::printf("kernels at LOGRATIO_SIMD=%s\n", want);
#endif
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (!cpu_has_build_level() || !cpu_has_requested_level()) {
        std::printf("skipped: this CPU lacks the instruction set this test run is for\n");
        return skipped;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
