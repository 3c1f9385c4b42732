#pragma once
// Exact quantiles, bit-for-bit numpy.quantile(method=...) on float64 data,
// without sorting: radix select. One pass builds a histogram of the top 16
// bits of an order-preserving key (fused with gathering the values from a
// view), one pass collects the values of the few buckets that hold a
// requested rank, and nth_element runs inside those buckets only.
//
// (The panel's quantile keys, delta_q* and abs_delta_q* of SPEC, are
// panel/panel_quantiles.hpp's, over these.)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../detail/huge_array.hpp"
#include "../detail/batches.hpp"
#include "../detail/simd.hpp"
#include "../detail/widen.hpp"
#include "../core/limits.hpp"
#include "../core/nonfinite.hpp"
#include "../core/view.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// numpy's quantile methods (numpy >= 1.22 names).
enum class quantile_method {
    inverted_cdf,
    averaged_inverted_cdf,
    closest_observation,
    interpolated_inverted_cdf,
    hazen,
    weibull,
    linear,  ///< default: Hyndman-Fan type 7
    median_unbiased,
    normal_unbiased,
    lower,
    higher,
    midpoint,
    nearest
};

inline quantile_method parse_quantile_method(const std::string& s) {
    static const std::pair<const char*, quantile_method> names[] = {
        {"inverted_cdf", quantile_method::inverted_cdf},
        {"averaged_inverted_cdf", quantile_method::averaged_inverted_cdf},
        {"closest_observation", quantile_method::closest_observation},
        {"interpolated_inverted_cdf", quantile_method::interpolated_inverted_cdf},
        {"hazen", quantile_method::hazen},
        {"weibull", quantile_method::weibull},
        {"linear", quantile_method::linear},
        {"median_unbiased", quantile_method::median_unbiased},
        {"normal_unbiased", quantile_method::normal_unbiased},
        {"lower", quantile_method::lower},
        {"higher", quantile_method::higher},
        {"midpoint", quantile_method::midpoint},
        {"nearest", quantile_method::nearest}};
    for (const auto& n : names)
        if (s == n.first) return n.second;
    throw argument_error("unknown quantile method '" + s + "'");
}

