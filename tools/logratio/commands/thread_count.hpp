#pragma once
// The thread count of the commands: --threads, or the CPUs this process may
// use (without CLI11: the command steps and outputs that carry it include
// this, threads_option.hpp registers the option).
#include <sched.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <string>
#include <thread>

namespace logratio_cli {

/// The CPUs this process may use: its affinity mask (taskset, cpusets),
/// capped by a cgroup v2 CPU quota (containers: `cpu.max` "QUOTA PERIOD",
/// rounded up), at least 1 and at most 1024 (--threads' range).
inline unsigned usable_cpus() {
    unsigned n = std::thread::hardware_concurrency();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) n = static_cast<unsigned>(CPU_COUNT(&set));
    std::ifstream max("/sys/fs/cgroup/cpu.max");
    std::string quota;
    double period = 0;
    if (max >> quota >> period && quota != "max" && period > 0) {
        try {
            const double q = std::stod(quota) / period;
            if (q > 0) n = std::min(n, static_cast<unsigned>(std::max(1.0, q + 0.999)));
        } catch (const std::exception&) {  // not a number: no quota known
        }
    }
    return std::clamp(n, 1u, 1024u);
}

/// usable_cpus(), found once per process (at its first use).
inline unsigned usable_cpus_once() {
    static const unsigned n = usable_cpus();
    return n;
}

/// --threads' value: the number given, or, when none was (0), the usable
/// CPUs -- looked up only when a command asks, so registering the option
/// costs nothing.
struct thread_count {
    unsigned given = 0;
    operator unsigned() const { return given ? given : usable_cpus_once(); }  // NOLINT: a count where one is wanted
};

}  // namespace logratio_cli
