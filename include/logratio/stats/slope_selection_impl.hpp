#pragma once
// The search of slope_selection.hpp: bands narrowed by sampling until they
// are small enough to enumerate, the ranks read from the enumeration.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "order_statistics.hpp"
#include "slope_selection.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace stats {
namespace detail {

/// The search's sizes: 0 = the defaults (a band of at most max(16n, 4096)
/// pairs is enumerated; samples of clamp(n, 1024, 2^22) pairs). Tests set
/// them small to run every step of the search on small inputs.
struct slope_selection_tuning {
    std::uint64_t limit = 0;
    std::size_t sample = 0;
};

/// The largest band listed: max(16n, 4096) pairs. A round (a band counted
/// and sampled) costs about as much as listing 16n pairs and selecting from
/// them (measured at n = 8,000 and 10^5), and shrinks a band ~sqrt(n)/4-fold.
inline std::uint64_t band_limit(const slope_selection_tuning& tune, std::uint64_t n) {
    return tune.limit ? tune.limit : std::max<std::uint64_t>(16 * n, 4096);
}

/// What a selection did (tests and benchmarks check the O(n) claims).
struct slope_selection_trace {
    std::size_t rounds = 0;         ///< bands counted
    std::uint64_t enumerated = 0;   ///< pairs listed (the largest band)
    std::size_t retries = 0;        ///< bands that missed a rank
    std::size_t shared = 0;         ///< shared bands used (shared_band_of)
};

/// The band's computed slopes at ranks k (sorted, relative to all pairs),
/// or false where a rank falls outside the band or its value outside
/// [lo, hi] (the band missed it). A band of at most 8·limit pairs is listed
/// (each pair as often as it has copies) and the ranks selected; a larger
/// one could not shrink: its slopes lie within a few ulps of each other, so
/// a histogram keeps their few distinct values. `nonzero`: no slope of the
/// band is 0 (the exact bands): each rank by a radix select (kth_smallest).
inline bool read_ranks(const slope_data& d, const slope_band& band, std::uint64_t limit, double lo, double hi,
                       const std::vector<std::uint64_t>& k, std::vector<double>& out, bool nonzero = true) {
    out.clear();
    slope_band cache;
    const slope_band& s = ordered_band(d, band, cache);
    for (const std::uint64_t rank : k)
        if (rank < s.below || rank - s.below >= s.size()) return false;
    if (s.size() <= 8 * limit) {
        std::vector<double> v;
        v.reserve(static_cast<std::size_t>(s.size()));
        for_each_band_pair(d, s, [&](double x, std::uint64_t c) {
            if (c == 1) v.push_back(x);
            else v.insert(v.end(), static_cast<std::size_t>(c), x);
        });
        if (nonzero) {
            for (const std::uint64_t rank : k) {
                const double at = kth_smallest(v, static_cast<std::size_t>(rank - s.below));
                if (!(at >= lo && at <= hi)) return false;
                out.push_back(at);
            }
            return true;
        }
        std::size_t from = 0;
        bool placed = false;  // v[from] holds its order statistic
        for (const std::uint64_t rank : k) {
            const std::size_t r = static_cast<std::size_t>(rank - s.below);
            const auto at = v.begin() + static_cast<std::ptrdiff_t>(r);
            if (placed && r == from + 1)  // the next rank (the median's other half): the least above
                std::iter_swap(at, std::min_element(at, v.end()));
            else if (!(placed && r == from))
                std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), at, v.end());
            from = r;
            placed = true;
            if (!(*at >= lo && *at <= hi)) return false;
            out.push_back(*at);
        }
        return true;
    }
    std::map<double, std::uint64_t> h;
    double last = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t run = 0;
    for_each_band_pair(d, s, [&](double x, std::uint64_t c) {
        if (x == last) {
            run += c;
            return;
        }
        if (run) h[last] += run;
        last = x;
        run = c;
    });
    if (run) h[last] += run;
    auto it = h.begin();
    std::uint64_t before = 0;  // copies of the values before *it
    for (const std::uint64_t rank : k) {
        while (before + it->second <= rank - s.below) before += (it++)->second;
        if (!(it->first >= lo && it->first <= hi)) return false;
        out.push_back(it->first);
    }
    return true;
}

