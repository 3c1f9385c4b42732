// `logratio reconcile`: the two sides (reconcile_load.cpp) compared field
// by field, and the one summary line (reconcile.hpp; reconcile_output.cpp
// writes the text and the JSON).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include <logratio/core/error.hpp>

#include "../io/number_text.hpp"
#include "reconcile_sides.hpp"

namespace logratio_cli {
namespace {

using logratio::detail::concat;
using reconcile_detail::exact;
using reconcile_detail::side;
using reconcile_detail::side_run;

/// Same bits, or both NaN (payloads differ between readers: MLflow's SQLite
/// store has an is_nan column, others parse "NaN"); with rtol, also within
/// rtol * max(|a|, |b|) -- never for an infinity (inf - x <= rtol * inf).
bool agree(double a, double b, double rtol) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    std::uint64_t x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    if (x == y) return true;
    if (rtol <= 0 || std::isinf(a) || std::isinf(b)) return false;
    return std::fabs(a - b) <= rtol * std::max(std::fabs(a), std::fabs(b));
}

/// --map both ways: A's name -> B's; a name the map moves elsewhere matches nothing.
struct metric_names {
    std::map<std::string, std::string> a_to_b, b_to_a;
    std::optional<std::string> to_b(const std::string& a) const {
        if (auto it = a_to_b.find(a); it != a_to_b.end()) return it->second;
        if (b_to_a.count(a)) return std::nullopt;  // B's metric of this name is another A metric's
        return a;
    }
    std::optional<std::string> to_a(const std::string& b) const {
        if (auto it = b_to_a.find(b); it != b_to_a.end()) return it->second;
        if (a_to_b.count(b)) return std::nullopt;
        return b;
    }
};

bool side_has_metric(const side& s, const std::string& m) {
    for (const auto& [name, r] : s.runs)
        if (r.metrics.count(m)) return true;
    return false;
}

metric_names checked_map(const reconcile_options& o, const side& a, const side& b) {
    metric_names n;
    for (const auto& [x, y] : o.map) {
        if (!side_has_metric(a, x)) throw logratio::error("--map " + x + "=" + y + ": A has no metric '" + x + "'");
        if (!side_has_metric(b, y)) throw logratio::error("--map " + x + "=" + y + ": B has no metric '" + y + "'");
        if (n.a_to_b.count(x) || n.b_to_a.count(y))  // (options built without parse_metric_map)
            throw logratio::error("--map " + x + "=" + y + ": a metric mapped twice");
        n.a_to_b[x] = y;
        n.b_to_a[y] = x;
    }
    return n;
}

/// 'a', 'b', ... (N runs): at most 8 names.
std::string run_names(const side& s) {
    std::string out;
    std::size_t k = 0;
    for (const auto& [name, r] : s.runs) {
        if (k++ == 8) return concat(out, ", ... (", s.runs.size(), " runs)");
        out += (out.empty() ? "'" : ", '") + name + "'";
    }
    return out.empty() ? std::string("no runs") : out;
}

/// One run in common: every field of A found or not in B, then B's not in A.
void compare_run(const std::string& run, const side_run& ra, const side_run& rb, const metric_names& names,
                 reconcile_result& r) {
    std::set<double> steps_a, steps_b;
    for (const auto& [ma, pts] : ra.metrics) {
        const auto mb = names.to_b(ma);
        const auto bm = mb ? rb.metrics.find(*mb) : rb.metrics.end();
        const std::map<double, double>* bp = bm == rb.metrics.end() ? nullptr : &bm->second;
        for (const auto& [step, va] : pts) {
            steps_a.insert(step);
            const auto vb = bp ? bp->find(step) : std::map<double, double>::const_iterator();
            if (!bp || vb == bp->end()) {
                r.only_a.push_back({run, step, ma});
                continue;
            }
            ++r.overlapping;
            if (agree(va, vb->second, r.rtol)) ++r.agree;
            else r.differ.push_back({run, step, ma, *mb, va, vb->second});
        }
    }
    for (const auto& [mb, pts] : rb.metrics) {
        const auto ma = names.to_a(mb);
        const auto am = ma ? ra.metrics.find(*ma) : ra.metrics.end();
        for (const auto& [step, vb] : pts) {
            steps_b.insert(step);
            if (am == ra.metrics.end() || !am->second.count(step)) r.only_b.push_back({run, step, mb});
        }
    }
    for (double s : steps_a) r.steps_only_a += !steps_b.count(s);
    for (double s : steps_b) r.steps_only_b += !steps_a.count(s);
}

/// "metric, metric, ... ; steps 1..12" of one run, for the no-overlap error.
std::string run_outline(const side_run& r) {
    std::string m;
    std::set<double> steps;
    std::size_t k = 0;
    for (const auto& [name, pts] : r.metrics) {
        if (k++ < 6) m += (m.empty() ? "" : ", ") + name;
        for (const auto& p : pts) steps.insert(p.first);
    }
    if (k > 6) m += ", ...";
    if (steps.empty()) return "no values";
    return concat(m, " at ", steps.size(), " step(s) ", exact(*steps.begin()), "..", exact(*steps.rbegin()));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_metric_map(const std::vector<std::string>& specs) {
    std::vector<std::pair<std::string, std::string>> out;
    std::set<std::string> as, bs;
    for (const auto& s : specs) {
        const auto eq = s.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == s.size() || s.find('=', eq + 1) != std::string::npos)
            throw logratio::error("--map '" + s + "': expected A_NAME=B_NAME (one '=', both names non-empty)");
        out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
        if (!as.insert(out.back().first).second)
            throw logratio::error("--map '" + s + "': A's metric '" + out.back().first + "' is mapped twice");
        if (!bs.insert(out.back().second).second)
            throw logratio::error("--map '" + s + "': B's metric '" + out.back().second + "' is mapped twice");
    }
    return out;
}

reconcile_result reconcile_sources(const std::vector<std::string>& a_inputs, const std::string& b_input,
                                   const reconcile_options& o) {
    if (a_inputs.empty()) throw logratio::error("reconcile: no input for side A");
    if (!(o.rtol >= 0)) throw logratio::error("--rtol " + exact(o.rtol) + ": must be a number >= 0");
    const side a = reconcile_detail::read_side(a_inputs, o.format_a, o, "A");
    const side b = reconcile_detail::read_side({b_input}, o.format_b, o, "B");
    const metric_names names = checked_map(o, a, b);
    reconcile_result r;
    r.rtol = o.rtol;
    r.notes = a.notes;
    r.notes.insert(r.notes.end(), b.notes.begin(), b.notes.end());
    std::string common;
    for (const auto& [run, ra] : a.runs) {
        const auto rb = b.runs.find(run);
        if (rb == b.runs.end()) {
            r.runs_only_a.push_back(run);
            continue;
        }
        compare_run(run, ra, rb->second, names, r);
        if (common.empty()) common = "run '" + run + "': A has " + run_outline(ra) + "; B has " + run_outline(rb->second);
    }
    for (const auto& [run, rb] : b.runs)
        if (!a.runs.count(run)) r.runs_only_b.push_back(run);
    if (common.empty())
        throw logratio::error("no run in common (runs are matched by name): A has " + run_names(a) + "; B has " +
                              run_names(b));
    if (r.overlapping == 0)
        throw logratio::error("no overlapping field (the same run, training step and metric on both sides; --map "
                              "renames a metric): " + common);
    return r;
}

std::string reconcile_summary(const reconcile_result& r) {
    const std::string how = r.rtol > 0 ? "agree within rtol " + number_text(r.rtol) : std::string("agree exactly");
    const std::string head = concat("across ", r.overlapping, " overlapping numeric fields, the tracker and the local log");
    if (r.differ.empty()) return head + " " + how;
    return concat(head, ": ", r.agree, " ", how, ", ", r.differ.size(), " differ");
}

}  // namespace logratio_cli
