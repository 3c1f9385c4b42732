// The panel (whole views and sequence ranges) and the mismatch split at one
// level (see level.hpp).
#include "level.hpp"

#include <logratio/panel/panel_quantiles.hpp>

namespace logratio_dispatch {
namespace LOGRATIO_DISPATCH_NS {
namespace {

template <bool OneLane, class T, class M>
lr::panel_accumulator accumulate(const lr::paired_view<T, M>& v, const lr::panel_options& o, unsigned threads) {
    if constexpr (OneLane) {
        (void)threads;
        return lr::accumulate_panel_scalar(v, o);
    } else {
        return lr::accumulate_panel<arch>(v, o, threads);
    }
}

template <bool OneLane, class T, class M>
lr::panel_accumulator accumulate_range(const lr::paired_view<T, M>& v, std::uint64_t first, std::uint64_t last,
                                       const lr::panel_options& o) {
    if constexpr (OneLane) {
        if (first > last || last > v.num_sequences()) return lr::accumulate_panel_range(v, first, last, o);  // throws
        return lr::detail::accumulate_range<double>(v, first, last, o);
    } else {
        return lr::accumulate_panel_range<arch>(v, first, last, o);
    }
}

template <bool OneLane, class T, class M>
lr::panel with_quantiles(const lr::paired_view<T, M>& v, const lr::panel_options& o, unsigned threads) {
    if constexpr (OneLane) {  // the reference level: the two passes (the fused one is tested against them)
        (void)threads;
        lr::panel p = lr::accumulate_panel_scalar(v, o).finish();
        ld::add_panel_quantiles(p, v, o.nonfinite);
        return p;
    } else {
        // the fallback through this level's table entry (level_quantiles.cpp):
        // the separate pass is not compiled into this unit once more
        lr::quantile_workspace ws;
        struct through_table {
            const lr::paired_view<T, M>& v;
            lr::quantile_workspace& ws;
            lr::nonfinite_policy nonfinite;
            void add_to(lr::panel& p) const { ld::add_panel_quantiles(p, v, nonfinite); }
            lr::quantile_workspace& workspace() const { return ws; }
        };
        return lr::detail::panel_with_quantiles<xsimd::batch<double, arch>>(v, o, threads,
                                                                            through_table{v, ws, o.nonfinite});
    }
}

template <bool OneLane, class T, class M>
lr::mismatch_split split(const lr::paired_view<T, M>& v, const T* old_logprobs, const lr::panel_options& o,
                         unsigned threads) {
    if constexpr (OneLane) {
        // The three panels of compute_mismatch_split(), one lane each.
        const auto total = lr::accumulate_panel_scalar(v, o).finish();
        const auto numeric = lr::accumulate_panel_scalar(v.with_arrays(old_logprobs, v.rollout()), o).finish();
        const auto lag = lr::accumulate_panel_scalar(v.with_arrays(v.train(), old_logprobs), o).finish();
        (void)threads;
        lr::mismatch_split s;
        s.tokens = total.tokens;
        s.total = lr::detail::part_of(total);
        s.numeric = lr::detail::part_of(numeric);
        s.lag = lr::detail::part_of(lag);
        return s;
    } else {
        return lr::compute_mismatch_split<arch>(v, old_logprobs, o, threads);
    }
}

}  // namespace

template <bool OneLane>
void fill_panel(ld::kernel_table& t) {
    for_each_view_type(t, [](auto& k) {
        using types = view_types<std::remove_reference_t<decltype(k)>>;
        k.accumulate_panel = &accumulate<OneLane, typename types::value, typename types::mask>;
        k.accumulate_panel_range = &accumulate_range<OneLane, typename types::value, typename types::mask>;
        k.compute_mismatch_split = &split<OneLane, typename types::value, typename types::mask>;
        k.compute_panel_with_quantiles = &with_quantiles<OneLane, typename types::value, typename types::mask>;
    });
}
LOGRATIO_DISPATCH_FILLS(fill_panel);

}  // namespace LOGRATIO_DISPATCH_NS
}  // namespace logratio_dispatch