namespace detail {

/// Where quantile p of n sorted values lies: either one index (discrete
/// methods) or an interpolation between lo and hi with weight gamma.
struct quantile_position {
    std::uint64_t lo = 0, hi = 0;
    double gamma = 0.0;
    bool interpolate = false;
};

/// a * b rounded to a double before any later addition: with FMA targets
/// (-march=x86-64-v3 and above) GCC otherwise contracts `n * q - 1` into one
/// fused operation, and the virtual index -- hence the rank -- differs from
/// numpy's (seen: inverted_cdf at q = 0.01 of 100 values).
inline double rounded_product(double a, double b) {
    volatile double p = a * b;
    return p;
}

inline double floor_mod2(double x) { return x - 2.0 * std::floor(x / 2.0); }  // 2 * y is exact: nothing to fuse

inline quantile_position locate_quantile(std::uint64_t count, double q, quantile_method m) {
    const double n = static_cast<double>(count);
    const double last = n - 1;
    quantile_position pos;
    auto index = [&](double i) {  // integer index, clipped like numpy
        i = std::min(std::max(i, 0.0), last);
        pos.lo = pos.hi = static_cast<std::uint64_t>(i);
        pos.interpolate = false;
        return pos;
    };
    auto boundaries = [&](double v, bool take_previous_when) {
        const double prev = std::floor(v);
        return index(take_previous_when ? prev : prev + 1);
    };
    auto virtual_index = [&](double alpha, double beta) {
        return rounded_product(n, q) + (alpha + rounded_product(q, 1 - alpha - beta)) - 1;
    };
    double v = 0;
    bool fixed_gamma = false;
    double gamma_fixed = 0;
    switch (m) {
        case quantile_method::lower: return index(std::floor(last * q));
        case quantile_method::higher: return index(std::ceil(last * q));
        case quantile_method::nearest: return index(std::nearbyint(last * q));  // half to even, as np.around
        case quantile_method::inverted_cdf: {
            const double vi = rounded_product(n, q) - 1;
            return boundaries(vi, vi - std::floor(vi) == 0);
        }
        case quantile_method::closest_observation: {
            const double vi = rounded_product(n, q) - 1 - 0.5;
            return boundaries(vi, (vi - std::floor(vi) == 0) && floor_mod2(std::floor(vi)) == 0);
        }
        case quantile_method::linear: v = last * q; break;
        case quantile_method::interpolated_inverted_cdf: v = virtual_index(0, 1); break;
        case quantile_method::hazen: v = virtual_index(0.5, 0.5); break;
        case quantile_method::weibull: v = virtual_index(0, 0); break;
        case quantile_method::median_unbiased: v = virtual_index(1 / 3.0, 1 / 3.0); break;
        case quantile_method::normal_unbiased: v = virtual_index(3 / 8.0, 3 / 8.0); break;
        case quantile_method::averaged_inverted_cdf: v = rounded_product(n, q) - 1; break;
        case quantile_method::midpoint:
            v = 0.5 * (std::floor(last * q) + std::ceil(last * q));
            fixed_gamma = true;
            gamma_fixed = (v - std::floor(v) == 0) ? 0.0 : 0.5;
            break;
    }
    double prev = std::floor(v);
    if (v >= last) return index(last);
    if (v < 0) prev = 0;
    pos.lo = static_cast<std::uint64_t>(prev);
    pos.hi = pos.lo + 1;
    pos.interpolate = true;
    pos.gamma = v - prev;
    if (fixed_gamma) pos.gamma = gamma_fixed;
    if (m == quantile_method::averaged_inverted_cdf) pos.gamma = (pos.gamma == 0) ? 0.5 : 1.0;
    if (v < 0) {  // numpy takes the minimum on both sides
        pos.hi = 0;
    }
    return pos;
}

/// numpy's _lerp, rounding exactly as it does (no fused multiply-add).
inline double numpy_lerp(double a, double b, double t) {
    const double diff = b - a;
    return t >= 0.5 ? b - rounded_product(diff, 1 - t) : a + rounded_product(diff, t);
}

/// Places the order statistics ranks[first, last) (sorted, unique) of
/// data[lo, hi) at their sorted positions (nth_element recursion).
inline void multi_select(double* data, std::uint64_t lo, std::uint64_t hi, const std::uint64_t* ranks,
                         std::size_t first, std::size_t last) {
    while (first < last && hi - lo > 1) {
        const std::size_t mid = first + (last - first) / 2;
        const std::uint64_t k = ranks[mid];
        std::nth_element(data + lo, data + k, data + hi);
        multi_select(data, lo, k, ranks, first, mid);
        lo = k + 1;
        first = mid + 1;
    }
}

/// Order-preserving map of a (non-NaN) double to an unsigned key.
inline std::uint64_t order_key(double x) noexcept {
    std::uint64_t u;
    std::memcpy(&u, &x, 8);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

constexpr int radix_bits = 16;
constexpr std::size_t radix_buckets = std::size_t(1) << radix_bits;
inline std::uint32_t bucket_of(double x) noexcept {
    return static_cast<std::uint32_t>(order_key(x) >> (64 - radix_bits));
}

}  // namespace detail

/// Reusable scratch memory of the exact-quantile selection (the caller may
/// keep one per thread and pass it to every call). Every buffer that grows
/// with the input, and the 256 KiB bucket tables, live here: after the first
/// call of a given size a call allocates only small vectors whose size
/// grows with the number of probabilities asked (ranks, brackets), not
/// with the tokens.
struct quantile_workspace {
    std::vector<double> values;           ///< the gathered values (8 bytes per value)
    std::vector<double> candidates;       ///< values of the buckets that hold a requested rank
    std::vector<std::uint64_t> histogram;  ///< radix histogram of the top 16 key bits
    std::vector<std::uint32_t> slots;      ///< radix bucket -> needed bucket + 1 (0: not needed)
    /// One part (thread) of the fused panel pass (panel_quantiles.hpp): its
    /// stored deltas (grown, never zero-filled).
    struct fused_part {
        detail::huge_array<double> cand;  ///< on huge pages where Linux offers them
        std::size_t cap = 0;
    };
    std::vector<fused_part> fused;
    /// One part (thread) of the fused pass in float32 lanes
    /// (quantiles/f32_intervals.hpp): the stored tokens' log-probs.
    struct f32_part {
        detail::huge_array<float> t, r;
        std::size_t cap = 0;
    };
    std::vector<f32_part> f32;
    /// The float32 resolution's packed bins, one uint32 per stored token
    /// (f32_interval_select.hpp): kept between calls, never zero-filled
    /// (a fresh 6 MB buffer per call at 2^25 tokens faulted its pages in).
    struct f32_bins_buffer {
        detail::huge_array<std::uint32_t> bins;
        std::size_t cap = 0;
    };
    f32_bins_buffer f32_bins;
    /// The fused pass's histograms and maps, carved afresh in every call.
    detail::scratch_arena scratch;
};

namespace detail {

/// Places the order statistics `ranks` (sorted, unique) of data[0, n) such
/// that out[i] = the ranks[i]-th smallest value. Radix select: one histogram
/// of the top 16 bits of the order key (ws.histogram, filled by the caller or
/// here), one pass collecting the values of the few buckets that hold a
/// requested rank, then nth_element inside those buckets only.
inline void select_ranks(const double* data, std::uint64_t n, const std::vector<std::uint64_t>& ranks,
                         quantile_workspace& ws, bool histogram_ready, std::vector<double>& out) {
    auto& hist = ws.histogram;
    if (!histogram_ready) {
        hist.assign(radix_buckets, 0);
        for (std::uint64_t i = 0; i < n; ++i) ++hist[bucket_of(data[i])];
    }
    // bucket of each rank, and the first rank held by each needed bucket
    struct need {
        std::uint32_t bucket;
        std::uint64_t base;  // rank of the bucket's first element
        std::uint64_t offset = 0;  // where its candidates start
        std::uint64_t size = 0;
    };
    std::vector<need> needs;
    std::vector<std::size_t> rank_need(ranks.size());
    std::uint64_t below = 0;
    std::size_t r = 0;
    for (std::uint32_t b = 0; b < radix_buckets && r < ranks.size(); ++b) {
        const std::uint64_t c = hist[b];
        if (c == 0) continue;
        bool added = false;
        while (r < ranks.size() && ranks[r] < below + c) {
            if (!added) {
                needs.push_back(need{b, below, 0, c});
                added = true;
            }
            rank_need[r] = needs.size() - 1;
            ++r;
        }
        below += c;
    }
    std::uint64_t total = 0;
    for (auto& nd : needs) {
        nd.offset = total;
        total += nd.size;
    }
    // slot table: bucket -> index of its need + 1 (0: not needed)
    std::vector<std::uint32_t>& slot = ws.slots;
    slot.assign(radix_buckets, 0);
    for (std::size_t i = 0; i < needs.size(); ++i) slot[needs[i].bucket] = static_cast<std::uint32_t>(i + 1);
    ws.candidates.resize(total);
    std::vector<std::uint64_t> fill(needs.size(), 0);
    double* cand = ws.candidates.data();
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint32_t sl = slot[bucket_of(data[i])];
        if (sl) {
            const std::size_t k = sl - 1;
            cand[needs[k].offset + fill[k]++] = data[i];
        }
    }
    // select inside each needed bucket
    out.assign(ranks.size(), 0.0);
    std::size_t i = 0;
    while (i < ranks.size()) {
        const std::size_t k = rank_need[i];
        std::size_t j = i;
        std::vector<std::uint64_t> local;
        while (j < ranks.size() && rank_need[j] == k) local.push_back(ranks[j++] - needs[k].base);
        double* base = cand + needs[k].offset;
        multi_select(base, 0, needs[k].size, local.data(), 0, local.size());
        for (std::size_t q = i; q < j; ++q) out[q] = base[ranks[q] - needs[k].base];
        i = j;
    }
}

inline void check_probs(const std::vector<double>& probs) {
    for (std::size_t i = 0; i < probs.size(); ++i)
        if (!(probs[i] >= 0.0 && probs[i] <= 1.0))
            throw argument_error(concat("quantiles: probability ", probs[i], " at index ", i, " is outside [0, 1]"));
}

/// What a set of quantiles of n values needs: each one's position, and the
/// sorted, unique order statistics (ranks) those positions read.
struct quantile_plan {
    std::vector<quantile_position> pos;
    std::vector<std::uint64_t> ranks;
};

inline quantile_plan plan_quantiles(std::uint64_t n, const std::vector<double>& probs, quantile_method method) {
    quantile_plan plan;
    plan.pos.resize(probs.size());
    plan.ranks.reserve(2 * probs.size());
    for (std::size_t i = 0; i < probs.size(); ++i) {
        plan.pos[i] = locate_quantile(n, probs[i], method);
        plan.ranks.push_back(plan.pos[i].lo);
        plan.ranks.push_back(plan.pos[i].hi);
    }
    std::sort(plan.ranks.begin(), plan.ranks.end());
    plan.ranks.erase(std::unique(plan.ranks.begin(), plan.ranks.end()), plan.ranks.end());
    return plan;
}

/// The quantiles from the selected order statistics (stats[i] is the value
/// of plan.ranks[i]), each mapped by `map` (monotone) before numpy's lerp.
template <class F>
std::vector<double> finish_quantiles(const quantile_plan& plan, const std::vector<double>& stats, F map) {
    auto value_at = [&](std::uint64_t rank) {
        return map(stats[static_cast<std::size_t>(std::lower_bound(plan.ranks.begin(), plan.ranks.end(), rank) -
                                                  plan.ranks.begin())]);
    };
    std::vector<double> out(plan.pos.size());
    for (std::size_t i = 0; i < plan.pos.size(); ++i) {
        const auto& p = plan.pos[i];
        out[i] = p.interpolate ? numpy_lerp(value_at(p.lo), value_at(p.hi), p.gamma) : value_at(p.lo);
    }
    return out;
}

/// numpy's quantiles from data[0, n) (not modified), given a ready histogram or not.
inline std::vector<double> quantiles_from(const double* data, std::uint64_t n, const std::vector<double>& probs,
                                          quantile_method method, quantile_workspace& ws, bool histogram_ready) {
    check_probs(probs);
    if (n == 0) return std::vector<double>(probs.size(), std::numeric_limits<double>::quiet_NaN());  // empty-input rule
    const quantile_plan plan = plan_quantiles(n, probs, method);
    std::vector<double> stat;
    select_ranks(data, n, plan.ranks, ws, histogram_ready, stat);
    return finish_quantiles(plan, stat, [](double x) { return x; });
}

}  // namespace detail

