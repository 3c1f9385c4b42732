#pragma once
// Where the mismatch lives: δ = l_T − l_E statistics broken down by response
// position and by rollout probability, and the joint density of (p_T, p_E).
//
//   by_position[b]      position 0 | 1 | 2–3 | 4–7 | … (b = bit width of the position)
//   by_rollout_prob[b]  p_E = exp(l_E) on a log-odds scale: 16 buckets of width 2
//                       over logit(p_E) in [−16, 16] (the outer buckets take the rest)
//   joint[i * 64 + j]   token count with logit(p_T) in bin i and logit(p_E) in bin j,
//                       64 bins of width 0.5 over [−16, 16] (outer bins take the rest)
//
// Each bucket holds count, Σδ, Σ|δ|, max|δ| and Σ(e^δ − 1 − δ) (kl_k3's term),
// so the bucket values are mean δ, mean |δ|, max |δ| and kl_k3 of SPEC over the
// bucket's tokens. Plain values: merge() adds (max for max|δ|) and is exact
// for the counts; serialize() writes "LRDB", u16 version, little-endian fields.
//
// The probability bins are defined on m = −l rounded to float (an exact
// function of the bf16/f16/f32 inputs): bin b holds e[b+1] < m ≤ e[b] with
// e[b] = log1p(exp(−x_b)), x_b = −16 + 0.5 b, the −log p of the bin's lower
// logit edge. The kernel finds the bin without a log: a 2^15-entry table
// indexed by the top bits of m's float encoding (cells 0.8% wide, narrower than
// any bin, so a cell holds at most one edge) and one comparison with that edge.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../core/bytes.hpp"
#include "../core/error.hpp"

LOGRATIO_NAMESPACE_BEGIN
namespace doctor {

/// Count, mean δ, mean |δ|, max |δ| and kl_k3 of a set of tokens.
struct delta_stats {
    std::uint64_t count = 0;
    double sum_delta = 0, sum_abs = 0, max_abs = 0, sum_k3 = 0;

    void merge(const delta_stats& o) noexcept {
        count += o.count;
        sum_delta += o.sum_delta;
        sum_abs += o.sum_abs;
        max_abs = o.max_abs > max_abs ? o.max_abs : max_abs;
        sum_k3 += o.sum_k3;
    }
    double mean_delta() const noexcept { return count ? sum_delta / static_cast<double>(count) : NAN; }
    double mean_abs() const noexcept { return count ? sum_abs / static_cast<double>(count) : NAN; }
    double kl_k3() const noexcept { return count ? sum_k3 / static_cast<double>(count) : NAN; }
};

/// The log-odds axis of p = exp(l): 64 bins of width 0.5 over [−16, 16].
struct prob_axis {
    static constexpr int bins = 64;
    static constexpr double lo = -16.0, width = 0.5;
    /// Lower logit edge of bin b (b in [0, 64]).
    static double edge_logit(int b) noexcept { return lo + width * b; }
    /// Bin center as a log-prob (for plots and the temperature fit).
    static double center_logprob(int b) noexcept {
        const double x = lo + width * (b + 0.5);
        return -std::log1p(std::exp(-x));
    }
};

namespace detail {

struct prob_lut {
    std::array<float, prob_axis::bins + 1> edge{};  ///< e[b] = −log p at the lower logit edge of bin b
    std::vector<std::uint8_t> cell;                 ///< bin of the smallest m in each cell
    prob_lut() : cell(std::size_t(1) << 15) {
        for (int b = 0; b <= prob_axis::bins; ++b)
            edge[b] = static_cast<float>(std::log1p(std::exp(-prob_axis::edge_logit(b))));
        edge[0] = INFINITY;
        edge[prob_axis::bins] = -INFINITY;
        for (std::uint32_t c = 0; c < cell.size(); ++c) {
            const std::uint32_t bits = c << 16;
            float m;
            std::memcpy(&m, &bits, 4);
            cell[c] = static_cast<std::uint8_t>(exact_bin(std::isnan(m) ? INFINITY : m));
        }
    }
    /// bin(m) = the b with e[b+1] < m <= e[b] (by definition; table-free).
    int exact_bin(float m) const noexcept {
        int b = 0;
        while (b + 1 < prob_axis::bins && m <= edge[b + 1]) ++b;
        return b;
    }
};

inline const prob_lut& the_prob_lut() {
    static const prob_lut t;
    return t;
}

}  // namespace detail

/// The bin of a log-prob l (<= 0; NaN must not reach here) on prob_axis.
inline int prob_bin(const detail::prob_lut& t, double l) noexcept {
    float m = static_cast<float>(-l);
    if (!(m > 0.0f)) m = 0.0f;  // l = 0 (or a tolerated tiny positive l): p = 1
    std::uint32_t bits;
    std::memcpy(&bits, &m, 4);
    int b = t.cell[bits >> 16];
    if (m > t.edge[b]) --b;  // the one edge inside this cell
    return b;
}

/// The position bucket: 0 | 1 | 2–3 | 4–7 | …: the bit width of the position.
inline int position_bucket(std::uint64_t pos) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return pos ? 64 - __builtin_clzll(pos) : 0;
#else
    int b = 0;
    for (; pos; pos >>= 1) ++b;
    return b;
#endif
}

