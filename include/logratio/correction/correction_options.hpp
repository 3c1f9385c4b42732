#pragma once
// Options of the importance-sampling correction (correction.hpp): the IS
// weight level and truncation, the rejection options and their thresholds
// (parsed from verl's `rollout_rs` / `rollout_rs_threshold` strings), the
// veto, what a NaN/Inf log-prob does. Every option is validated here,
// before any token is read.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/error.hpp"
#include "../core/limits.hpp"
#include "../core/nonfinite.hpp"
#include "flavour_options.hpp"
#include "is_level.hpp"
#include "stats/registry.hpp"

LOGRATIO_NAMESPACE_BEGIN

/// Truncated importance sampling (TIS).
struct is_options {
    is_options() = default;
    is_options(is_level l, double c, std::optional<double> c_low = std::nullopt, bool normalize = false)
        : level(l), upper(c), lower(c_low), batch_normalize(normalize) {}

    is_level level = is_level::token;
    double upper = 2.0;            ///< C: weights are truncated to min(w, C)
    std::optional<double> lower;   ///< c_low: optional lower truncation max(w, c_low)
    bool batch_normalize = false;  ///< divide by the batch mean (token mean / sequence mean)

    /// The lower threshold of the fraction_low / std / ESS metrics: c_low
    /// when given, else 1/C (verl's).
    double metric_lower() const noexcept { return lower ? *lower : 1.0 / upper; }

    void validate() const {
        if (!(upper > 0.0) || !std::isfinite(upper))
            throw argument_error(detail::concat("IS threshold C = ", upper, " must be a positive finite number"));
        if (lower) {
            if (!(*lower > 0.0) || !std::isfinite(*lower))
                throw argument_error(detail::concat("IS lower threshold c_low = ", *lower, " must be a positive finite number"));
            if (*lower > upper)
                throw argument_error(detail::concat("IS lower threshold c_low = ", *lower, " is above the upper threshold C = ",
                                           upper));
        }
    }
};

/// The per-token divergence statistic of a rejection option, on
/// dc = clamp(delta, +-20): one of rs_stat_list (stats/registry.hpp; each
/// statistic's header says what it is), by its id there. The enumerators
/// name verl's three, k1 = -dc, k2 = dc^2 / 2, k3 = exp(dc) - 1 - dc; any
/// id below rs_stat_count is a statistic.
enum class rs_stat { k1, k2, k3 };
static_assert(static_cast<std::size_t>(rs_stat::k1) == rs_stat_id<rs_stats::k1>() &&
                  static_cast<std::size_t>(rs_stat::k2) == rs_stat_id<rs_stats::k2>() &&
                  static_cast<std::size_t>(rs_stat::k3) == rs_stat_id<rs_stats::k3>(),
              "rs_stat's names are the ids of their statistics");
/// How the statistic is aggregated over a sequence before thresholding.
enum class rs_aggregate { token, seq_sum, seq_mean, seq_max };

namespace detail {
/// f(std::integral_constant<std::size_t, J>{}, S{}) for statistic s (S of id J).
template <class F>
auto visit_stat(rs_stat s, F&& f) {
    return visit_rs_stat(static_cast<std::size_t>(s), std::forward<F>(f));
}
inline const char* aggregate_name(rs_aggregate a) noexcept {
    static const char* agg[] = {"token", "seq_sum", "seq_mean", "seq_max"};
    return agg[static_cast<int>(a)];
}
}  // namespace detail

/// One rejection option. A statistic with a lower bound (k1) keeps
/// lower <= value <= upper in its own space, with `lower`/`upper` given as
/// ratio bounds (so k1 = -dc keeps mu/pi in [lower, upper]); the others
/// (k2, k3) keep value <= upper.
struct rs_option {
    rs_aggregate aggregate = rs_aggregate::token;
    rs_stat stat = rs_stat::k1;
    double lower = 0.0;  ///< ratio lower bound (statistics with a lower bound only)
    double upper = 0.0;

    bool is_token_level() const noexcept { return aggregate == rs_aggregate::token; }
    bool has_lower() const noexcept {
        return detail::visit_stat(stat, [](auto, auto s) { return decltype(s)::has_lower; });
    }
    /// Thresholds in the statistic's own space: [log lower, log upper] for
    /// k1, [0, upper] for k2 and k3 (the lower one only clamps the std metric).
    double stat_upper() const noexcept {
        return detail::visit_stat(stat, [&](auto, auto s) { return decltype(s)::upper(lower, upper); });
    }
    double stat_lower() const noexcept {
        return detail::visit_stat(stat, [&](auto, auto s) { return decltype(s)::lower(lower, upper); });
    }

