#pragma once
// Exact quantiles of delta and |delta| from one interval-counting pass
// (f32_intervals.hpp): a sample chooses, per probability, an interval of
// keys that holds its rank with a wide margin; the pass counts the tokens
// at or above each interval and stores the few inside; the ranks are then
// selected among the stored tokens' exact deltas. A rank outside its
// interval makes resolve_f32_intervals return false (the caller takes the
// separate exact pass), so the result never depends on the sample.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "f32_intervals.hpp"
#include "f32_stored_bins.hpp"
#include "quantiles.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace detail {

/// The sample's bucket histograms of c = float32(t - r) over the masked-in
/// tokens with finite log-probs, at `positions` (pairs of first, last).
struct f32_key_sample {
    std::vector<std::uint64_t> hd = std::vector<std::uint64_t>(2 * f32_key_half, 0);
    std::vector<std::uint64_t> ha = std::vector<std::uint64_t>(f32_key_half, 0);
    std::uint64_t m = 0;
    void add(float t, float r, bool ok) noexcept {
        const float c = t - r;
        hd[f32_delta_bucket(f32_order_key(c))] += ok;
        ha[f32_abs_bucket(f32_abs_key(c))] += ok;
        m += ok;
    }
};

/// The buckets [first, last] of h (a sample histogram of m values) that
/// hold the sample ranks f (m - 1) -+ (z sigma + 4), sigma the binomial
/// standard deviation of the sample rank (z = 5, as the bucket plan of
/// panel_quantiles.hpp).
inline std::pair<std::size_t, std::size_t> f32_probable_buckets(const std::vector<std::uint64_t>& cum, std::uint64_t m,
                                                                double f) {
    const double md = static_cast<double>(m);
    const double s = f * (md - 1), w = 5.0 * std::sqrt(md * f * (1 - f)) + 4.0;
    const auto bucket = [&](double rank) {  // cum[b + 1] = values in buckets <= b
        const std::uint64_t r = static_cast<std::uint64_t>(std::min(std::max(rank, 0.0), md - 1));
        return static_cast<std::size_t>(std::upper_bound(cum.begin() + 1, cum.end(), r) - (cum.begin() + 1));
    };
    return {bucket(std::floor(s - w)), bucket(std::ceil(s + w))};
}

/// Key intervals [lo, hi) of the bucket runs for probs, merged where they
/// touch, written to lo/hi (the slots past the merged ones stay empty).
/// `base` is the key of bucket 0; the sample's share inside is added to `share`.
inline void f32_plan_side(const std::vector<std::uint64_t>& h, std::uint64_t m, const std::vector<double>& probs,
                          std::int64_t base, std::int32_t* lo, std::int32_t* hi, double& share) {
    std::vector<std::uint64_t> cum(h.size() + 1, 0);
    for (std::size_t b = 0; b < h.size(); ++b) cum[b + 1] = cum[b] + h[b];
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (double f : probs) runs.push_back(f32_probable_buckets(cum, m, f));
    std::sort(runs.begin(), runs.end());
    std::vector<std::pair<std::size_t, std::size_t>> merged;
    for (const auto& r : runs) {
        if (!merged.empty() && r.first <= merged.back().second + 1)
            merged.back().second = std::max(merged.back().second, r.second);
        else
            merged.push_back(r);
    }
    const auto key = [&](std::size_t b) {
        return static_cast<std::int32_t>(std::min<std::int64_t>(base + (static_cast<std::int64_t>(b) << 16),
                                                                std::numeric_limits<std::int32_t>::max()));
    };
    for (std::size_t j = 0; j < merged.size(); ++j) {
        lo[j] = key(merged[j].first);
        hi[j] = key(merged[j].second + 1);
        share += static_cast<double>(cum[std::min(merged[j].second + 1, h.size())] - cum[merged[j].first]) /
                 static_cast<double>(m);
    }
}