/// The sample indices [j0, j1] around where ranks k_first..k_last of the
/// band fall, `c` standard deviations of a sample rank out (j0 < 0: none
/// below; j1 >= m: none above).
inline std::pair<double, double> bracket_indices(std::size_t sample_size, const slope_band& s, std::uint64_t k_first,
                                                 std::uint64_t k_last, double c) {
    const double m = static_cast<double>(sample_size), size = static_cast<double>(s.size());
    const double f0 = static_cast<double>(k_first - s.below) / size, f1 = static_cast<double>(k_last - s.below) / size;
    return {std::floor(f0 * m - c * std::sqrt(m * f0 * (1 - f0)) - 2),
            std::ceil(f1 * m + c * std::sqrt(m * f1 * (1 - f1)) + 2)};
}

/// The next [lo, hi] from the sample's values at indices [j0, j1] (each
/// already at its place: selected).
inline std::pair<double, double> bracket_of(const std::vector<double>& sample, std::pair<double, double> j, double lo,
                                            double hi) {
    const double m = static_cast<double>(sample.size());
    if (j.second < m) hi = std::min(hi, sample[static_cast<std::size_t>(j.second)]);
    if (j.first >= 0) lo = std::max(lo, sample[static_cast<std::size_t>(j.first)]);
    return {lo, hi};
}

/// The sample slopes around where ranks k_first..k_last of the band fall,
/// `c` standard deviations of a sample rank out: the next [lo, hi]. The
/// sample is reordered (a multiselect, no sort).
inline std::pair<double, double> sample_bracket(std::vector<double>& sample, const slope_band& s,
                                                std::uint64_t k_first, std::uint64_t k_last, double c, double lo,
                                                double hi) {
    const auto j = bracket_indices(sample.size(), s, k_first, k_last, c);
    std::vector<std::uint64_t> at;
    if (j.first >= 0) at.push_back(static_cast<std::uint64_t>(j.first));
    if (j.second < static_cast<double>(sample.size())) at.push_back(static_cast<std::uint64_t>(j.second));
    set_order_statistics(sample, at);  // (no zero among a band's sample slopes: bands of one sign)
    return bracket_of(sample, j, lo, hi);
}

/// One band for all the ranks k (sorted) of one side, narrowed from `start`
/// by one sampled bracket around k.front()..k.back(), with its own sample:
/// the median and both ends of Sen's interval lie within a few 10^-3 of the
/// pairs of each other at n >= a few hundred, so one counted band and one
/// sample serve their clusters, which then need one round each instead of
/// two (at n = 10^5: 5 bands counted and 2 samples drawn instead of 7 and 4).
/// None when the sample says the band would keep over a quarter of `start`,
/// or when it missed a rank.
struct shared_band {
    slope_band band;
    std::vector<double> sample;
    double lo = 0, hi = 0;  ///< the computed slopes the band was narrowed to
};

inline std::optional<shared_band> shared_band_of(const slope_data& d, const std::vector<std::uint64_t>& k,
                                                 const slope_band& start, std::vector<double> sample, double lo,
                                                 double hi, std::size_t m, splitmix& rng,
                                                 slope_selection_trace& trace) {
    constexpr double c = 4.0;
    const double ms = static_cast<double>(sample.size()), size = static_cast<double>(start.size());
    if (ms == 0) return std::nullopt;
    const double f0 = static_cast<double>(k.front() - start.below) / size;
    const double f1 = static_cast<double>(k.back() - start.below) / size;
    const double kept = f1 - f0 + (c * (std::sqrt(ms * f0 * (1 - f0)) + std::sqrt(ms * f1 * (1 - f1))) + 4) / ms;
    if (kept > 0.25) return std::nullopt;
    const auto [nlo, nhi] = sample_bracket(sample, start, k.front(), k.back(), c, lo, hi);
    if (nlo == lo && nhi == hi) return std::nullopt;
    shared_band s;
    s.band = band_of(d, std::max(start.a, widen_down(nlo)), std::min(start.b, widen_up(nhi)));
    ++trace.rounds;
    if (s.band.below > k.front() || s.band.below + s.band.size() <= k.back()) {
        ++trace.retries;
        return std::nullopt;
    }
    s.sample = sample_band(d, s.band, 4 * m, rng);
    ++trace.shared;
    s.lo = nlo;
    s.hi = nhi;
    return s;
}