/// Quantiles of data[0, n) for every p in probs (each in [0, 1]), exactly as
/// numpy.quantile(data, probs, method) returns them. The input is not
/// modified; `ws` is scratch (reuse it across calls). NaN is an error.
inline std::vector<double> quantiles(const double* data, std::uint64_t n, const std::vector<double>& probs,
                                     quantile_method method, quantile_workspace& ws) {
    for (std::uint64_t i = 0; i < n; ++i)
        if (std::isnan(data[i])) throw value_error(detail::concat("quantiles: NaN at index ", i), "values", 0, i, data[i]);
    return detail::quantiles_from(data, n, probs, method, ws, false);
}

/// Quantiles of [first, last) (any range of numbers; NaN is an error).
template <class It>
std::vector<double> quantiles(It first, It last, const std::vector<double>& probs,
                              quantile_method method = quantile_method::linear) {
    std::vector<double> values(first, last);
    quantile_workspace ws;
    return quantiles(values.data(), values.size(), probs, method, ws);
}

/// Which per-token quantity of a paired view.
enum class quantile_of { delta, abs_delta, ratio };

inline quantile_of parse_quantile_of(const std::string& s) {
    if (s == "delta") return quantile_of::delta;
    if (s == "abs_delta") return quantile_of::abs_delta;
    if (s == "ratio") return quantile_of::ratio;
    throw argument_error("unknown quantity '" + s + "' (expected delta, abs_delta or ratio)");
}

