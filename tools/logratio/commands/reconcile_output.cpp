// `logratio reconcile`'s output: the text report and the --json document
// (reconcile.hpp). The JSON is written here by hand -- a handful of flat
// lists -- so that no command's translation unit parses nlohmann/json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <logratio/core/error.hpp>

#include "../io/number_text.hpp"
#include "reconcile_sides.hpp"

namespace logratio_cli {
namespace {

using logratio::detail::concat;
using reconcile_detail::exact;

std::string relative_text(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return "n/a (NaN on one side)";
    const double m = std::max(std::fabs(a), std::fabs(b));
    if (m == 0) return "0 (signed zeros)";
    const double r = std::fabs(a - b) / m;
    if (std::isnan(r)) return "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", r);
    return buf;
}

/// "N field(s) (metric: n, ...), S step(s) of the runs in common" of one side.
std::string one_side(const std::vector<reconcile_field>& f, std::size_t steps) {
    std::map<std::string, std::size_t> by_metric;
    for (const auto& x : f) ++by_metric[x.metric];
    std::string m;
    std::size_t k = 0;
    for (const auto& [name, n] : by_metric) {
        if (k++ == 10) {
            m += ", ...";
            break;
        }
        m += concat(m.empty() ? "" : ", ", name, ": ", n);
    }
    return concat(f.size(), " field(s)", m.empty() ? "" : " (" + m + ")", ", ", steps, " step(s) of the runs in common");
}

std::string run_list(const std::vector<std::string>& runs) {
    if (runs.empty()) return "none";
    std::string s;
    for (const auto& r : runs) s += (s.empty() ? "'" : ", '") + r + "'";
    return s;
}

/// A JSON string: quotes, backslashes and control characters escaped; other
/// bytes as they are (run and metric names are UTF-8).
std::string js(const std::string& s) {
    std::string o = "\"";
    for (const unsigned char c : s) {
        if (c == '"' || c == '\\') o += {'\\', static_cast<char>(c)};
        else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else o += static_cast<char>(c);
    }
    return o + "\"";
}

/// A JSON value: %.17g, or "NaN" / "Infinity" / "-Infinity" as strings
/// (JSON has no such numbers; a strict parser would reject NaN).
std::string jn(double v) {
    if (std::isnan(v)) return "\"NaN\"";
    if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    return exact(v);
}

std::string json_fields(const std::vector<reconcile_field>& f) {
    std::string o = "[";
    for (std::size_t i = 0; i < f.size(); ++i)
        o += concat(i ? ",\n  " : "\n  ", "{\"run\": ", js(f[i].run), ", \"step\": ", jn(f[i].step),
                    ", \"metric\": ", js(f[i].metric), "}");
    return o + (f.empty() ? "]" : "\n ]");
}

std::string json_strings(const std::vector<std::string>& v) {
    std::string o = "[";
    for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + js(v[i]);
    return o + "]";
}

}  // namespace

std::string reconcile_text(const reconcile_result& r) {
    const std::string how = r.rtol > 0 ? "agree within rtol " + number_text(r.rtol) : std::string("agree exactly");
    std::string o = concat(r.overlapping, " overlapping numeric fields: ", r.agree, " ", how, ", ", r.differ.size(),
                           " differ\n");
    if (!r.differ.empty()) o += "differences (run, step, metric: A, B, relative difference):\n";
    // the first 1,000 on a terminal-sized listing; --json lists every one
    const std::size_t shown = std::min<std::size_t>(r.differ.size(), 1000);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& d = r.differ[i];
        o += concat("  '", d.run, "', step ", exact(d.step), ", ", d.metric,
                    d.metric_b != d.metric ? " (B: " + d.metric_b + ")" : "", ": ", exact(d.a), ", ", exact(d.b),
                    ", ", relative_text(d.a, d.b), "\n");
    }
    if (shown < r.differ.size())
        o += concat("  ... and ", r.differ.size() - shown, " more (--json lists every difference)\n");
    o += "only in A: " + one_side(r.only_a, r.steps_only_a) + "\n";
    o += "only in B: " + one_side(r.only_b, r.steps_only_b) + "\n";
    o += "runs only in A: " + run_list(r.runs_only_a) + "\n";
    o += "runs only in B: " + run_list(r.runs_only_b) + "\n";
    return o;
}

std::string reconcile_json(const reconcile_result& r) {
    std::string o = concat("{\n \"overlapping\": ", r.overlapping, ",\n \"agree\": ", r.agree, ",\n \"rtol\": ",
                           number_text(r.rtol), ",\n \"differ\": [");
    for (std::size_t i = 0; i < r.differ.size(); ++i) {
        const auto& d = r.differ[i];
        o += concat(i ? ",\n  " : "\n  ", "{\"run\": ", js(d.run), ", \"step\": ", jn(d.step), ", \"metric\": ",
                    js(d.metric), d.metric_b != d.metric ? ", \"metric_b\": " + js(d.metric_b) : "", ", \"a\": ",
                    jn(d.a), ", \"b\": ", jn(d.b), "}");
    }
    o += r.differ.empty() ? "],\n" : "\n ],\n";
    o += " \"only_a\": " + json_fields(r.only_a) + ",\n \"only_b\": " + json_fields(r.only_b) + ",\n";
    o += concat(" \"steps_only_a\": ", r.steps_only_a, ",\n \"steps_only_b\": ", r.steps_only_b, ",\n");
    o += " \"runs_only_a\": " + json_strings(r.runs_only_a) + ",\n \"runs_only_b\": " + json_strings(r.runs_only_b);
    o += ",\n \"notes\": " + json_strings(r.notes) + "\n}\n";
    return o;
}

}  // namespace logratio_cli
