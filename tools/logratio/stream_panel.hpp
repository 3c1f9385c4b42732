#pragma once
// `logratio panel --stream` (automatic for inputs larger than half of this
// machine's RAM): the panel of a dump of any size in constant memory. The
// mapped file is read chunk by chunk (whole sequences, about 2^24 tokens
// each) through logratio::panel_stream; after each chunk its pages are
// released (madvise DONTNEED), so the resident set does not grow with the
// input. Quantile keys then come from KLL sketches (approximate, with the
// rank-error bound printed); every other key is exact.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include <logratio/logratio.hpp>

#include "kernels.hpp"
#include "panel_input.hpp"

namespace logratio_cli {

/// Releases the whole pages inside [p, p + bytes) of a read-only mapping.
inline void release_pages(const void* p, std::uint64_t bytes) {
    static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto b = reinterpret_cast<std::uintptr_t>(p), e = b + bytes;
    const std::uintptr_t lo = (b + page - 1) / page * page, hi = e / page * page;
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

inline double physical_memory_bytes() {
    return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

inline double peak_rss_mib() {
    struct rusage u {};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

struct stream_result {
    logratio::panel panel;
    double rank_error = 0;
};

inline stream_result stream_panel(const panel_tensors& in, const logratio::panel_options& opt,
                                  std::uint64_t chunk_tokens = std::uint64_t(1) << 24) {
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