    /// verl's option name, e.g. "seq_mean_k1".
    std::string name() const {
        const char* st = detail::visit_stat(stat, [](auto, auto s) { return decltype(s)::name; });
        return std::string(detail::aggregate_name(aggregate)) + "_" + (st ? st : "?");
    }
};

namespace detail {
inline std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}
inline std::vector<std::string> split_list(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (true) {
        const auto e = s.find(sep, b);
        std::string part = trim(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (!part.empty()) out.push_back(part);
        if (e == std::string::npos) break;
        b = e + 1;
    }
    return out;
}
inline double parse_positive(const std::string& s, const std::string& what) {
    std::size_t used = 0;
    double v = 0.0;
    try {
        v = std::stod(s, &used);
    } catch (...) {
        used = 0;
    }
    if (used != s.size() || s.empty()) throw argument_error(concat("invalid numeric threshold '", s, "' for ", what));
    if (!(v > 0.0) || !std::isfinite(v)) throw argument_error(concat("threshold '", s, "' for ", what, " must be positive"));
    return v;
}
}  // namespace detail

namespace detail {
/// Every option name: each aggregate of each statistic (seq_max where the
/// statistic allows it), in id order; f(name, aggregate, statistic).
template <class F>
void for_each_rs_option(F&& f) {
    for (int a = 0; a < 4; ++a)
        for_each_rs_stat([&](auto j, auto s) {
            using S = decltype(s);
            const rs_aggregate agg = static_cast<rs_aggregate>(a);
            if (agg != rs_aggregate::seq_max || S::seq_max)
                f(std::string(aggregate_name(agg)) + "_" + S::name, agg, static_cast<rs_stat>(decltype(j)::value));
        });
}
/// The number of distinct rejection options (11 with k1, k2, k3).
inline std::size_t rs_option_count() {
    std::size_t n = 0;
    for_each_rs_option([&](const std::string&, rs_aggregate, rs_stat) { ++n; });
    return n;
}
}  // namespace detail

/// Parses verl's rejection strings: `options` is a comma list of
/// token_k{1,2,3}, seq_sum_k{1,2,3}, seq_mean_k{1,2,3}, seq_max_k{2,3}
/// (every statistic of stats/registry.hpp; duplicates dropped, first
/// kept), `thresholds` a comma list with one entry shared by all options or
/// one per option. The entry of a statistic with a lower bound (k1) is
/// "lower_upper" or "u" (meaning [1/u, u]); other entries are one upper bound.
///
/// The older level names `token`, `sequence`, `geometric` are accepted as
/// aliases of token_k1, seq_sum_k1, seq_mean_k1. They bound the ratio
/// pi/mu to [l, u] (l = `alias_lower`, default 1/u), which is k1 = -dc in
/// [log(1/u), log(1/l)]: the alias is stored as that k1 option.
inline std::vector<rs_option> parse_rejection(const std::string& options, const std::string& thresholds,
                                              std::optional<double> alias_lower = std::nullopt) {
    struct named {
        std::string given;
        rs_option opt;
        bool alias;
    };
    std::vector<named> list;
    for (const std::string& o : detail::split_list(options, ',')) {
        rs_option r;
        bool alias = false;
        if (o == "token" || o == "sequence" || o == "geometric") {
            alias = true;
            r.stat = rs_stat::k1;
            r.aggregate = o == "token" ? rs_aggregate::token
                          : o == "sequence" ? rs_aggregate::seq_sum
                                            : rs_aggregate::seq_mean;
        } else {
            bool ok = false;
            std::string expected;
            detail::for_each_rs_option([&](const std::string& name, rs_aggregate agg, rs_stat st) {
                expected += name + ", ";
                if (name != o) return;
                ok = true;
                r.aggregate = agg;
                r.stat = st;
            });
            if (!ok)
                throw argument_error(detail::concat("unknown rejection option '", o, "' (expected ", expected,
                                                    "or the aliases token, sequence, geometric)"));
        }
        bool dup = false;
        for (const named& n : list) {
            if (n.given == o) dup = true;
            else if (n.opt.name() == r.name())
                throw argument_error(detail::concat("rejection options '", n.given, "' and '", o, "' are the same option ",
                                           r.name()));
        }
        if (!dup) list.push_back({o, r, alias});
    }
    if (list.empty()) throw argument_error("rejection options: the list is empty");
    std::vector<std::string> specs = detail::split_list(thresholds, ',');
    if (specs.empty()) throw argument_error("rejection thresholds: the list is empty");
    if (specs.size() != 1 && specs.size() != list.size())
        throw argument_error(detail::concat("rejection thresholds: ", specs.size(), " given for ", list.size(),
                                   " options (give one shared threshold or one per option)"));
    std::vector<rs_option> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        named& n = list[i];
        const std::string& spec = specs.size() == 1 ? specs[0] : specs[i];
        const std::string what = "rejection option '" + n.given + "'";
        rs_option r = n.opt;
        if (r.has_lower()) {
            double lo, up;
            const auto us = spec.find('_');
            if (us != std::string::npos) {
                lo = detail::parse_positive(spec.substr(0, us), what);
                up = detail::parse_positive(spec.substr(us + 1), what);
            } else {
                up = detail::parse_positive(spec, what);
                lo = n.alias && alias_lower ? *alias_lower : 1.0 / up;
            }
            if (n.alias && alias_lower && us == std::string::npos && !(*alias_lower > 0.0))
                throw argument_error(detail::concat("rejection lower threshold ", *alias_lower, " must be positive"));
            if (lo > up)
                throw argument_error(detail::concat(what, ": lower bound ", lo, " is above the upper bound ", up));
            if (n.alias) {  // ratio pi/mu in [lo, up]  <=>  k1 in [log(1/up), log(1/lo)]
                r.lower = 1.0 / up;
                r.upper = 1.0 / lo;
            } else {
                r.lower = lo;
                r.upper = up;
            }
        } else {
            if (spec.find('_') != std::string::npos)
                throw argument_error(detail::concat(what, " takes a single upper bound, not '", spec, "'"));
            r.upper = detail::parse_positive(spec, what);
        }
        out.push_back(r);
    }
    return out;
}