/// The plan from a sample: false (no plan) when it holds too few tokens or
/// the intervals would store more than a quarter of the tokens. `share` is
/// the sample's share of tokens inside (an upper bound: the two sides may
/// overlap).
inline bool plan_f32_intervals(const f32_key_sample& s, const std::vector<double>& dprobs,
                               const std::vector<double>& aprobs, f32_interval_set& out, double& share) {
    share = 0;
    if (s.m < 512 || dprobs.size() > f32_delta_intervals || aprobs.size() > f32_abs_intervals) return false;
    out = f32_interval_set{};
    f32_plan_side(s.hd, s.m, dprobs, -(f32_key_half << 16), out.lo_d, out.hi_d, share);
    f32_plan_side(s.ha, s.m, aprobs, 0, out.lo_a, out.hi_a, share);
    return share <= 0.25;
}

/// Room for n packed bins in buf (grown, never shrunk or zero-filled).
inline std::uint32_t* packed_bins_room(quantile_workspace::f32_bins_buffer& buf, std::size_t n) {
    if (buf.cap < n) {
        buf.bins = make_huge_array<std::uint32_t>(n);
        buf.cap = n;
    }
    return buf.bins.get();
}

/// The packed bins (stored_bin_pairs) of every part's stored tokens, in
/// order, into u (room for them all); fn(first, n) after each block of
/// 1024 (still in L1).
template <class Arch, int ND, int NA, class F>
void stored_bins_of(const std::vector<const f32_interval_counts*>& parts, const f32_bins<ND>& bd,
                    const f32_bins<NA>& ba, std::uint32_t* u, F&& fn) {
    constexpr std::size_t block = 1024;
    std::size_t at = 0;
    for (const auto* p : parts)
        for (std::size_t b = 0; b < p->used; b += block) {
            const std::size_t n = std::min(block, p->used - b);
            stored_bin_pairs<Arch>(p->t + b, p->r + b, n, bd, ba, u + at);
            fn(u + at, n);
            at += n;
        }
}

/// Where the ranks of one side lie: per rank its flat bin and its rank in
/// the bin; false when a rank lies outside every interval (ge[j]: tokens
/// at or above interval j).
template <int N>
bool locate_in_bins(const quantile_plan& plan, std::uint64_t n, const std::uint64_t (&ge)[N], f32_bins<N>& fb,
                    std::vector<std::pair<std::size_t, std::uint64_t>>& at) {
    constexpr std::size_t B = f32_bins<N>::bins;
    at.assign(plan.ranks.size(), {0, 0});
    for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
        const std::uint64_t r = plan.ranks[i];
        bool found = false;
        for (int j = 0; j < N && !found; ++j) {
            const std::uint64_t below = n - ge[j];
            if (r < below) continue;
            std::uint64_t acc = below;
            const std::size_t first = static_cast<std::size_t>(j + 1) * B;  // slot j + 1
            for (std::size_t b = first; b < first + B; ++b) {
                const std::uint64_t c = fb.hist[b];
                if (r < acc + c) {
                    at[i] = {b, r - acc};
                    fb.wanted[b] = 1;
                    found = true;
                    break;
                }
                acc += c;
            }
        }
        if (!found) return false;
    }
    return true;
}

/// The values of the ranks `at` from the gathered bins (std::vector per
/// flat bin in `got`).
inline void select_located(const std::vector<std::pair<std::size_t, std::uint64_t>>& at,
                           std::vector<std::pair<std::size_t, std::vector<double>>>& got, std::vector<double>& stats) {
    stats.assign(at.size(), 0.0);
    for (auto& g : got) {
        std::vector<std::uint64_t> local;
        for (const auto& a : at)
            if (a.first == g.first) local.push_back(a.second);
        std::sort(local.begin(), local.end());
        local.erase(std::unique(local.begin(), local.end()), local.end());
        multi_select(g.second.data(), 0, g.second.size(), local.data(), 0, local.size());
        for (std::size_t i = 0; i < at.size(); ++i)
            if (at[i].first == g.first) stats[i] = g.second[at[i].second];
    }
}

