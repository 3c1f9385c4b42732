#pragma once
// The ratio panel: every per-update mismatch statistic of SPEC.md in one pass
// over memory.
//
//   panel_accumulator acc = accumulate_panel(view);     // one pass, SIMD
//   acc.merge(other);                                   // threads, ranks, batches
//   panel p = acc.finish();                             // the SPEC values
//
// Formulas: panel_accumulator.hpp. Kernel: panel/detail/panel_kernel.hpp.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "detail/panel_kernel.hpp"
#include "../detail/parallel.hpp"
#include "panel_accumulator.hpp"
#include "../core/view.hpp"


LOGRATIO_NAMESPACE_BEGIN

/// Scalar reference path (one lane, same formulas); the SIMD path is tested
/// against it.
template <class T, class M>
panel_accumulator accumulate_panel_scalar(const paired_view<T, M>& v, const panel_options& o = {}) {
    return detail::accumulate_range<double>(v, 0, v.num_sequences(), o);
}

/// One pass over the view with SIMD lanes of architecture Arch (default: the
/// best the translation unit is compiled for, e.g. -mavx2 or -mavx512bw).
template <class Arch = xsimd::default_arch, class T, class M>
panel_accumulator accumulate_panel(const paired_view<T, M>& v, const panel_options& o = {}) {
    return detail::accumulate_range<xsimd::batch<double, Arch>>(v, 0, v.num_sequences(), o);
}

/// The same pass over sequences [first, last) only (sequence and position
/// indices stay those of the whole view): the unit of chunked and parallel
/// work.
template <class Arch = xsimd::default_arch, class T, class M>
panel_accumulator accumulate_panel_range(const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                         const panel_options& o = {}) {
    if (first > last || last > v.num_sequences())
        throw argument_error(detail::concat("accumulate_panel_range: sequence range [", first, ", ", last,
                                         ") is outside [0, ", v.num_sequences(), ")"));
    return detail::accumulate_range<xsimd::batch<double, Arch>>(v, first, last, o);
}

/// Splits the sequences into blocks of about 2^20 tokens (a function of the
/// view alone), reduces the blocks on up to `threads` threads and merges
/// them in order: bit-identical at any thread count, and equal to the
/// one-range accumulate_panel(v, o) within SPEC's tolerance. Sequences are
/// not split, so one huge packed sequence runs on one thread.
template <class Arch = xsimd::default_arch, class T, class M>
panel_accumulator accumulate_panel(const paired_view<T, M>& v, const panel_options& o, unsigned threads) {
    return detail::parallel_reduce(v, threads, [&](std::uint64_t first, std::uint64_t last) {
        return accumulate_panel_range<Arch>(v, first, last, o);
    });
}

/// The finished panel of a view (one pass; no quantiles).
template <class Arch = xsimd::default_arch, class T, class M>
panel compute_panel(const paired_view<T, M>& v, const panel_options& o = {}, unsigned threads = 1) {
    return accumulate_panel<Arch>(v, o, threads).finish();
}

LOGRATIO_NAMESPACE_END