struct quantile_options {
    quantile_method method = quantile_method::linear;
    /// raise: a masked-in NaN/Inf (or positive) log-prob is a value_error
    /// naming its position; omit: NaN/Inf tokens are left out.
    nonfinite_policy nonfinite = nonfinite_policy::raise;
    double positive_tolerance = default_positive_tolerance;
};

/// Gathers the chosen quantity of every masked-in token of v into
/// ws.values and builds its radix histogram in the same pass. Returns the
/// number of tokens left out (policy omit).
template <class T, class M>
std::uint64_t gather_quantity(const paired_view<T, M>& v, quantile_of what, const quantile_options& o,
                              quantile_workspace& ws) {
    auto& out = ws.values;
    out.resize(v.size());  // upper bound; trimmed below
    double* dst = out.data();
    std::uint64_t count = 0;
    ws.histogram.assign(detail::radix_buckets, 0);
    std::uint64_t* hist = ws.histogram.data();
    std::uint64_t omitted = 0;
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) {
        const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
        for (std::uint64_t i = b; i < e; ++i) {
            // Branch-light: the value is always stored, the count advances
            // only for masked-in tokens; invalid ones take the slow path.
            const std::uint64_t m = v.counts(i) ? 1 : 0;
            const double a = to_double(v.train()[i]), r = to_double(v.rollout()[i]);
            const bool ok = (a - a == 0.0) & (r - r == 0.0) & (a <= o.positive_tolerance) & (r <= o.positive_tolerance);
            if (!ok && m) {
                if (o.nonfinite == nonfinite_policy::omit && !(std::isfinite(a) && std::isfinite(r))) {
                    ++omitted;
                    continue;
                }
                detail::throw_bad_token(v, s, b, static_cast<std::size_t>(e - b), o.nonfinite, o.positive_tolerance);
            }
            double x = a - r;
            if (what == quantile_of::abs_delta) x = std::fabs(x);
            else if (what == quantile_of::ratio) x = std::exp(detail::clamp_delta(x));
            dst[count] = x;
            count += m;
            hist[detail::bucket_of(x)] += m;
        }
    }
    out.resize(count);
    return omitted;
}

