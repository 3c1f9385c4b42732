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

template <class T, class M>
panel_accumulator accumulate_panel(const paired_view<T, M>& v, const panel_options& o, unsigned threads) {
    return kernels_for<T, M>().accumulate_panel(v, o, threads);
}
template <class T, class M>
panel_accumulator accumulate_panel_range(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                         const panel_options& o) {
    return kernels_for<T, M>().accumulate_panel_range(v, first, last, o);
}
template <class T, class M>
doctor::diagnosis diagnose(const paired_view<T, M>& v, const doctor::diagnose_options& o) {
    return kernels_for<T, M>().diagnose(v, o);
}
template <class T, class M>
correction_result correct(const paired_view<T, M>& v, const correction_options& o, float* weights, std::uint8_t* mask,
                          unsigned threads) {
    return kernels_for<T, M>().correct(v, o, weights, mask, threads);
}
template <class T, class M>
std::vector<double> quantiles(const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,
                              const quantile_options& o) {
    return kernels_for<T, M>().quantiles(v, what, probs, o);
}
template <class T, class M>
void add_panel_quantiles(panel& p, const paired_view<T, M>& v, nonfinite_policy nonfinite) {
    kernels_for<T, M>().add_panel_quantiles(p, v, nonfinite);
}
template <class T, class M>
panel compute_panel_with_quantiles(const paired_view<T, M>& v, const panel_options& o, unsigned threads) {
    return kernels_for<T, M>().compute_panel_with_quantiles(v, o, threads);
}
template <class T, class M>
mismatch_split compute_mismatch_split(const paired_view<T, M>& v, const T* old_logprobs, const panel_options& o,
                                      unsigned threads) {
    return kernels_for<T, M>().compute_mismatch_split(v, old_logprobs, o, threads);
}
template <class T>
void compare_logits(const logits_view<T>& train, const logits_view<T>& rollout, const std::int64_t* tokens,
                    logits_row* out, const logits_options& o, unsigned threads) {
    kernels_of<T>(table()).compare_logits(train, rollout, tokens, out, o, threads);
}

#define LOGRATIO_DISPATCH_VIEW_INST(T, M)                                                                      \
    template panel_accumulator accumulate_panel(const paired_view<T, M>&, const panel_options&, unsigned);    \
    template panel_accumulator accumulate_panel_range(const paired_view<T, M>&, std::uint64_t, std::uint64_t, \
                                                      const panel_options&);                                  \
    template doctor::diagnosis diagnose(const paired_view<T, M>&, const doctor::diagnose_options&);            \
    template correction_result correct(const paired_view<T, M>&, const correction_options&, float*,           \
                                       std::uint8_t*, unsigned);                                              \
    template std::vector<double> quantiles(const paired_view<T, M>&, quantile_of, const std::vector<double>&, \
                                           const quantile_options&);                                          \
    template void add_panel_quantiles(panel&, const paired_view<T, M>&, nonfinite_policy);                     \
    template panel compute_panel_with_quantiles(const paired_view<T, M>&, const panel_options&, unsigned);    \
    template mismatch_split compute_mismatch_split(const paired_view<T, M>&, const T*, const panel_options&, unsigned);
#define LOGRATIO_DISPATCH_TYPE_INST(T)        \
    LOGRATIO_DISPATCH_VIEW_INST(T, std::uint8_t) \
    LOGRATIO_DISPATCH_VIEW_INST(T, float)        \
    template void compare_logits(const logits_view<T>&, const logits_view<T>&, const std::int64_t*, logits_row*, \
                                 const logits_options&, unsigned);
LOGRATIO_DISPATCH_TYPE_INST(float)
LOGRATIO_DISPATCH_TYPE_INST(double)
LOGRATIO_DISPATCH_TYPE_INST(float16)
LOGRATIO_DISPATCH_TYPE_INST(bfloat16)

}  // namespace dispatch
LOGRATIO_NAMESPACE_END
