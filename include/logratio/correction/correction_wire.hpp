#pragma once
// The correction accumulator's wire format (correction_accumulator::
// serialize / deserialize): "LRCA", a u16 format version, the options that
// shape the sums, then the sums of visit_fields in order, fixed-width
// little-endian (core/bytes.hpp). Version 2 adds the nonfinite policy and
// nonfinite_tokens; version 1 states are still read. Deserialization checks
// the header, the options, the length and the counts' consistency, and names
// what is wrong (format_error).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/bytes.hpp"
#include "../core/error.hpp"
#include "correction_accumulator.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// The serialized sums after the options, in wire order: tokens,
/// sequences and (version 2) nonfinite_tokens, the IS sums, each
/// rejection option's, the counts, the off-policy sums (one list for
/// serialize and deserialize).
template <class Self, class F>
void correction_accumulator::visit_fields(Self& a, std::uint16_t version, F&& f) {
    f(a.tokens);
    f(a.sequences);
    if (version >= 2) f(a.nonfinite_tokens);
    std::decay_t<decltype(a.is)>::visit_fields(a.is, f);
    for (auto& x : a.rs) std::decay_t<decltype(x)>::visit_fields(x, f);
    for (auto* v : {&a.rs_rejected_tokens, &a.rs_rejected_seqs, &a.veto_seqs, &a.veto_tokens}) f(*v);
    for (auto* v : {&a.sum_delta, &a.sum_k3, &a.sum_chi2, &a.sum_train_ppl, &a.sum_train_log_ppl,
                    &a.sum_rollout_ppl, &a.sum_rollout_log_ppl, &a.sum_abs_log_ppl_diff, &a.sum_ppl_ratio,
                    &a.sum_chi2_seq})
        f(*v);
    f(a.log_ppl_diff);
}

inline std::vector<std::uint8_t> correction_accumulator::serialize() const {
    detail::byte_writer w;
    w.raw("LRCA", 4);
    w.u16(format_version);
    w.u8(options.is ? 1 : 0);
    if (options.is) {
        w.u8(static_cast<std::uint8_t>(options.is->level));
        w.f64(options.is->upper);
        w.u8(options.is->lower ? 1 : 0);
        w.f64(options.is->lower.value_or(0.0));
        w.u8(options.is->batch_normalize ? 1 : 0);
    }
    w.u32(static_cast<std::uint32_t>(options.rejection.size()));
    for (const rs_option& o : options.rejection) {
        w.u8(static_cast<std::uint8_t>(o.aggregate));
        w.u8(static_cast<std::uint8_t>(o.stat));
        w.f64(o.lower);
        w.f64(o.upper);
    }
    w.u8(options.veto ? 1 : 0);
    w.f64(options.veto.value_or(0.0));
    w.f64(options.positive_tolerance);
    w.u8(static_cast<std::uint8_t>(options.nonfinite));
    visit_fields(*this, format_version, [&](const auto& x) { detail::put(w, x); });
    return w.take();
}

inline correction_accumulator correction_accumulator::deserialize(const void* data, std::size_t size) {
    detail::byte_reader r(data, size, "correction_accumulator");
    const std::uint16_t version = r.expect_header("LRCA", 1, format_version);
    correction_options o;
    const std::uint8_t has_is = r.u8();
    if (has_is > 1) r.fail("bad IS flag");
    if (has_is) {
        is_options io;
        const std::uint8_t lvl = r.u8();
        if (lvl > 2) r.fail(detail::concat("unknown IS level ", int(lvl)));
        io.level = static_cast<is_level>(lvl);
        io.upper = r.f64();
        const std::uint8_t has_lower = r.u8();
        const double lower = r.f64();
        if (has_lower > 1) r.fail("bad lower-threshold flag");
        if (has_lower) io.lower = lower;
        const std::uint8_t bn = r.u8();
        if (bn > 1) r.fail("bad batch-normalize flag");
        io.batch_normalize = bn != 0;
        o.is = io;
    }
    const std::uint32_t nrs = r.u32();
    const std::size_t options = detail::rs_option_count();
    if (nrs > options) r.fail(detail::concat(nrs, " rejection options (there are ", options, ")"));
    for (std::uint32_t k = 0; k < nrs; ++k) {
        rs_option ro;
        const std::uint8_t ag = r.u8(), st = r.u8();
        if (ag > 3 || st >= rs_stat_count) r.fail("unknown rejection option");
        ro.aggregate = static_cast<rs_aggregate>(ag);
        ro.stat = static_cast<rs_stat>(st);
        ro.lower = r.f64();
        ro.upper = r.f64();
        o.rejection.push_back(ro);
    }
    const std::uint8_t has_veto = r.u8();
    const double veto = r.f64();
    if (has_veto > 1) r.fail("bad veto flag");
    if (has_veto) o.veto = veto;
    o.positive_tolerance = r.f64();
    if (version >= 2) {
        const std::uint8_t nf = r.u8();
        if (nf > 1) r.fail("bad nonfinite policy");
        o.nonfinite = static_cast<nonfinite_policy>(nf);
    }
    correction_accumulator a;
    try {
        a = correction_accumulator(o);
    } catch (const error& e) {
        r.fail(detail::concat("invalid options: ", e.what()));
    }
    visit_fields(a, version, [&](auto& x) { detail::get(r, x); });
    r.expect_end();
    for (const rs_accumulator& x : a.rs)
        if (x.tok_hi > a.tokens || x.tok_lo > a.tokens || x.rejected_tokens > a.tokens ||
            x.seq_hi > a.sequences || x.seq_lo > a.sequences || x.rejected_seqs > a.sequences ||
            x.seq.n != a.sequences)
            r.fail("inconsistent rejection counts");
    const std::uint64_t N = a.tokens, S = a.sequences;
    if (S > N || a.log_ppl_diff.n != S || a.rs_rejected_tokens > N || a.rs_rejected_seqs > S ||
        a.veto_seqs > S || a.veto_tokens > N || a.is.kept > N || a.is.changed > N || a.is.tok_hi > N ||
        a.is.tok_lo > N || a.is.lr_hi > S || a.is.lr_lo > S || a.is.seq_hi > S || a.is.seq_lo > S ||
        (a.options.is && a.is.seq.n != S))
        r.fail("inconsistent counts");
    return a;
}

LOGRATIO_NAMESPACE_END
