// `logratio runs` / `report`: the evidence rendered (runs_render.hpp).
#include "runs_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "../io/number_text.hpp"
#include "../output/runs_output.hpp"
#include "reconcile.hpp"
#include "runs_export.hpp"

namespace logratio_cli {

namespace {

nlohmann::ordered_json strata_json(const evidence& e) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& s : e.strata) {
        nlohmann::ordered_json o;
        o["by"] = e.by;
        o["value"] = s.value;
        o["runs"] = nlohmann::ordered_json::array();
        for (const auto& r : s.runs) o["runs"].push_back(r.series.run);
        // the stratum's analysis as `runs --json` gives it, its per-run
        // objects under "run_stats" ("runs" names the stratum's runs)
        const auto body = runs_json(e.metrics[0].metric, s.analysis, s.runs);
        for (auto it = body.begin(); it != body.end(); ++it) o[it.key() == "runs" ? "run_stats" : it.key()] = it.value();
        arr.push_back(std::move(o));
    }
    return arr;
}

nlohmann::ordered_json left_out_json(const evidence& e) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& x : e.left_out) arr.push_back({{"run", x.run}, {"reason", x.reason}});
    return arr;
}

}  // namespace

std::string cell4(double v) { return fmt(v, "%.4g"); }

nlohmann::ordered_json evidence_json(const evidence& e) {
    nlohmann::ordered_json j;
    if (!e.metrics_given) {
        j = runs_json(e.metric, e.metrics[0].analysis, *e.runs);
    } else {
        j["metrics"] = nlohmann::ordered_json::array();
        for (const auto& m : e.metrics) j["metrics"].push_back(runs_json(m.metric, m.analysis, *m.runs));
    }
    if (!e.by.empty()) {
        j["strata"] = strata_json(e);
        j["strata_agreement"] = {{"by", e.by},
                                 {"assessed", e.agreement.assessed},
                                 {"level_holds", e.agreement.level_holds},
                                 {"drift_holds", e.agreement.drift_holds}};
    }
    if (e.min_updates) j["min_updates"] = e.min_updates;
    if (!e.left_out.empty()) j["left_out"] = left_out_json(e);
    if (e.metrics_given || !e.notes.empty()) {
        auto notes = j.contains("notes") ? j["notes"] : nlohmann::ordered_json::array();
        if (e.metrics_given)
            for (const auto& n : e.runs->front().notes) notes.push_back(n);
        for (const auto& n : e.notes) notes.push_back(n);
        j.erase("notes");
        j["notes"] = notes;
    }
    return j;
}

