// logratio launcher: runs the build of the tool that matches this CPU
// (x86-64-v4 = AVX-512, x86-64-v3 = AVX2+FMA, else the SSE2 baseline),
// installed next to it as logratio-<level>. LOGRATIO_ARCH=<level> forces one.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool cpu_has_v4() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
}
bool cpu_has_v3() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("avx") && __builtin_cpu_supports("popcnt");
}

std::string self_dir(const char* argv0) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string p = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(argv0);
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
    __builtin_cpu_init();
    std::vector<std::string> levels;
    if (const char* forced = std::getenv("LOGRATIO_ARCH"); forced && *forced) {
        levels.push_back(forced);
    } else {
        if (cpu_has_v4()) levels.push_back("x86-64-v4");
        if (cpu_has_v3()) levels.push_back("x86-64-v3");
        levels.push_back("x86-64");
    }
    const std::string dir = self_dir(argv[0]);
    for (const auto& level : levels) {
        const std::string path = dir + "/logratio-" + level;
        ::execv(path.c_str(), argv);
        if (errno != ENOENT) {
            std::fprintf(stderr, "logratio: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
            return 127;
        }
    }
    std::fprintf(stderr, "logratio: no build of the tool found next to the launcher in %s (looked for logratio-%s)\n",
                 dir.c_str(), levels.front().c_str());
    (void)argc;
    return 127;
}