/// The slopes at ranks k (sorted, one cluster) among the pairs whose
/// computed slope is in [lo0, hi0], the pairs of `start` (an exact band: lo0,
/// hi0 are -inf, +inf or the thresholds around 0; or a shared_band), with a
/// sample of it. `fallible`: empty when the first listing misses (a
/// shared_band need not hold every pair of computed slope in [lo0, hi0]
/// at its edges: the caller then starts over from the exact band).
/// `first`: the first round's [lo, hi] (c = 4), taken by the caller
/// together with the other clusters' from one sample (cluster_brackets).
inline std::vector<double> select_cluster(const slope_data& d, const std::vector<std::uint64_t>& k,
                                          const slope_band& start, const std::vector<double>& start_sample,
                                          double lo0, double hi0, const slope_selection_tuning& tune,
                                          slope_selection_trace& trace, bool fallible = false,
                                          const std::pair<double, double>* first = nullptr) {
    const std::uint64_t n = d.x.size();
    const std::uint64_t limit = band_limit(tune, n);
    const std::size_t m =
        tune.sample ? tune.sample : static_cast<std::size_t>(std::clamp<std::uint64_t>(n, 1024, 1u << 22));
    splitmix rng{0x6C6F67726174696Full ^ (d.pairs * 0x9E3779B97F4A7C15ull) ^ k.front()};
    std::vector<double> out;
    for (double c = 4.0;; c *= 2) {
        double lo = lo0, hi = hi0;
        slope_band s;
        const slope_band* cur = &start;
        // a margin past 64 deviations: the band is the whole range
        for (int round = 0; round < 16 && cur->size() > limit && c < 64; ++round) {
            std::pair<double, double> next;
            if (round == 0 && c == 4.0 && first) {
                next = *first;
            } else {
                auto sample = round == 0 ? start_sample : sample_band(d, *cur, m, rng);
                next = sample_bracket(sample, *cur, k.front(), k.back(), c, lo, hi);
            }
            const auto [nlo, nhi] = next;
            if (nlo == lo && nhi == hi) break;  // cannot shrink: a mass of equal slopes
            // (expected at most the listing size: counted by insertion up to 4 times that)
            slope_band t = band_of(d, std::max(cur->a, widen_down(nlo)), std::min(cur->b, widen_up(nhi)), nullptr,
                                   4 * limit);
            ++trace.rounds;
            if (t.below > k.front() || t.below + t.size() <= k.back()) {  // missed: resample, wider
                ++trace.retries;
                c *= 1.5;
                continue;
            }
            s = std::move(t);
            cur = &s;
            lo = nlo;
            hi = nhi;
        }
        trace.enumerated = std::max(trace.enumerated, cur->size());
        if (read_ranks(d, *cur, limit, lo, hi, k, out)) return out;
        ++trace.retries;
        if (fallible) return {};
    }
}

/// The clusters of sorted ranks k: runs whose first and last rank are at
/// most `span` apart, as [begin, end) index pairs.
inline std::vector<std::pair<std::size_t, std::size_t>> rank_clusters(const std::vector<std::uint64_t>& k,
                                                                      std::uint64_t span) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t i = 0; i < k.size();) {
        std::size_t j = i + 1;
        while (j < k.size() && k[j] - k[i] <= span) ++j;
        out.emplace_back(i, j);
        i = j;
    }
    return out;
}

/// The first round's [lo, hi] (c = 4) of every cluster from the shared
/// band's sample, all the sample indices selected by one multiselect (one
/// pass or two over the sample, not two selections a cluster).
inline std::vector<std::pair<double, double>> cluster_brackets(
    const shared_band& sh, const std::vector<std::uint64_t>& k,
    const std::vector<std::pair<std::size_t, std::size_t>>& clusters) {
    std::vector<std::pair<double, double>> j;
    std::vector<std::uint64_t> at;
    const double m = static_cast<double>(sh.sample.size());
    for (const auto& c : clusters) {
        j.push_back(bracket_indices(sh.sample.size(), sh.band, k[c.first], k[c.second - 1], 4.0));
        if (j.back().first >= 0) at.push_back(static_cast<std::uint64_t>(j.back().first));
        if (j.back().second < m) at.push_back(static_cast<std::uint64_t>(j.back().second));
    }
    std::vector<double> sample = sh.sample;
    set_order_statistics(sample, at);
    std::vector<std::pair<double, double>> out;
    for (const auto& q : j) out.push_back(bracket_of(sample, q, sh.lo, sh.hi));
    return out;
}