std::string evidence_json_text(const evidence& e) {
    return evidence_json(e).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void print_evidence(const evidence& e) {
    for (std::size_t m = 0; m < e.metrics.size(); ++m) {
        if (m) std::printf("\n");
        print_runs_table(e.metrics[m].metric, e.metrics[m].analysis);
    }
    if (!e.left_out.empty()) std::printf("\n%s\n", source_line(e).c_str());
    if (e.by.empty()) return;
    std::printf("\n%s\n", strata_line(e).c_str());
    for (const auto& s : e.strata) {
        std::printf("\n%s = %s (%zu run%s)\n", e.by.c_str(), s.value.c_str(), s.runs.size(), s.runs.size() == 1 ? "" : "s");
        for (const auto& l : verdict_lines(e.metrics[0].metric, s.analysis, 0.95, axis_name(e.axis))) std::printf("%s\n", l.c_str());
    }
}

void print_attributes(const loaded_runs& L, bool json) {
    std::map<std::string, std::map<std::string, std::size_t>> values;
    for (const auto& r : L.runs)
        for (const auto& [k, v] : r.attributes) ++values[k][v];
    if (json) {
        nlohmann::ordered_json j{{"runs", L.runs.size()}, {"attributes", nlohmann::ordered_json::object()}};
        for (const auto& [k, vs] : values) {
            std::size_t n = 0;
            for (const auto& kv : vs) n += kv.second;
            j["attributes"][k] = {{"runs", n}, {"values", vs}};
        }
        std::printf("%s\n", j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
        return;
    }
    if (values.empty()) {
        std::printf("no run attributes in the inputs (%zu runs)\n", L.runs.size());
        return;
    }
    std::printf("%-32s %9s  %s\n", "attribute", "runs    ", "values (runs)");
    for (const auto& [k, vs] : values) {
        std::size_t n = 0, shown = 0;
        std::string list;
        for (const auto& [v, c] : vs) {
            n += c;
            // a value is shown up to 60 bytes (W&B and MLflow store whole JSON documents as values)
            const std::string shown_value = v.size() > 60 ? v.substr(0, 57) + "..." : v;
            if (shown++ < 6) list += (list.empty() ? "" : ", ") + shown_value + " (" + std::to_string(c) + ")";
        }
        if (vs.size() > 6) list += ", ... (" + std::to_string(vs.size()) + " values)";
        std::printf("%-32s %4zu/%-4zu  %s\n", k.c_str(), n, L.runs.size(), list.c_str());  // "runs" = 9 columns
    }
}

namespace {

report_table group_table(const metric_analysis& m, const std::string& axis) {
    report_table t;
    t.caption = m.metric + " by group";
    t.header = {"group", "runs", "updates", "mean", "95% CI", "mean slope per " + axis, "rising"};
    t.numeric = {false, true, true, true, true, true, true};
    for (const auto& g : m.analysis.groups)
        t.rows.push_back({g.group, std::to_string(g.runs), std::to_string(g.updates), cell4(g.mean_of_means.mean),
                          "[" + cell4(g.mean_of_means.low) + ", " + cell4(g.mean_of_means.high) + "]",
                          fmt(g.mean_slope.mean, "%.3g"), std::to_string(g.rising) + "/" + std::to_string(g.runs)});
    return t;
}

report_table run_table(const metric_analysis& m) {
    report_table t;
    t.caption = m.metric + " per run";
    t.header = {"run", "group", "updates", "mean", "max", "OLS slope", "slope 95% CI", "Kendall tau", "p"};
    t.numeric = {false, false, true, true, true, true, true, true, true};
    for (const auto& r : m.analysis.runs)
        t.rows.push_back({r.run, r.group, std::to_string(r.updates), cell4(r.summary.mean), cell4(r.summary.max),
                          fmt(r.ols.slope, "%.3g"),
                          "[" + fmt(r.ols.slope_ci_low, "%.3g") + ", " + fmt(r.ols.slope_ci_high, "%.3g") + "]",
                          fmt(r.kendall.tau, "%.3f"), p_cell(r.kendall.pvalue)});
    return t;
}

report_section policy_diagnostics(const evidence& e) {
    report_section s;
    s.id = "policy-diagnostics";
    s.title = "Policy diagnostics";
    s.paragraphs.push_back("Per run: the mean of each metric over its updates (missing values left out, never "
                           "interpolated; '-' where a run did not log the metric).");
    report_table t;
    t.header = {"run", "group", "updates"};
    t.numeric = {false, false, true};
    for (const auto& m : e.metrics) {
        t.header.push_back(m.metric);
        t.numeric.push_back(true);
    }
    const auto& runs = e.metrics[0].analysis.runs;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::vector<std::string> row{runs[i].run, runs[i].group, std::to_string(runs[i].updates)};
        for (const auto& m : e.metrics) row.push_back(cell4(m.analysis.runs[i].summary.mean));
        t.rows.push_back(std::move(row));
    }
    s.tables.push_back(std::move(t));
    return s;
}

report_section strata_section(const evidence& e, const std::string& axis) {
    report_section s;
    s.id = "strata";
    s.title = "Strata by " + e.by;
    s.paragraphs.push_back(strata_line(e));
    for (const auto& st : e.strata) {
        metric_analysis m{e.metrics[0].metric + " with " + e.by + " = " + st.value, &st.runs, st.analysis};
        auto t = group_table(m, axis);
        if (st.analysis.comparison) {
            const auto& c = *st.analysis.comparison;
            t.caption += "; " + c.a + " - " + c.b + ": level " + fmt(c.means.mean_diff, "%.3g") + " (Welch " +
                         p_phrase(c.means.pvalue) + "), slope Welch " + p_phrase(c.slopes.pvalue);
        }
        s.tables.push_back(std::move(t));
    }
    for (const auto& n : e.notes) s.details.push_back(n);
    return s;
}

}  // namespace

report_section reconcile_section(const std::string& b, const reconcile_result& r) {
    report_section s;
    s.id = "reconcile";
    s.title = "Reconciled with " + b;
    s.paragraphs.push_back(reconcile_summary(r) + ".");
    s.paragraphs.push_back("Fields only in the report's inputs: " + std::to_string(r.only_a.size()) + " (" +
                           std::to_string(r.steps_only_a) + " steps of the runs in common); only in " + b + ": " +
                           std::to_string(r.only_b.size()) + " (" + std::to_string(r.steps_only_b) +
                           " steps); runs on one side only: " + std::to_string(r.runs_only_a.size()) + " and " +
                           std::to_string(r.runs_only_b.size()) + ".");
    if (!r.differ.empty()) {
        report_table t;
        t.caption = "differences (values exact)";
        t.header = {"run", "step", "metric", "inputs", b, "relative difference"};
        t.numeric = {false, true, false, true, true, true};
        for (std::size_t i = 0; i < r.differ.size() && i < 200; ++i) {
            const auto& d = r.differ[i];
            const double rel = std::fabs(d.a - d.b) / std::max(std::fabs(d.a), std::fabs(d.b));
            t.rows.push_back({d.run, number_text(d.step), d.metric == d.metric_b ? d.metric : d.metric + " = " + d.metric_b,
                              number_text(d.a), number_text(d.b), fmt(rel, "%.3g")});
        }
        if (r.differ.size() > 200) t.caption += "; the first 200 of " + std::to_string(r.differ.size());
        s.tables.push_back(std::move(t));
    }
    for (const auto& n : r.notes) s.details.push_back(n);
    return s;
}

report_section export_section(const std::string& dir) {
    report_section s;
    s.id = "export";
    s.title = "Frozen data";
    s.paragraphs.push_back("The data behind this report is in " + dir +
                           "/: updates.csv (one row per run and update, every metric), run_summary.csv, "
                           "group_summary.csv, comparison.csv, run_attributes.csv, summary.json, figures/ and "
                           "manifest.json (every input file with its size and SHA-256, the command line). "
                           "`logratio runs " + dir + "` reads it back to the same numbers.");
    return s;
}

std::vector<report_section> analysis_sections(const evidence& e) {
    std::vector<report_section> out;
    if (e.metrics.size() > 1) {
        out.push_back(policy_diagnostics(e));
        for (std::size_t m = 1; m < e.metrics.size(); ++m) {
            report_section s;
            s.id = "metric-" + std::to_string(m);
            s.title = "Metric " + e.metrics[m].metric;
            s.tables.push_back(group_table(e.metrics[m], e.axis));
            s.tables.push_back(run_table(e.metrics[m]));
            out.push_back(std::move(s));
        }
    }
    if (!e.by.empty()) out.push_back(strata_section(e, e.axis));
    return out;
}

}  // namespace logratio_cli