/// Everything the correction does. Leave `is` empty for rejection only,
/// `rejection` empty for weights only.
struct correction_options {
    std::optional<is_options> is;
    std::vector<rs_option> rejection;
    /// Veto: a sequence with any masked-in token of rho < veto (compared as
    /// delta < log veto) is rejected whole.
    std::optional<double> veto;
    /// A log-prob above this is an error (log-probs are <= 0).
    double positive_tolerance = default_positive_tolerance;
    /// A masked-in token whose train or rollout log-prob is NaN or +-Inf:
    /// raise (value_error naming the tensor, sequence and position), or omit
    /// -- the token is treated exactly as a masked-out one (weight 0, mask 0,
    /// in no metric and no sequence sum) and counted in nonfinite_tokens. A
    /// finite log-prob above positive_tolerance raises either way.
    nonfinite_policy nonfinite = nonfinite_policy::raise;
    /// Whose conventions (flavour_options.hpp): verl (the default: `is`,
    /// `rejection` and `veto` above), or slime / trl, whose weights, masks and
    /// metrics come from `mode` (slime without a mode: its mismatch metrics
    /// only). Each flavour's loss denominator: flavour_options.hpp.
    framework flavour = framework::verl;
    std::optional<framework_mode> mode;

    void validate() const {
        validate_flavour();
        if (is) is->validate();
        for (std::size_t i = 0; i < rejection.size(); ++i) {
            const rs_option& r = rejection[i];
            if (!(r.upper > 0.0) || !std::isfinite(r.upper) || (r.has_lower() && (!(r.lower > 0.0) || r.lower > r.upper)))
                throw argument_error(detail::concat("rejection option ", r.name(), ": invalid thresholds [", r.lower, ", ",
                                           r.upper, "]"));
            for (std::size_t j = 0; j < i; ++j)
                if (rejection[j].name() == r.name())
                    throw argument_error(detail::concat("rejection option ", r.name(), " is given twice"));
        }
        if (veto && (!(*veto > 0.0) || !std::isfinite(*veto)))
            throw argument_error(detail::concat("veto threshold ", *veto, " must be a positive finite number"));
    }

private:
    void validate_flavour() const {
        if (flavour == framework::verl) {
            if (mode) throw argument_error(detail::concat("mode ", mode->name(), " needs flavour ", framework_name(mode->fw)));
            return;
        }
        if (is || !rejection.empty() || veto)
            throw argument_error(detail::concat("flavour ", framework_name(flavour),
                                       ": the mode sets the weights, rejections and veto; leave is, rejection and "
                                       "veto empty (they are verl's options)"));
        if (!mode && flavour == framework::trl)
            throw argument_error("flavour trl needs a mode: trl:token_truncate, trl:token_mask, trl:sequence_truncate or "
                        "trl:sequence_mask");
        if (!mode) return;
        if (mode->fw != flavour)
            throw argument_error(detail::concat("mode ", mode->name(), " is not a ", framework_name(flavour), " mode"));
        mode->validate();
    }
};

LOGRATIO_NAMESPACE_END
