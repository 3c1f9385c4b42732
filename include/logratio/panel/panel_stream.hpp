#pragma once
// Streaming panel: a run of any length fed in chunks of whole sequences, in
// constant memory. It keeps the panel accumulator (exact sums, moments,
// extremes, counts) and two KLL sketches (δ and |δ|) for the quantile keys,
// which are then approximate with a stated rank error instead of exact.
//
//   logratio::panel_stream s;                 // options, sketch size k
//   for (auto& chunk : chunks) s.add(chunk);  // views of whole sequences
//   logratio::panel p = s.finish();           // delta_q*, abs_delta_q* from the sketches
//   double eps = s.quantile_rank_error();     // normalized rank error bound, 99%
//
// Locations (delta_abs_max_at) count sequences across chunks. Streams merge
// (chunks on several threads or ranks, merged in order) and serialize.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/bytes.hpp"
#include "../quantiles/kll_sketch.hpp"
#include "panel.hpp"
#include "panel_quantiles.hpp"

LOGRATIO_NAMESPACE_BEGIN

class panel_stream {
public:
    explicit panel_stream(panel_options o = {}, std::uint16_t k = 200)
        : opt_(std::move(o)), delta_(k), abs_delta_(k) {}

    /// Adds sequences [first, last) of a view (default: all of them).
    template <class T, class M>
    void add(const paired_view<T, M>& v, std::uint64_t first = 0, std::uint64_t last = ~std::uint64_t(0)) {
        last = std::min(last, v.num_sequences());
        add_accumulated(accumulate_panel_range(v, first, last, opt_), v, first, last);
    }

    /// add() with the panel accumulator of sequences [first, last) computed
    /// by the caller with this stream's options() -- e.g. by
    /// logratio::dispatch::accumulate_panel_range at the CPU's widest level.
    template <class T, class M>
    void add_accumulated(panel_accumulator a, const paired_view<T, M>& v, std::uint64_t first, std::uint64_t last) {
        last = std::min(last, v.num_sequences());
        // locations: this chunk's sequences come after everything seen so far
        a.abs_max_at.sequence = a.abs_max_at.sequence - first + sequences_seen_;
        if (first_) acc_ = a;
        else acc_.merge(a);
        first_ = false;
        // δ of the masked-in, finite tokens, in blocks of a fixed buffer
        buffer_.resize(block);
        std::size_t n = 0;
        auto flush = [&] {
            delta_.update(buffer_.data(), n);
            for (std::size_t i = 0; i < n; ++i) buffer_[i] = std::fabs(buffer_[i]);
            abs_delta_.update(buffer_.data(), n);
            n = 0;
        };
        for (std::uint64_t s = first; s < last; ++s)
            for (std::uint64_t i = v.sequence_begin(s), e = v.sequence_end(s); i < e; ++i) {
                if (!v.counts(i)) continue;
                const double d = to_double(v.train()[i]) - to_double(v.rollout()[i]);
                if (!std::isfinite(d)) continue;  // raised or counted by the accumulator above
                buffer_[n++] = d;
                if (n == block) flush();
            }
        flush();
        sequences_seen_ += last - first;
    }

    const panel_options& options() const noexcept { return opt_; }

    /// Appends another stream's sequences after this one's.
    void merge(const panel_stream& o) {
        if (o.first_) return;
        panel_accumulator a = o.acc_;
        a.abs_max_at.sequence += sequences_seen_;
        if (first_) acc_ = a;
        else acc_.merge(a);
        first_ = false;
        delta_.merge(o.delta_);
        abs_delta_.merge(o.abs_delta_);
        sequences_seen_ += o.sequences_seen_;
    }

    /// The panel; the quantile keys come from the sketches (within
    /// quantile_rank_error() in rank).
    panel finish() const {
        panel p = first_ ? panel_accumulator(opt_).finish() : acc_.finish();
        if (p.tokens == 0 || delta_.n() == 0) return p;
        for (double q : default_delta_probs()) p.delta_quantiles.emplace_back(q, delta_.quantile(q));
        for (double q : default_abs_delta_probs()) p.abs_delta_quantiles.emplace_back(q, abs_delta_.quantile(q));
        return p;
    }

    /// Bound on the normalized rank error of the quantile keys (both
    /// sketches), holding with probability `confidence` per query.
    double quantile_rank_error(double confidence = 0.99) const {
        return std::max(delta_.normalized_rank_error(confidence), abs_delta_.normalized_rank_error(confidence));
    }
    std::uint64_t sequences_seen() const noexcept { return sequences_seen_; }
    const panel_accumulator& accumulator() const noexcept { return acc_; }

    std::vector<std::uint8_t> serialize() const {
        detail::byte_writer w;
        w.raw("LRPS", 4);
        w.u16(1);
        w.u8(first_ ? 0 : 1);
        w.u64(sequences_seen_);
        for (const auto& part : {acc_.serialize(), delta_.serialize(), abs_delta_.serialize()}) {
            w.u64(part.size());
            w.raw(reinterpret_cast<const char*>(part.data()), part.size());
        }
        return w.take();
    }
    static panel_stream deserialize(const void* data, std::size_t size, panel_options o = {}) {
        detail::byte_reader r(data, size, "panel_stream");
        r.expect_header("LRPS", 1);
        panel_stream s(std::move(o));
        const std::uint8_t any = r.u8();
        if (any > 1) r.fail("bad flag");
        s.first_ = any == 0;
        s.sequences_seen_ = r.u64();
        auto part = [&](auto&& parse) {
            const std::uint64_t n = r.u64();
            if (n > r.remaining()) r.fail("truncated part");
            const auto* p = static_cast<const std::uint8_t*>(data) + r.position();
            parse(p, static_cast<std::size_t>(n));
            r.skip(static_cast<std::size_t>(n));
        };
        part([&](const std::uint8_t* p, std::size_t n) { s.acc_ = panel_accumulator::deserialize(p, n); });
        part([&](const std::uint8_t* p, std::size_t n) { s.delta_ = kll_sketch<double>::deserialize(p, n); });
        part([&](const std::uint8_t* p, std::size_t n) { s.abs_delta_ = kll_sketch<double>::deserialize(p, n); });
        r.expect_end();
        return s;
    }

private:
    static constexpr std::size_t block = 1 << 16;
    panel_options opt_;
    panel_accumulator acc_;
    kll_sketch<double> delta_, abs_delta_;
    std::vector<double> buffer_;
    std::uint64_t sequences_seen_ = 0;
    bool first_ = true;
};

LOGRATIO_NAMESPACE_END
