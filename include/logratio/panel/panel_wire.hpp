#pragma once
// The panel accumulator's wire format (panel_accumulator::serialize /
// deserialize): "LRPA", a u16 format version, a u16 threshold count, then
// the fields of visit_fields in order, fixed-width little-endian
// (core/bytes.hpp). Deserialization checks the header, the length and the
// counts' consistency, and names what is wrong (format_error).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/bytes.hpp"
#include "../core/error.hpp"
#include "panel_accumulator.hpp"

LOGRATIO_NAMESPACE_BEGIN


/// The serialized fields after the header and the threshold count, in
/// wire order: f(field) on each (serialize writes them, deserialize
/// reads them -- one list).
template <class Self, class F>
void panel_accumulator::visit_fields(Self& a, F&& f) {
    f(a.tokens);
    f(a.nonfinite_tokens);
    f(a.sum_train);
    f(a.sum_rollout);
    f(a.delta);
    f(a.ratio_m1);
    f(a.sum_abs_delta);
    f(a.sum_k3);
    f(a.sum_reverse);
    f(a.sum_tv);
    f(a.abs_max);
    f(a.abs_max_at);
    f(a.seq_log);
    f(a.seq_geo);
    f(a.sum_train_ppl);
    f(a.sum_rollout_ppl);
    for (std::uint32_t i = 0; i < a.num_thresholds; ++i) {
        f(a.thresholds[i]);
        f(a.above[i]);
    }
}

inline std::vector<std::uint8_t> panel_accumulator::serialize() const {
    detail::byte_writer w;
    w.raw("LRPA", 4);
    w.u16(format_version);
    w.u16(static_cast<std::uint16_t>(num_thresholds));
    visit_fields(*this, [&](const auto& x) { detail::put(w, x); });
    return w.take();
}

inline panel_accumulator panel_accumulator::deserialize(const void* data, std::size_t size) {
    detail::byte_reader r(data, size, "panel_accumulator");
    r.expect_header("LRPA", format_version);
    panel_accumulator a;
    const std::uint16_t nt = r.u16();
    if (nt > panel_options::max_thresholds)
        r.fail(detail::concat(nt, " thresholds, at most ", panel_options::max_thresholds));
    a.num_thresholds = nt;
    visit_fields(a, [&](auto& x) { detail::get(r, x); });
    r.expect_end();
    for (std::uint32_t i = 0; i < nt; ++i)
        if (a.above[i] > a.tokens) r.fail("threshold count exceeds token count");
    if (a.delta.n != a.tokens || a.ratio_m1.n != a.tokens || a.seq_log.n != a.seq_geo.n ||
        a.seq_log.n > a.tokens)
        r.fail("inconsistent counts");
    return a;
}

LOGRATIO_NAMESPACE_END
