#pragma once
// `logratio panel --stream` (automatic for inputs larger than half of this
// machine's RAM): the panel of a dump of any size in constant memory. The
// mapped file is read chunk by chunk (whole sequences, about 2^24 tokens
// each) through logratio::panel_stream; after each chunk its pages are
// released (madvise DONTNEED), so the resident set does not grow with the
// input. Quantile keys then come from KLL sketches (approximate, with the
// rank-error bound printed); every other key is exact.
#include <cstdint>

#include <logratio/panel/panel_accumulator.hpp>

#include "panel_input.hpp"

namespace logratio_cli {

/// Releases the whole pages inside [p, p + bytes) of a read-only mapping.
void release_pages(const void* p, std::uint64_t bytes);
double physical_memory_bytes();
double peak_rss_mib();

struct stream_result {
    logratio::panel panel;
    double rank_error = 0;
};

/// The panel of the tensors, `chunk_tokens` (whole sequences) at a time.
stream_result stream_panel(const panel_tensors& in, const logratio::panel_options& opt,
                           std::uint64_t chunk_tokens = std::uint64_t(1) << 24);

}  // namespace logratio_cli