struct breakdowns {
    static constexpr int position_buckets = 65;  ///< every 64-bit position
    static constexpr int prob_buckets = 16;      ///< 4 bins of the 64-bin axis each
    std::array<delta_stats, position_buckets> by_position{};
    std::array<delta_stats, prob_buckets> by_rollout_prob{};
    std::vector<std::uint64_t> joint = std::vector<std::uint64_t>(prob_axis::bins * prob_axis::bins, 0);

    /// First and last position bucket [lo, hi) lower bound of a bucket: 0, 1, 2, 4, …
    static std::uint64_t position_lo(int b) noexcept { return b == 0 ? 0 : std::uint64_t(1) << (b - 1); }
    static std::uint64_t position_hi(int b) noexcept { return b == 0 ? 0 : (std::uint64_t(1) << (b - 1)) * 2 - 1; }
    /// Logit range of rollout-probability bucket b.
    static double prob_bucket_logit_lo(int b) noexcept { return prob_axis::edge_logit(4 * b); }
    static double prob_bucket_logit_hi(int b) noexcept { return prob_axis::edge_logit(4 * b + 4); }

    std::uint64_t tokens() const noexcept {
        std::uint64_t n = 0;
        for (const auto& s : by_position) n += s.count;
        return n;
    }
    delta_stats total() const noexcept {
        delta_stats t;
        for (const auto& s : by_position) t.merge(s);
        return t;
    }

    void merge(const breakdowns& o) {
        for (int b = 0; b < position_buckets; ++b) by_position[b].merge(o.by_position[b]);
        for (int b = 0; b < prob_buckets; ++b) by_rollout_prob[b].merge(o.by_rollout_prob[b]);
        for (std::size_t i = 0; i < joint.size(); ++i) joint[i] += o.joint[i];
    }

    static constexpr std::uint16_t format_version = 1;

    std::vector<std::uint8_t> serialize() const {
        logratio::detail::byte_writer w;
        w.raw("LRDB", 4);
        w.u16(format_version);
        w.u16(position_buckets);
        w.u16(prob_buckets);
        w.u16(prob_axis::bins);
        auto put = [&](const delta_stats& s) {
            w.u64(s.count);
            for (double v : {s.sum_delta, s.sum_abs, s.max_abs, s.sum_k3}) w.f64(v);
        };
        for (const auto& s : by_position) put(s);
        for (const auto& s : by_rollout_prob) put(s);
        for (auto c : joint) w.u64(c);
        return w.take();
    }

    static breakdowns deserialize(const void* data, std::size_t size) {
        logratio::detail::byte_reader r(data, size, "doctor breakdowns");
        r.expect_header("LRDB", format_version);
        if (r.u16() != position_buckets || r.u16() != prob_buckets || r.u16() != prob_axis::bins)
            r.fail("bucket counts differ from this build's");
        breakdowns b;
        auto get = [&](delta_stats& s) {
            s.count = r.u64();
            for (double* v : {&s.sum_delta, &s.sum_abs, &s.max_abs, &s.sum_k3}) *v = r.f64();
            if (!(s.max_abs >= 0) || !(s.sum_abs >= 0)) r.fail("negative or NaN |delta| sums");
        };
        for (auto& s : b.by_position) get(s);
        for (auto& s : b.by_rollout_prob) get(s);
        for (auto& c : b.joint) c = r.u64();
        r.expect_end();
        std::uint64_t np = 0, nj = 0;
        for (const auto& s : b.by_rollout_prob) np += s.count;
        for (auto c : b.joint) nj += c;
        if (np != b.tokens() || nj != b.tokens()) r.fail("inconsistent token counts between the breakdowns");
        return b;
    }
    static breakdowns deserialize(const std::vector<std::uint8_t>& bytes) {
        return deserialize(bytes.data(), bytes.size());
    }
};

}  // namespace doctor
LOGRATIO_NAMESPACE_END
