#pragma once
// A mergeable streaming quantile sketch (Karnin, Lang, Liberty, "Optimal
// Quantile Approximation in Streams", 2016) for float or double values,
// with a rank-error bound that is proven for the sketch at hand.
//
//   logratio::kll_sketch<float> s(200);
//   s.update(values, n);                 // batched: sorts big chunks at once
//   other.merge(s);                      // any order, any number of sketches
//   float q = s.quantile(0.999);         // approximate 0.999-quantile
//   double e = s.normalized_rank_error(); // |rank error| / n bound, 99% confidence
//   auto bytes = s.serialize();          // versioned little-endian bytes
//
// Structure: compactors (levels) h = 0..H-1; an item at level h stands for
// 2^h input items. Level capacities shrink geometrically from the top
// (k at the top, factor 2/3, at least 8). A full level is sorted and
// compacted: one item in two, from a random offset, moves up a level.
//
// Error bound. For a fixed query x, compacting a sorted run at level h
// changes the estimated count of items below x by 0 or +-2^h with equal
// probability (the offset is a fair coin), independently of the past: the
// errors form a martingale with bounded increments. Azuma-Hoeffding gives
//   P(|rank error| >= t) <= 2 exp(-t^2 / (2 V)),   V = sum over compactions of w^2,
// so with probability 1 - delta the normalized rank error is at most
//   sqrt(2 V ln(2/delta)) / n.
// The sketch accumulates V exactly (merge adds it), so
// normalized_rank_error(confidence) is a bound for this sketch, not an
// estimate. Batched updates sort a chunk of 2^16 values and keep every 2^j-th
// one from a uniform random offset (one compaction of weight 2^j: error in
// (-2^j, 2^j), mean 0), which the bound accounts for the same way.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/bytes.hpp"
#include "../detail/lazy_cache.hpp"
#include "../core/error.hpp"

LOGRATIO_NAMESPACE_BEGIN

template <class T = float>
class kll_sketch {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value, "kll_sketch holds float or double");