/// numpy's linear quantiles of delta (dprobs) and |delta| (aprobs) of the
/// counted tokens into qd, qa; false when a rank fell outside its interval
/// or the parts' token total is not `tokens`. Arch: the lanes of the bins
/// (stored_bin_pairs; scalar_bins: the one-token reference). buf: the
/// packed bins' memory, kept by the caller between calls (nullptr: a
/// buffer of this call).
template <class Arch = xsimd::default_arch>
bool resolve_f32_intervals(const f32_interval_set& s, const std::vector<const f32_interval_counts*>& parts,
                           std::uint64_t tokens, const std::vector<double>& dprobs, const std::vector<double>& aprobs,
                           std::vector<double>& qd, std::vector<double>& qa,
                           quantile_workspace::f32_bins_buffer* buf = nullptr) {
    std::uint64_t ge_d[f32_delta_intervals] = {}, ge_a[f32_abs_intervals] = {}, n = 0;
    for (const auto* p : parts) {
        for (int j = 0; j < f32_delta_intervals; ++j) ge_d[j] += p->ge_d[j];
        for (int j = 0; j < f32_abs_intervals; ++j) ge_a[j] += p->ge_a[j];
        n += p->tokens;
    }
    if (n != tokens || n == 0) return false;
    f32_bins<f32_delta_intervals> bd(s.lo_d, s.hi_d, 2 * f32_key_half, -(f32_key_half << 16));
    f32_bins<f32_abs_intervals> ba(s.lo_a, s.hi_a, f32_key_half, 0);
    std::uint32_t* hd = bd.hist.data();
    std::uint32_t* ha = ba.hist.data();
    std::size_t stored = 0;
    for (const auto* p : parts) stored += p->used;
    quantile_workspace::f32_bins_buffer own;
    // the stored tokens' packed bins (scan 2 reads them)
    std::uint32_t* const u = packed_bins_room(buf ? *buf : own, stored);
    stored_bins_of<Arch>(parts, bd, ba, u, [&](const std::uint32_t* w, std::size_t m) {
        for (std::size_t i = 0; i < m; ++i) {  // scan 1: the bins' histograms
            ++hd[w[i] & 0xffffu];
            ++ha[w[i] >> 16];
        }
    });
    const quantile_plan pd = plan_quantiles(n, dprobs, quantile_method::linear);
    const quantile_plan pa = plan_quantiles(n, aprobs, quantile_method::linear);
    std::vector<std::pair<std::size_t, std::uint64_t>> at_d, at_a;
    if (!locate_in_bins(pd, n, ge_d, bd, at_d) || !locate_in_bins(pa, n, ge_a, ba, at_a)) return false;
    // scan 2: the values of the wanted bins (a few hundred tokens)
    std::vector<std::int32_t> gi_d(bd.wanted.size(), -1), gi_a(ba.wanted.size(), -1);
    std::vector<std::pair<std::size_t, std::vector<double>>> got_d, got_a;
    std::vector<std::uint32_t> wd, wa, pos;  // the wanted bins, the positions holding one
    for (std::size_t b = 0; b < bd.wanted.size(); ++b)
        if (bd.wanted[b]) gi_d[b] = static_cast<std::int32_t>(got_d.size()), got_d.push_back({b, {}}),
                          wd.push_back(static_cast<std::uint32_t>(b));
    for (std::size_t b = 0; b < ba.wanted.size(); ++b)
        if (ba.wanted[b]) gi_a[b] = static_cast<std::int32_t>(got_a.size()), got_a.push_back({b, {}}),
                          wa.push_back(static_cast<std::uint32_t>(b));
    std::size_t at = 0;
    for (const auto* p : parts) {
        pos.clear();
        wanted_positions<Arch>(u + at, p->used, wd, wa, pos);
        for (const std::uint32_t i : pos) {
            const std::int32_t gd = gi_d[u[at + i] & 0xffffu], ga = gi_a[u[at + i] >> 16];
            const double x = static_cast<double>(p->t[i]) - static_cast<double>(p->r[i]);
            if (gd >= 0) got_d[static_cast<std::size_t>(gd)].second.push_back(x);
            if (ga >= 0) got_a[static_cast<std::size_t>(ga)].second.push_back(std::fabs(x));
        }
        at += p->used;
    }
    std::vector<double> sd, sa;
    select_located(at_d, got_d, sd);
    select_located(at_a, got_a, sa);
    const auto id = [](double x) { return x; };
    qd = finish_quantiles(pd, sd, id);
    qa = finish_quantiles(pa, sa, id);
    return true;
}

}  // namespace detail
LOGRATIO_NAMESPACE_END