namespace detail {

/// Values that fill a large share of a bracket (ties: bf16 inputs give few
/// distinct delta values; delta = 0 alone can be ~15% of the tokens). The
/// SIMD pass counts such a value instead of storing every copy of it, and
/// the selection inside a bracket then skips over its run of equal values.
struct heavy_point {
    double value;
    std::size_t bracket;     // index of the merged bracket that holds it
    std::uint64_t count = 0;  // copies of it in the view
    std::uint64_t less = 0;   // stored candidates of its bracket below it
};

/// The heavy points of a sorted sample: runs of one value at least
/// 1/1024 of the sample long inside a bracket, at most `max_points` of the
/// longest, in increasing order of value.
inline std::vector<heavy_point> find_heavy_points(const std::vector<double>& sample,
                                                  const std::vector<std::pair<double, double>>& merged,
                                                  std::size_t max_points) {
    const std::size_t min_run = std::max<std::size_t>(16, sample.size() / 1024);
    std::vector<std::pair<std::size_t, heavy_point>> runs;
    for (std::size_t i = 0; i < sample.size();) {
        std::size_t e = i + 1;
        while (e < sample.size() && sample[e] == sample[i]) ++e;
        if (e - i >= min_run) {
            for (std::size_t j = 0; j < merged.size(); ++j)
                if (sample[i] >= merged[j].first && sample[i] <= merged[j].second) {
                    runs.push_back({e - i, heavy_point{sample[i], j}});
                    break;
                }
        }
        i = e;
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (runs.size() > max_points) runs.resize(max_points);
    std::vector<heavy_point> points;
    for (const auto& r : runs) points.push_back(r.second);
    std::sort(points.begin(), points.end(), [](const heavy_point& a, const heavy_point& b) { return a.value < b.value; });
    return points;
}

/// Rank t inside bracket j, whose sorted values are its stored candidates
/// interleaved with the runs of its heavy points: true and `value` when t
/// falls in a run, else false and `cand_rank`, t's rank among the stored
/// candidates.
inline bool rank_in_heavy_run(const std::vector<heavy_point>& points, std::size_t j, std::uint64_t t,
                              double& value, std::uint64_t& cand_rank) {
    std::uint64_t skipped = 0;  // copies of heavy points below t
    for (const auto& h : points) {
        if (h.bracket != j) continue;
        const std::uint64_t start = h.less + skipped;
        if (t < start) break;
        if (t < start + h.count) {
            value = h.value;
            return true;
        }
        skipped += h.count;
    }
    cand_rank = t - skipped;
    return false;
}

/// Sample-bracket selection (Floyd-Rivest style) for large views: a
/// systematic sample (every 32nd position, at most 2^17 positions) gives,
/// for every requested rank, a narrow bracket of values that holds it with
/// overwhelming probability; one SIMD pass over the view counts the values
/// at or above each bracket boundary and keeps only the values inside
/// brackets, except the heavy points (long runs of one value, see
/// heavy_point), which it only counts; nth_element then runs on the kept
/// values. (Every 32nd, not every 8th, at 2^20 tokens: sorting the larger
/// sample cost more than the wider brackets save, measured on issue 18's
/// bf16 case; 2^17 positions stay best at 2^25.) Selection is on delta or
/// |delta| (rho = exp(clamp(delta)) is monotone in delta, so its order
/// statistics are mapped afterwards). Returns false (caller falls back to
/// radix select) when a rank is not inside its bracket; the result is then
/// never approximate.
/// The brackets of a bracket selection: merged value intervals around the
/// needed ranks, their boundaries (x >= bound[2j] enters bracket j,
/// x >= bound[2j+1] leaves it) and the heavy points inside them.
struct bracket_set {
    std::vector<std::pair<double, double>> merged;
    std::vector<double> bound;
    std::vector<heavy_point> points;
};

/// A systematic sample of delta (or |delta|) over the masked-in finite
/// tokens: every `stride`-th position; `visited` counts the positions seen.
template <class T, class M>
std::vector<double> systematic_sample(const paired_view<T, M>& v, bool absolute, std::uint64_t stride,
                                      std::uint64_t& visited) {
    std::vector<double> sample;
    visited = 0;
    for (std::uint64_t i = stride / 2; i < v.size(); i += stride) {
        ++visited;
        if (!v.counts(i)) continue;
        const double a = to_double(v.train()[i]), r = to_double(v.rollout()[i]);
        if (std::isfinite(a) && std::isfinite(r)) sample.push_back(absolute ? std::fabs(a - r) : a - r);
    }
    return sample;
}

/// Brackets of the sorted sample around every rank the quantile methods
/// need (each rank p and its neighbours p -+ 1/n), merged where they
/// overlap. Empty when more than 16 remain.
inline bracket_set make_brackets(const std::vector<double>& sample, const std::vector<double>& probs, double n_est) {
    const double m = static_cast<double>(sample.size());
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::pair<double, double>> br;
    for (double p : probs) {
        for (double q : {std::max(0.0, p - 1.0 / n_est), p, std::min(1.0, p + 1.0 / n_est)}) {
            const double idx = q * (m - 1);
            const double w = 3.0 * std::sqrt(m * q * (1 - q)) + 4.0;  // a miss (~1e-3 per edge) falls back
            const double lo_i = std::floor(idx - w), hi_i = std::ceil(idx + w);
            const double lo = lo_i < 0 ? -inf : sample[static_cast<std::size_t>(lo_i)];
            const double hi = hi_i > m - 1 ? inf : sample[static_cast<std::size_t>(hi_i)];
            br.emplace_back(lo, hi);
        }
    }
    std::sort(br.begin(), br.end());
    bracket_set set;
    for (const auto& b : br) {
        if (!set.merged.empty() && b.first <= set.merged.back().second)
            set.merged.back().second = std::max(set.merged.back().second, b.second);
        else
            set.merged.push_back(b);
    }
    if (set.merged.size() > 16) return {};
    for (const auto& b : set.merged) {
        set.bound.push_back(b.first);
        set.bound.push_back(std::nextafter(b.second, inf));
    }
    set.points = find_heavy_points(sample, set.merged, 8);
    return set;
}

/// Appends the lanes of x where `inside` holds to combined[used...] (one
/// buffer for all brackets, split by bracket afterwards).
template <class V>
LOGRATIO_ALWAYS_INLINE inline void store_inside(const V& x, const typename simd_ops<V>::mask& inside,
                                                std::vector<double>& combined, std::size_t& used) {
    using ops = simd_ops<V>;
    constexpr std::size_t L = ops::size;
    if (combined.size() < used + L) combined.resize(2 * (used + L));
#if LOGRATIO_X86
    if constexpr (is_simd_batch<V>::template avx512<0>) {
        using reg = typename ops::mask::register_type;
        _mm512_mask_compressstoreu_pd(combined.data() + used, static_cast<reg>(inside), x);
        used += ops::count(inside);
        return;
    }
#endif
    alignas(64) double xs[L];
    alignas(64) double in[L];
    if constexpr (L == 1) {
        xs[0] = x;
        in[0] = inside ? 1.0 : 0.0;
    } else {
        x.store_aligned(xs);
        ops::select(inside, ops::splat(1.0), ops::splat(0.0)).store_aligned(in);
    }
    for (std::size_t l = 0; l < L; ++l)
        if (in[l] != 0.0) combined[used++] = xs[l];
}

/// What the one pass over the view found: per lower boundary the count at
/// or above it, per heavy point its copies, the values inside brackets
/// (combined[0, used), any bracket), the masked-in token count.
struct bracket_counts {
    std::vector<std::uint64_t> ge;
    std::vector<std::uint64_t> point_count;
    std::size_t used = 0;
    std::uint64_t total = 0;
};

/// The one SIMD pass of a bracket selection: validates every sequence,
/// counts, and stores the in-bracket values that are not heavy points into
/// `combined` (grown as needed).
template <class V, class T, class M>
bracket_counts count_brackets(const paired_view<T, M>& v, bool absolute, const quantile_options& o,
                              const bracket_set& set, std::vector<double>& combined) {
    using ops = simd_ops<V>;
    using mask_t = typename ops::mask;
    const std::size_t NB = set.bound.size(), NP = set.points.size();
    std::vector<V> vb(NB), vp(NP);
    for (std::size_t j = 0; j < NB; ++j) vb[j] = ops::splat(set.bound[j]);
    for (std::size_t k = 0; k < NP; ++k) vp[k] = ops::splat(set.points[k].value);
    bracket_counts c;
    c.ge.assign(NB, 0);
    const bool omit = o.nonfinite == nonfinite_policy::omit;
    const V zero = ops::splat(0.0), one = ops::splat(1.0);
    const V ninf = ops::splat(-std::numeric_limits<double>::infinity());
    std::vector<V> pc(NP, zero);  // copies of each heavy point, per lane
    chunk_buffers buf;
    for (std::uint64_t s = 0; s < v.num_sequences(); ++s) {
        const std::uint64_t b = v.sequence_begin(s), e = v.sequence_end(s);
        V row_t = zero, row_r = zero, row_top = ninf;
        auto step = [&](const V& t0, const V& r0, mask_t on) LOGRATIO_ALWAYS_INLINE {
            if (omit) on = on & ((t0 - t0) == zero) & ((r0 - r0) == zero);
            const V t = ops::select(on, t0, zero);
            const V r = ops::select(on, r0, zero);
            row_top = ops::max(row_top, ops::max(t, r));
            row_t = row_t + t;
            row_r = row_r + r;
            V x = t - r;
            if (absolute) x = ops::abs(x);
            mask_t inside = zero != zero;
            c.total += ops::count(on);
            for (std::size_t j = 0; j < NB; j += 2) {
                // only the lower boundaries are counted: the count at or above
                // an upper one is that of the lower one minus the bracket's values
                const mask_t a = on & (x >= vb[j]);
                c.ge[j] += ops::count(a);
                inside = inside | (a & (x < vb[j + 1]));
            }
            // Heavy points: counted, not stored. Per-lane double counters (exact
            // below 2^53) and one mask-out for all points: ~1.5x faster at AVX2
            // than a popcount and a != per point. The mask-out goes through
            // select, not batch_bool ^ (wrong results seen at AVX-512 with xsimd 8.1).
            if (NP) {
                mask_t heavy = x == vp[0];
                pc[0] = pc[0] + ops::select(on & heavy, one, zero);
                for (std::size_t k = 1; k < NP; ++k) {
                    const mask_t eq = x == vp[k];
                    pc[k] = pc[k] + ops::select(on & eq, one, zero);
                    heavy = heavy | eq;
                }
                inside = inside & (ops::select(heavy, one, zero) == zero);
            }
            if (!ops::none(inside)) store_inside<V>(x, inside, combined, c.used);
        };
        for_each_batch<V>(v, b, e, buf, step);
        guard_sequence(v, s, ops::sum(row_t), ops::sum(row_r), row_top, o.nonfinite, o.positive_tolerance);
    }
    for (std::size_t k = 0; k < NP; ++k) c.point_count.push_back(static_cast<std::uint64_t>(ops::sum(pc[k])));
    return c;
}

/// The values of plan.ranks from the pass's counts and candidates (stats[i]
/// for plan.ranks[i]); false when a rank lies outside every bracket.
inline bool select_from_brackets(bracket_set& set, bracket_counts& c, const std::vector<double>& combined,
                                 const quantile_plan& plan, std::vector<double>& stats) {
    const std::size_t B = set.merged.size();
    std::vector<std::vector<double>> cand(B);
    for (std::size_t q = 0; q < c.used; ++q) {
        const double x = combined[q];
        std::size_t j = 0;
        while (!(x >= set.bound[2 * j] && x < set.bound[2 * j + 1])) ++j;
        cand[j].push_back(x);
    }
    std::vector<std::uint64_t> in_bracket(B, 0);
    for (std::size_t j = 0; j < B; ++j) in_bracket[j] = cand[j].size();
    for (std::size_t k = 0; k < set.points.size(); ++k) {
        heavy_point& h = set.points[k];
        h.count = c.point_count[k];
        in_bracket[h.bracket] += h.count;
        for (double x : cand[h.bracket]) h.less += x < h.value;
    }
    for (std::size_t j = 0; j < B; ++j) c.ge[2 * j + 1] = c.ge[2 * j] - in_bracket[j];
    // every needed rank must fall inside a bracket (a stored candidate or a
    // heavy point's run)
    std::vector<std::vector<std::uint64_t>> local(B);
    struct where {
        std::size_t bracket = 0;  // B: a heavy point's value
        std::uint64_t cand_rank = 0;
        double value = 0;
    };
    std::vector<where> at(plan.ranks.size());
    for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
        const std::uint64_t r = plan.ranks[i];
        bool found = false;
        for (std::size_t j = 0; j < B && !found; ++j) {
            const std::uint64_t below = c.total - c.ge[2 * j];
            if (r < below || r >= below + in_bracket[j]) continue;
            found = true;
            if (rank_in_heavy_run(set.points, j, r - below, at[i].value, at[i].cand_rank)) {
                at[i].bracket = B;
            } else {
                at[i].bracket = j;
                local[j].push_back(at[i].cand_rank);
            }
        }
        if (!found) return false;
    }
    stats.clear();
    for (std::size_t j = 0; j < B; ++j)
        if (!local[j].empty()) multi_select(cand[j].data(), 0, cand[j].size(), local[j].data(), 0, local[j].size());
    for (const auto& w : at) stats.push_back(w.bracket == B ? w.value : cand[w.bracket][w.cand_rank]);
    return true;
}

/// Sample-bracket selection (Floyd-Rivest style) for large views: a
/// systematic sample (every 32nd position, at most 2^17 positions) gives,
/// for every requested rank, a narrow bracket of values that holds it with
/// overwhelming probability; one SIMD pass over the view counts the values
/// at or above each bracket boundary and keeps only the values inside
/// brackets, except the heavy points (long runs of one value, see
/// heavy_point), which it only counts; nth_element then runs on the kept
/// values. (Every 32nd, not every 8th, at 2^20 tokens: sorting the larger
/// sample cost more than the wider brackets save, measured on issue 18's
/// bf16 case; 2^17 positions stay best at 2^25.) Selection is on delta or
/// |delta| (rho = exp(clamp(delta)) is monotone in delta, so its order
/// statistics are mapped afterwards). Returns false (caller falls back to
/// radix select) when a rank is not inside its bracket; the result is then
/// never approximate.
template <class V, class T, class M>
bool bracket_select(const paired_view<T, M>& v, bool absolute, const std::vector<double>& probs,
                    const quantile_options& o, quantile_workspace& ws, std::vector<double>& stats,
                    quantile_plan& plan, std::uint64_t& count) {
    const std::uint64_t size = v.size();
    // Worth it only with wide lanes and direct loads (AVX2, AVX-512) and large views.
    if (!is_simd_batch<V>::template direct<T, M> || size < (std::uint64_t(1) << 20)) return false;
    std::uint64_t visited = 0;
    std::vector<double> sample =
        systematic_sample(v, absolute, std::max<std::uint64_t>(size >> 17, 32), visited);
    if (sample.size() < 1024) return false;
    std::sort(sample.begin(), sample.end());
    const double n_est = static_cast<double>(sample.size()) / static_cast<double>(visited) * static_cast<double>(size);
    bracket_set set = make_brackets(sample, probs, n_est);
    if (set.merged.empty()) return false;
    std::vector<double>& combined = ws.candidates;
    combined.resize(std::size_t(1) << 16);
    bracket_counts c = count_brackets<V>(v, absolute, o, set, combined);
    count = c.total;
    if (c.total == 0) return true;
    plan = plan_quantiles(c.total, probs, o.method);
    return select_from_brackets(set, c, combined, plan, stats);
}

}  // namespace detail