namespace logratio_cli {

namespace {

/// A JSON string literal (invalid UTF-8 replaced, as the other JSON output).
std::string json_string(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// A value as JSON: the number_text of a finite double (reads back as the
/// same double); NaN and infinities, which JSON has no numbers for, as the
/// strings "nan", "inf", "-inf".
std::string json_number(double v) { return std::isfinite(v) ? number_text(v) : "\"" + number_text(v) + "\""; }

void print_points_json(const points_read& p) {
    std::string o = "{\n \"inputs\": [";
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
        o += std::string(i ? "," : "") + "\n  {\"input\": " + json_string(p.inputs[i].first) +
             ", \"reader\": " + json_string(p.inputs[i].second) + "}";
    o += "\n ],\n \"notes\": [";
    for (std::size_t i = 0; i < p.notes.size(); ++i) o += std::string(i ? "," : "") + "\n  " + json_string(p.notes[i]);
    o += "\n ],\n \"points\": [";
    std::fwrite(o.data(), 1, o.size(), stdout);
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
        const auto& r = p.rows[i];
        o = std::string(i ? "," : "") + "\n  {\"run\": " + json_string(r.run) + ", \"step\": " + json_number(r.step) +
            ", \"metric\": " + json_string(r.metric) + ", \"value\": " + json_number(r.value) + "}";
        std::fwrite(o.data(), 1, o.size(), stdout);
    }
    std::fputs("\n ]\n}\n", stdout);
}

}  // namespace

int run_points(const runs_args& a) {
    const points_read p = load_points(a);
    for (const auto& [input, reader] : p.inputs) std::fprintf(stderr, "read %s %s\n", reader.c_str(), input.c_str());
    for (const auto& n : p.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    if (a.json) {
        print_points_json(p);
        return 0;
    }
    // tab-separated: run names hold spaces; a tab or newline in a name is shown as a space
    const auto clean = [](std::string s) {
        std::replace_if(s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
        return s;
    };
    std::printf("run\tstep\tmetric\tvalue\n");
    for (const auto& r : p.rows)
        std::printf("%s\t%s\t%s\t%s\n", clean(r.run).c_str(), number_text(r.step).c_str(), clean(r.metric).c_str(),
                    number_text(r.value).c_str());
    return 0;
}

}  // namespace logratio_cli
