#include "html_report_data.hpp"

#include <cmath>
#include <cstdio>

#include "html_svg.hpp"
#include "report_svg.hpp"

namespace logratio_cli {

std::string json_string(const std::string& raw) {
    const std::string s = valid_utf8(raw);
    std::string o = "\"";
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            o += '\\';
            o += c;
        } else if (u < 0x20 || c == '<' || c == '>' || c == '&') {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", u);
            o += b;
        } else {
            o += c;
        }
    }
    return o + "\"";
}

namespace {

/// A number, or null when not finite (the chart breaks its line there).
void number(std::string& o, double v, const char* f) {
    if (!std::isfinite(v)) {
        o += "null";
        return;
    }
    char b[40];
    std::snprintf(b, sizeof b, f, v);
    o += b;
}

template <class T>
void array(std::string& o, const std::vector<T>& v, const char* f) {
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) o += ',';
        number(o, static_cast<double>(v[i]), f);
    }
    o += ']';
}

/// "xs" (each distinct run of steps once: runs logged at the same steps
/// share it) and "runs".
void runs_json(std::string& o, const std::vector<run_input>& runs, const std::vector<std::string>& groups) {
    std::vector<const std::vector<double>*> xs;
    std::vector<std::size_t> xi;
    for (const auto& r : runs) {
        std::size_t k = 0;
        while (k < xs.size() && *xs[k] != r.series.update) ++k;
        if (k == xs.size()) xs.push_back(&r.series.update);
        xi.push_back(k);
    }
    o += ",\"xs\":[";
    for (std::size_t k = 0; k < xs.size(); ++k) {
        if (k) o += ',';
        array(o, *xs[k], "%.10g");
    }
    o += "],\"runs\":[";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        o += (i ? ",{\"n\":" : "{\"n\":") + json_string(runs[i].series.run) +
             ",\"g\":" + std::to_string(group_index(groups, runs[i].series.group)) + ",\"x\":" + std::to_string(xi[i]) +
             ",\"y\":";
        array(o, runs[i].series.value, "%.6g");
        o += '}';
    }
    o += ']';
}

}  // namespace

std::string trend_data_json(const report_inputs& r) {
    static const std::vector<run_input> none;
    const auto& runs = r.runs ? *r.runs : none;
    const auto groups = report_groups(r);
    std::string o = "{\"metric\":" + json_string(r.metric) + ",\"axis\":" + json_string(r.axis) + ",\"groups\":[";
    for (std::size_t g = 0; g < groups.size(); ++g) o += (g ? "," : "") + json_string(groups[g]);
    o += "],\"colors\":[";
    for (std::size_t g = 0; g < 8; ++g) o += (g ? ",\"" : "\"") + std::string(html_detail::palette(g)) + "\"";
    o += std::string("],\"many\":") + (runs.size() > many_runs ? "true" : "false");
    runs_json(o, runs, groups);
    o += ",\"bands\":[";
    const auto bands = runs.size() > many_runs ? trend_bands(runs, groups) : std::vector<group_band>{};
    for (std::size_t i = 0; i < bands.size(); ++i) {
        const auto& b = bands[i];
        o += (i ? ",{\"g\":" : "{\"g\":") + std::to_string(b.group) + ",\"x\":";
        array(o, b.x, "%.10g");
        o += ",\"lo\":";
        array(o, b.lo, "%.6g");
        o += ",\"mid\":";
        array(o, b.mid, "%.6g");
        o += ",\"hi\":";
        array(o, b.hi, "%.6g");
        o += ",\"n\":";
        array(o, b.count, "%.0f");
        o += '}';
    }
    return o + "]}";
}

}  // namespace logratio_cli