/// Exact quantiles (numpy semantics) of delta, |delta| or rho over the
/// masked-in tokens of a view. No token selected: one NaN per probability (the empty-input rule, core/error.hpp). Large
/// views use one SIMD pass with sample brackets; anything the brackets miss
/// falls back to radix select, so the result is always exact.
template <class T, class M>
std::vector<double> quantiles(const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,
                              const quantile_options& o, quantile_workspace& ws) {
    detail::check_probs(probs);
    std::vector<double> stats;
    detail::quantile_plan plan;
    std::uint64_t count = 0;
    if (detail::bracket_select<xsimd::batch<double, xsimd::default_arch>>(v, what == quantile_of::abs_delta, probs, o,
                                                                         ws, stats, plan, count)) {
        if (count == 0) return std::vector<double>(probs.size(), std::numeric_limits<double>::quiet_NaN());
        return detail::finish_quantiles(plan, stats, [what](double x) {
            return what == quantile_of::ratio ? std::exp(detail::clamp_delta(x)) : x;  // rho is monotone in delta
        });
    }
    gather_quantity(v, what, o, ws);
    return detail::quantiles_from(ws.values.data(), ws.values.size(), probs, o.method, ws, true);
}
template <class T, class M>
std::vector<double> quantiles(const paired_view<T, M>& v, quantile_of what, const std::vector<double>& probs,
                              const quantile_options& o = {}) {
    quantile_workspace ws;
    return quantiles(v, what, probs, o, ws);
}

LOGRATIO_NAMESPACE_END
