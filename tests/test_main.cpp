// doctest main. A test binary built for an x86-64 level above the baseline
// exits with 77 (ctest: skipped) on a CPU that lacks it, so the same suite
// runs once per compiled instruction set where the machine has it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

int main(int argc, char** argv) {
#if defined(LOGRATIO_TEST_LEVEL_V4) || defined(LOGRATIO_TEST_LEVEL_V3)
    __builtin_cpu_init();
    bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#if defined(LOGRATIO_TEST_LEVEL_V4)
    ok = ok && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    if (!ok) {
        std::printf("skipped: this CPU lacks the instruction set this test binary was built for\n");
        return 77;
    }
#endif
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