/// The computed pairwise slopes at the 0-based ranks `ranks` of their
/// sorted list (each < d.pairs), bitwise those of the O(n²) definition.
inline std::vector<double> slopes_at_ranks(const slope_data& d, const std::vector<std::uint64_t>& ranks,
                                           slope_selection_trace* trace = nullptr,
                                           const slope_selection_tuning& tune = {}) {
    slope_selection_trace local;
    slope_selection_trace& tr = trace ? *trace : local;
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<double> out(ranks.size(), 0.0);
    if (!d.exact_range) {  // the whole range as one band (O(n²) pairs)
        const slope_band all = band_of(d, -inf, inf);
        std::vector<std::uint64_t> k(ranks);
        std::sort(k.begin(), k.end());
        std::vector<double> got;
        read_ranks(d, all, all.size(), -inf, inf, k, got, false);  // (zeros, and maybe NaN)
        for (std::size_t i = 0; i < ranks.size(); ++i)
            out[i] = got[static_cast<std::size_t>(std::lower_bound(k.begin(), k.end(), ranks[i]) - k.begin())];
        return out;
    }
    // The slopes 0 (pairs tied in y) counted exactly; the others fall in
    // (-inf, -tiny] or [tiny, inf): no nonzero slope is smaller than 2^-453
    // in magnitude in the checked range.
    const std::uint64_t z0 = d.negative, z1 = d.nonpositive;
    constexpr double tiny = 0x1p-460;
    const std::uint64_t n = d.x.size();
    const std::uint64_t limit = band_limit(tune, n), span = limit / 2;
    const std::size_t m =
        tune.sample ? tune.sample : static_cast<std::size_t>(std::clamp<std::uint64_t>(n, 1024, 1u << 22));
    for (int side = 0; side < 2; ++side) {
        std::vector<std::uint64_t> k;
        for (const auto r : ranks)
            if (side == 0 ? r < z0 : r >= z1) k.push_back(r);
        if (k.empty()) continue;
        std::sort(k.begin(), k.end());
        k.erase(std::unique(k.begin(), k.end()), k.end());
        const double lo = side == 0 ? -inf : tiny, hi = side == 0 ? -tiny : inf;
        // every slope < 0, or every slope > 0: counted by slope_data_of already
        const std::pair<std::uint64_t, std::uint64_t> counts =
            side == 0 ? std::make_pair(std::uint64_t(0), z0) : std::make_pair(z1, d.pairs - z1);
        const slope_band start = counted_band(lo, hi, counts);  // (ordered only if listed or sampled)
        ++tr.rounds;
        splitmix rng{0x73656E2D31393638ull ^ d.pairs ^ static_cast<std::uint64_t>(side)};
        auto drawn = sample_sign_band(d, start, side == 1, m, rng);
        const auto sample = drawn ? std::move(*drawn) : sample_band(d, start, m, rng);
        // ranks close together share one band; clusters apart, one narrowed band first
        const auto shared =
            k.back() - k.front() > span ? shared_band_of(d, k, start, sample, lo, hi, m, rng, tr) : std::nullopt;
        // a base band small enough to list: every rank from one listing
        const slope_band& base = shared ? shared->band : start;
        std::vector<double> all;
        if (base.size() <= limit && read_ranks(d, base, limit, shared ? shared->lo : lo, shared ? shared->hi : hi, k, all)) {
            tr.enumerated = std::max(tr.enumerated, base.size());
            for (std::size_t q = 0; q < ranks.size(); ++q) {
                const auto at = std::find(k.begin(), k.end(), ranks[q]);
                if (at != k.end()) out[q] = all[static_cast<std::size_t>(at - k.begin())];
            }
            continue;
        }
        const auto clusters = rank_clusters(k, span);
        const auto first = shared ? cluster_brackets(*shared, k, clusters) : std::vector<std::pair<double, double>>();
        for (std::size_t c = 0; c < clusters.size(); ++c) {
            const std::vector<std::uint64_t> cluster(k.begin() + static_cast<std::ptrdiff_t>(clusters[c].first),
                                                     k.begin() + static_cast<std::ptrdiff_t>(clusters[c].second));
            std::vector<double> v;
            if (shared)
                v = select_cluster(d, cluster, shared->band, shared->sample, shared->lo, shared->hi, tune, tr, true,
                                   &first[c]);
            if (v.empty()) v = select_cluster(d, cluster, start, sample, lo, hi, tune, tr);
            for (std::size_t q = 0; q < ranks.size(); ++q) {
                const auto at = std::find(cluster.begin(), cluster.end(), ranks[q]);
                if (at != cluster.end()) out[q] = v[static_cast<std::size_t>(at - cluster.begin())];
            }
        }
    }
    return out;
}

}  // namespace detail
}  // namespace stats
LOGRATIO_NAMESPACE_END
