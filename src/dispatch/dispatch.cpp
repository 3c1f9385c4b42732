// logratio::dispatch: picks the level once and forwards every call to its
// table (kernel_table.hpp). Compiled without any -march flag.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include <logratio/dispatch/kernel_table.hpp>

LOGRATIO_NAMESPACE_BEGIN
namespace dispatch {
namespace {

struct level_entry {
    level id;
    const char* name;
    const kernel_table* (*table)();
};
const level_entry levels[] = {
    {level::scalar, "scalar", &logratio_dispatch_table_scalar},
    {level::sse2, "sse2", &logratio_dispatch_table_sse2},
    {level::avx2, "avx2", &logratio_dispatch_table_avx2},
    {level::avx512, "avx512", &logratio_dispatch_table_avx512},
};

/// Can the CPU (and the OS, which must save the wider registers) run the
/// level's code? The levels are compiled for the x86-64 psABI levels, so
/// they are tested as such (GCC's level names cover every feature the
/// compiler may use at that level, not only the vector ones).
bool cpu_runs(level l) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (l) {
        case level::scalar:
        case level::sse2: return true;
#if defined(__clang__)
        case level::avx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
        case level::avx512:
            return cpu_runs(level::avx2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512cd");
#else
        case level::avx2: return __builtin_cpu_supports("x86-64-v3");
        case level::avx512: return __builtin_cpu_supports("x86-64-v4");
#endif
    }
    return false;
#else
    return l == level::scalar;
#endif
}

std::string available_list() {
    std::string s;
    for (const auto& e : levels)
        if (cpu_runs(e.id)) s += (s.empty() ? "" : ", ") + std::string(e.name);
    return s;
}

const level_entry& entry_named(const std::string& name) {
    for (const auto& e : levels) {
        if (name != e.name) continue;
        if (!cpu_runs(e.id))
            throw error("SIMD level '" + name + "': this CPU cannot run it (available: " + available_list() + ")");
        return e;
    }
    throw error("unknown SIMD level '" + name + "' (expected scalar, sse2, avx2 or avx512; this CPU runs " +
                available_list() + ")");
}

std::atomic<const kernel_table*> current{nullptr};
std::mutex choosing;

/// The table in use: chosen on the first call (LOGRATIO_SIMD or the widest
/// level), then read with one atomic load.
const kernel_table& table() {
    if (const kernel_table* t = current.load(std::memory_order_acquire)) return *t;
    std::lock_guard<std::mutex> lock(choosing);
    if (const kernel_table* t = current.load(std::memory_order_acquire)) return *t;
    const kernel_table* chosen = nullptr;
    if (const char* env = std::getenv("LOGRATIO_SIMD"); env && *env) {
        chosen = entry_named(env).table();
    } else {
        for (const auto& e : levels)
            if (cpu_runs(e.id)) chosen = e.table();
    }
    current.store(chosen, std::memory_order_release);
    return *chosen;
}

template <class T, class M>
const view_kernels<T, M>& kernels_for() {
    auto& k = const_cast<type_kernels<T>&>(kernels_of<T>(table()));
    return mask_kernels(k, static_cast<const M*>(nullptr));
}

}  // namespace

const char* simd_level() { return table().name; }
level current_level() { return table().id; }

std::vector<std::string> available_simd_levels() {
    std::vector<std::string> out;
    for (const auto& e : levels)
        if (cpu_runs(e.id)) out.emplace_back(e.name);
    return out;
}

void set_simd_level(const std::string& name) {
    const kernel_table* t = entry_named(name).table();
    std::lock_guard<std::mutex> lock(choosing);
    current.store(t, std::memory_order_release);
}

// Every kernel of kernel_list.hpp forwards to the chosen level's slot...
#define LOGRATIO_DISPATCH_FORWARD_VIEW(R, name, fn, with_defaults, params, args) \
    template <class T, class M>                                                  \
    R name params {                                                              \
        return kernels_for<T, M>().name args;                                    \
    }
#define LOGRATIO_DISPATCH_FORWARD_TYPE(R, name, fn, with_defaults, params, args) \
    template <class T>                                                           \
    R name params {                                                              \
        return kernels_of<T>(table()).name args;                                 \
    }
LOGRATIO_VIEW_KERNELS(LOGRATIO_DISPATCH_FORWARD_VIEW, T, M)
LOGRATIO_TYPE_KERNELS(LOGRATIO_DISPATCH_FORWARD_TYPE, T)

// ...and is instantiated for every element and mask type the library holds.
#define LOGRATIO_DISPATCH_INSTANTIATE(R, name, fn, with_defaults, params, args) template R name params;
#define LOGRATIO_DISPATCH_INSTANTIATE_VIEW(T, M) LOGRATIO_VIEW_KERNELS(LOGRATIO_DISPATCH_INSTANTIATE, T, M)
#define LOGRATIO_DISPATCH_INSTANTIATE_TYPE(T)                                   \
    LOGRATIO_DISPATCH_MASK_TYPES(LOGRATIO_DISPATCH_INSTANTIATE_VIEW, T)         \
    LOGRATIO_TYPE_KERNELS(LOGRATIO_DISPATCH_INSTANTIATE, T)
LOGRATIO_DISPATCH_ELEMENT_TYPES(LOGRATIO_DISPATCH_INSTANTIATE_TYPE)

}  // namespace dispatch
LOGRATIO_NAMESPACE_END