public:
    using value_type = T;
    static constexpr std::uint16_t default_k = 200;
    static constexpr std::uint16_t min_k = 8;
    static constexpr std::uint32_t min_level_capacity = 8;
    static constexpr std::size_t batch_chunk = std::size_t(1) << 16;

    explicit kll_sketch(std::uint16_t k = default_k, std::uint64_t seed = 0x9E3779B97F4A7C15ull) : k_(k), rng_(seed | 1) {
        if (k < min_k) throw argument_error(detail::concat("kll_sketch: k = ", k, ", must be at least ", min_k));
        levels_.resize(1);
        refresh();
    }

    std::uint16_t k() const noexcept { return k_; }
    std::uint64_t n() const noexcept { return n_; }
    bool empty() const noexcept { return n_ == 0; }
    T min_value() const { return checked(min_); }
    T max_value() const { return checked(max_); }
    std::size_t num_levels() const noexcept { return levels_.size(); }
    std::size_t num_retained() const noexcept {
        std::size_t r = 0;
        for (const auto& l : levels_) r += l.size();
        return r;
    }

    /// Adds one value (NaN values are ignored, as they have no rank).
    void update(T x) {
        if (std::isnan(x)) return;
        note_extremes(x, x);
        levels_[0].push_back(x);
        ++n_;
        if (++retained_ > capacity_) shrink();
    }

    /// Adds n values. Chunks of 2^16 values are sorted at once and enter
    /// the sketch at a higher level; this is much faster than n single
    /// updates and keeps the error bound (see the header comment).
    void update(const T* data, std::size_t count) {
        std::size_t i = 0;
        std::vector<T>& chunk = scratch_;
        while (i < count) {
            const std::size_t take = std::min(batch_chunk, count - i);
            chunk.clear();
            T lo = std::numeric_limits<T>::infinity(), hi = -std::numeric_limits<T>::infinity();
            for (std::size_t q = i; q < i + take; ++q) {
                const T x = data[q];
                if (std::isnan(x)) continue;
                chunk.push_back(x);
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            i += take;
            const unsigned j = chunk_level();
            if (chunk.size() < batch_chunk || j == 0) {
                for (T x : chunk) update(x);
                continue;
            }
            note_extremes(lo, hi);
            radix_sort(chunk);
            const std::uint64_t step = std::uint64_t(1) << j;
            const std::uint64_t offset = next_random() & (step - 1);
            promoted_.clear();
            for (std::uint64_t p = offset; p < chunk.size(); p += step) promoted_.push_back(chunk[p]);
            error_variance_ += static_cast<double>(step) * static_cast<double>(step);
            n_ += chunk.size();
            if (levels_.size() <= j) levels_.resize(j + 1);
            merge_sorted_into(levels_[j], promoted_.data(), promoted_.size());
            refresh();
            shrink();
        }
    }
    template <class C>
    void update_all(const C& values) {
        update(std::data(values), std::size(values));
    }

    /// Merges another sketch into this one (any k: the result keeps this k).
    void merge(const kll_sketch& o) {
        if (o.n_ == 0) return;
        note_extremes(o.min_, o.max_);
        if (levels_.size() < o.levels_.size()) levels_.resize(o.levels_.size());
        levels_[0].insert(levels_[0].end(), o.levels_[0].begin(), o.levels_[0].end());
        for (std::size_t h = 1; h < o.levels_.size(); ++h)
            merge_sorted_into(levels_[h], o.levels_[h].data(), o.levels_[h].size());
        n_ += o.n_;
        error_variance_ += o.error_variance_;
        refresh();
        shrink();
    }

    /// Approximate p-quantile (p in [0, 1]): the smallest retained value
    /// whose estimated normalized rank (fraction of items <= it) is >= p;
    /// p = 0 and p = 1 give the exact minimum and maximum.
    T quantile(double p) const {
        if (!(p >= 0.0 && p <= 1.0)) throw argument_error(detail::concat("kll_sketch::quantile: p = ", p, " is outside [0, 1]"));
        if (n_ == 0) return std::numeric_limits<T>::quiet_NaN();  // the empty-input rule
        if (p == 0.0) return min_;
        if (p == 1.0) return max_;
        const auto& sv = sorted_view();
        const double target = p * static_cast<double>(n_);
        // first entry whose cumulative weight reaches the target rank
        const auto it = std::partition_point(sv.begin(), sv.end(),
                                             [&](const weighted& e) { return static_cast<double>(e.cum) < target; });
        return it == sv.end() ? max_ : it->value;
    }
    std::vector<T> quantiles(const std::vector<double>& ps) const {
        std::vector<T> out;
        for (double p : ps) out.push_back(quantile(p));
        return out;
    }

    /// Estimated normalized rank of x: the fraction of items <= x
    /// (inclusive) or < x (exclusive).
    double rank(T x, bool inclusive = true) const {
        if (n_ == 0) return std::numeric_limits<double>::quiet_NaN();  // the empty-input rule
        const auto& sv = sorted_view();
        // entries counted: value <= x (inclusive) or value < x (exclusive)
        const auto it = std::partition_point(sv.begin(), sv.end(), [&](const weighted& e) {
            return inclusive ? e.value <= x : e.value < x;  // a NaN x counts nothing
        });
        const std::uint64_t below = it == sv.begin() ? 0 : std::prev(it)->cum;
        return static_cast<double>(below) / static_cast<double>(n_);
    }

    /// CDF at sorted split points: ranks (inclusive) at each split, then 1.
    std::vector<double> cdf(const std::vector<T>& splits) const {
        for (std::size_t i = 1; i < splits.size(); ++i)
            if (!(splits[i - 1] < splits[i]))
                throw argument_error(detail::concat("kll_sketch::cdf: split points must increase (index ", i, ")"));
        std::vector<double> out;
        for (T s : splits) out.push_back(rank(s, true));
        out.push_back(1.0);
        return out;
    }
    /// Mass between consecutive split points (the differences of cdf()).
    std::vector<double> pmf(const std::vector<T>& splits) const {
        auto c = cdf(splits);
        for (std::size_t i = c.size(); i-- > 1;) c[i] -= c[i - 1];
        return c;
    }

    /// Proven bound on |estimated rank - true rank| / n for any single
    /// query, holding with probability `confidence` (Azuma-Hoeffding over
    /// the compactions this sketch and its merged inputs performed). 0 while
    /// nothing was compacted (the sketch is exact).
    double normalized_rank_error(double confidence = 0.99) const {
        if (!(confidence > 0.0 && confidence < 1.0))
            throw argument_error("kll_sketch::normalized_rank_error: confidence must be in (0, 1)");
        if (n_ == 0 || error_variance_ == 0.0) return 0.0;
        return std::sqrt(2.0 * error_variance_ * std::log(2.0 / (1.0 - confidence))) / static_cast<double>(n_);
    }
    double error_variance() const noexcept { return error_variance_; }

    // ---- serialization: "LRKL", u16 version, u8 value bytes, u16 k, u64 n,
    // f64 min, max, error variance, u16 levels, per level u32 size + values.
    static constexpr std::uint16_t format_version = 1;

    std::vector<std::uint8_t> serialize() const {
        detail::byte_writer w;
        w.raw("LRKL", 4);
        w.u16(format_version);
        w.u8(static_cast<std::uint8_t>(sizeof(T)));
        w.u16(k_);
        w.u64(n_);
        w.f64(static_cast<double>(min_));
        w.f64(static_cast<double>(max_));
        w.f64(error_variance_);
        w.u16(static_cast<std::uint16_t>(levels_.size()));
        for (const auto& l : levels_) {
            w.u32(static_cast<std::uint32_t>(l.size()));
            for (T v : l) {
                if constexpr (sizeof(T) == 4) {
                    std::uint32_t u;
                    std::memcpy(&u, &v, 4);
                    w.u32(u);
                } else {
                    w.f64(v);
                }
            }
        }
        return w.take();
    }

    static kll_sketch deserialize(const void* data, std::size_t size) {
        detail::byte_reader r(data, size, "kll_sketch");
        r.expect_header("LRKL", format_version);
        const std::uint8_t vb = r.u8();
        if (vb != sizeof(T)) r.fail(detail::concat("holds ", int(vb), "-byte values, this sketch type ", sizeof(T)));
        const std::uint16_t k = r.u16();
        if (k < min_k) r.fail(detail::concat("k = ", k, " is below ", min_k));
        kll_sketch s(k);
        s.n_ = r.u64();
        s.min_ = static_cast<T>(r.f64());
        s.max_ = static_cast<T>(r.f64());
        s.error_variance_ = r.f64();
        if (!(s.error_variance_ >= 0.0) || !std::isfinite(s.error_variance_)) r.fail("invalid error variance");
        const std::uint16_t H = r.u16();
        if (H == 0 || H > 64) r.fail(detail::concat(H, " levels (must be 1..64)"));
        s.levels_.assign(H, {});
        long double weight = 0;
        for (std::uint16_t h = 0; h < H; ++h) {
            const std::uint32_t len = r.u32();
            if (static_cast<std::uint64_t>(len) * sizeof(T) > r.remaining())
                r.fail(detail::concat("level ", h, " claims ", len, " values, more than the bytes left"));
            auto& l = s.levels_[h];
            l.resize(len);
            for (auto& v : l) {
                if constexpr (sizeof(T) == 4) {
                    const std::uint32_t u = r.u32();
                    std::memcpy(&v, &u, 4);
                } else {
                    v = r.f64();
                }
                if (std::isnan(v) || v < s.min_ || v > s.max_) r.fail(detail::concat("value out of [min, max] at level ", h));
            }
            if (h > 0 && !std::is_sorted(l.begin(), l.end())) r.fail(detail::concat("level ", h, " is not sorted"));
            weight += static_cast<long double>(len) * std::ldexp(1.0L, h);
        }
        r.expect_end();
        if (weight != static_cast<long double>(s.n_)) r.fail("level weights do not add up to n");
        if (s.n_ > 0 && !(s.min_ <= s.max_)) r.fail("invalid min/max");
        s.refresh();
        if (s.n_ == 0 && s.num_retained() != 0) r.fail("empty sketch with values");
        return s;
    }
    static kll_sketch deserialize(const std::vector<std::uint8_t>& b) { return deserialize(b.data(), b.size()); }

private:
    struct weighted {
        T value;
        std::uint64_t cum;  // cumulative weight up to and including this value
    };

    T checked(T v) const {
        if (n_ == 0) return std::numeric_limits<T>::quiet_NaN();  // the empty-input rule
        return v;
    }
    void note_extremes(T lo, T hi) {
        if (n_ == 0 && num_retained() == 0) {
            min_ = lo;
            max_ = hi;
        } else {
            min_ = std::min(min_, lo);
            max_ = std::max(max_, hi);
        }
    }

    std::uint32_t level_capacity(std::size_t h) const {
        const std::size_t depth = levels_.size() - 1 - h;
        const double c = static_cast<double>(k_) * std::pow(2.0 / 3.0, static_cast<double>(depth));
        return std::max(min_level_capacity, static_cast<std::uint32_t>(c));
    }
    std::size_t capacity() const {
        std::size_t c = 0;
        for (std::size_t h = 0; h < levels_.size(); ++h) c += level_capacity(h);
        return c;
    }

    // The level a full batch chunk enters at: keeps at least 2k values of it.
    unsigned chunk_level() const {
        unsigned j = 0;
        while (j < 16 && (batch_chunk >> (j + 1)) >= 2u * k_) ++j;
        return j;
    }

    std::uint64_t next_random() {
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 7;
        rng_ ^= rng_ << 17;
        return rng_;
    }

    // Merges sorted src[0, n) into sorted dst from the back, in place: no
    // buffer, and no allocation once dst's capacity has reached its level's
    // size (std::inplace_merge would allocate a temporary each call).
    static void merge_sorted_into(std::vector<T>& dst, const T* src, std::size_t n) {
        std::size_t i = dst.size(), j = n, out = dst.size() + n;
        dst.resize(out);
        while (j > 0) {
            if (i > 0 && src[j - 1] < dst[i - 1])
                dst[--out] = dst[--i];
            else
                dst[--out] = src[--j];
        }
    }

    // Every change to the levels goes through here: counts are recomputed
    // and the cached sorted view is dropped.
    void refresh() {
        retained_ = num_retained();
        capacity_ = capacity();
        view_.invalidate();
    }
    void shrink() {
        while (retained_ > capacity_) compress();
    }

    // Compacts the lowest level at or over its capacity.
    void compress() {
        for (std::size_t h = 0; h < levels_.size(); ++h) {
            if (levels_[h].size() < level_capacity(h)) continue;
            if (h + 1 == levels_.size()) {
                levels_.emplace_back();
                capacity_ = capacity();
            }
            auto& l = levels_[h];
            if (h == 0) std::sort(l.begin(), l.end());
            // an odd item out stays at this level (the largest)
            const std::size_t even = l.size() & ~std::size_t(1);
            const std::size_t offset = next_random() & 1u;
            promoted_.clear();  // reused: no allocation per compaction
            for (std::size_t p = offset; p < even; p += 2) promoted_.push_back(l[p]);
            l.erase(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(even));
            retained_ -= even - promoted_.size();
            const double w = std::ldexp(1.0, static_cast<int>(h));
            error_variance_ += w * w;
            merge_sorted_into(levels_[h + 1], promoted_.data(), promoted_.size());
            view_.invalidate();
            return;
        }
    }

    // The retained items sorted by value with cumulative weights: built by
    // the first query after a change, reused by every query until the next
    // update or merge (datasketches' sorted view). Building it is locked, so
    // concurrent const queries of one sketch are safe.
    const std::vector<weighted>& sorted_view() const {
        return view_.get([this](std::vector<weighted>& out) {
            out.clear();
            for (std::size_t h = 0; h < levels_.size(); ++h)
                for (T v : levels_[h]) out.push_back(weighted{v, std::uint64_t(1) << h});
            std::sort(out.begin(), out.end(), [](const weighted& a, const weighted& b) { return a.value < b.value; });
            std::uint64_t c = 0;
            for (auto& e : out) e.cum = c += e.cum;  // weights -> cumulative weights
        });
    }

    // LSD radix sort on order-preserving keys (11 bits a pass).
    static void radix_sort(std::vector<T>& v) {
        using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        constexpr int bits = sizeof(T) * 8;
        constexpr int digit = 11;
        constexpr int passes = (bits + digit - 1) / digit;
        const std::size_t n = v.size();
        std::vector<U> a(n), b(n);
        for (std::size_t i = 0; i < n; ++i) {
            U u;
            std::memcpy(&u, &v[i], sizeof(T));
            a[i] = (u >> (bits - 1)) ? static_cast<U>(~u) : static_cast<U>(u | (U(1) << (bits - 1)));
        }
        std::vector<std::size_t> count(std::size_t(1) << digit);
        for (int p = 0; p < passes; ++p) {
            const int shift = p * digit;
            std::fill(count.begin(), count.end(), 0);
            for (std::size_t i = 0; i < n; ++i) ++count[(a[i] >> shift) & ((U(1) << digit) - 1)];
            std::size_t sum = 0;
            for (auto& c : count) {
                const std::size_t t = c;
                c = sum;
                sum += t;
            }
            for (std::size_t i = 0; i < n; ++i) b[count[(a[i] >> shift) & ((U(1) << digit) - 1)]++] = a[i];
            a.swap(b);
        }
        for (std::size_t i = 0; i < n; ++i) {
            U u = a[i];
            u = (u >> (bits - 1)) ? static_cast<U>(u & ~(U(1) << (bits - 1))) : static_cast<U>(~u);
            std::memcpy(&v[i], &u, sizeof(T));
        }
    }

    std::uint16_t k_;
    std::uint64_t n_ = 0;
    T min_ = std::numeric_limits<T>::quiet_NaN(), max_ = std::numeric_limits<T>::quiet_NaN();
    double error_variance_ = 0.0;
    std::vector<std::vector<T>> levels_;
    std::uint64_t rng_;
    std::vector<T> scratch_, promoted_;  // reused buffers (batched chunk, compaction output)
    std::size_t retained_ = 0, capacity_ = 0;
    detail::lazy_cache<std::vector<weighted>> view_;
};

LOGRATIO_NAMESPACE_END
