#include "stream_panel.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <type_traits>

#include <logratio/panel/panel_stream.hpp>

#include "../kernels.hpp"

namespace logratio_cli {

void release_pages(const void* p, std::uint64_t bytes) {
    static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto b = reinterpret_cast<std::uintptr_t>(p), e = b + bytes;
    const std::uintptr_t lo = (b + page - 1) / page * page, hi = e / page * page;
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

double physical_memory_bytes() {
    return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double peak_rss_mib() {
    struct rusage u {};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

stream_result stream_panel(const panel_tensors& in, const logratio::panel_options& opt, std::uint64_t chunk_tokens) {
    stream_result r;
    logratio::panel_stream s(opt);
    with_panel_view(in, [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        using M = typename std::decay_t<decltype(v)>::mask_type;
        std::uint64_t first = 0;
        while (first < v.num_sequences()) {
            std::uint64_t last = first + 1;
            while (last < v.num_sequences() && v.sequence_end(last) - v.sequence_begin(first) < chunk_tokens) ++last;
            s.add_accumulated(kernels::accumulate_panel_range(v, first, last, s.options()), v, first, last);
            const std::uint64_t b = v.sequence_begin(first), n = v.sequence_end(last - 1) - b;
            release_pages(v.train() + b, n * sizeof(T));
            release_pages(v.rollout() + b, n * sizeof(T));
            if (v.mask()) release_pages(v.mask() + b, n * sizeof(M));
            first = last;
        }
    });
    r.panel = s.finish();
    r.rank_error = s.quantile_rank_error();
    return r;
}

}  // namespace logratio_cli
