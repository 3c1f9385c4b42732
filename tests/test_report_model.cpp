// The report's section model (report_sections.hpp) and its two renderers:
// the order of the sections, the sections other parts add (analysis_sections,
// source_sections, source_line) placed where they belong in both the HTML
// page and the Markdown, the headline, slopes "per <axis>", the Doctor's
// grouped findings, many runs (top 50, group bands), the Markdown's tables
// (header, separator, the same column count in every row) and figures, and
// the JSON block that cannot end the page's script early.
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/runs/runs.hpp>

#include "doctor_report.hpp"
#include "html_report.hpp"
#include "markdown_report.hpp"
#include "report_sections.hpp"
#include "runs_output.hpp"

namespace {

using namespace logratio_cli;

/// `n_async` rising runs and `n_sync` flat ones over 12 updates, one
/// missing value; names may be odd (escaping).
struct fixture {
    std::vector<run_input> runs;
    logratio::runs_analysis analysis;
    report_inputs r;

    explicit fixture(std::size_t n_async = 3, std::size_t n_sync = 2, const std::string& odd = "") {
        for (std::size_t k = 0; k < n_async + n_sync; ++k) {
            run_input in;
            const bool async = k < n_async;
            in.series.run = (k == 0 && !odd.empty()) ? odd : (async ? "async-" : "sync-") + std::to_string(k);
            in.series.group = async ? "async" : "sync";
            for (int u = 1; u <= 12; ++u) {
                const double wiggle = 0.0004 * std::sin(0.7 * u + static_cast<double>(k));
                in.series.update.push_back(u);
                in.series.value.push_back(0.01 + (async ? (0.002 + 0.0001 * static_cast<double>(k)) * u : 0) + wiggle);
            }
            if (k == 1) in.series.value[5] = NAN;
            runs.push_back(std::move(in));
        }
        std::vector<logratio::run_series> s;
        for (const auto& x : runs) s.push_back(x.series);
        analysis = logratio::analyze_runs(s);
        r.metric = "delta_abs_mean";
        r.source = "runs.csv";
        r.analysis = &analysis;
        r.runs = &runs;
        r.verdict = verdict_lines(r.metric, analysis);
    }
};

std::vector<std::string> ids(const std::vector<report_section>& ss) {
    std::vector<std::string> out;
    for (const auto& s : ss) out.push_back(s.id);
    return out;
}

report_section extra(const std::string& id, const std::string& title) {
    report_section s;
    s.id = id;
    s.title = title;
    s.paragraphs.push_back(title + " says something");
    report_table t;
    t.header = {"run", "value | unit"};
    t.numeric = {false, true};
    t.rows = {{"async-0", "0.5"}, {"a|b", "1"}};
    s.tables.push_back(t);
    return s;
}

/// Positions of `needles` in `hay`, each after the one before (npos: missing).
bool in_order(const std::string& hay, const std::vector<std::string>& needles) {
    std::size_t at = 0;
    for (const auto& n : needles) {
        const auto p = hay.find(n, at);
        if (p == std::string::npos) return false;
        at = p + n.size();
    }
    return true;
}

/// Cells of a GFM table row ("| a | b\\|c |" -> 2 cells).
std::size_t cell_count(const std::string& row) {
    std::size_t bars = 0;
    for (std::size_t i = 0; i < row.size(); ++i)
        if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++bars;
    return bars - 1;
}

/// Every table of a Markdown text: header, separator, rows of the same width.
std::size_t check_tables(const std::string& md) {
    std::vector<std::string> lines;
    for (std::size_t a = 0, b; a < md.size(); a = b + 1) {
        b = md.find('\n', a);
        if (b == std::string::npos) b = md.size();
        lines.push_back(md.substr(a, b - a));
    }
    const std::regex sep(R"(^\|( -{3,}:? \|)+$)");
    std::size_t tables = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].empty() || lines[i][0] != '|') continue;
        ++tables;
        const std::size_t n = cell_count(lines[i]);
        REQUIRE(i + 1 < lines.size());
        CHECK_MESSAGE(std::regex_match(lines[i + 1], sep), lines[i + 1]);
        CHECK(cell_count(lines[i + 1]) == n);
        std::size_t j = i + 2;
        for (; j < lines.size() && !lines[j].empty() && lines[j][0] == '|'; ++j) CHECK_MESSAGE(cell_count(lines[j]) == n, lines[j]);
        i = j;
    }
    return tables;
}

}  // namespace

TEST_CASE("report sections: the order, and the sections other parts add") {
    fixture f;
    CHECK(ids(report_sections(f.r)) == std::vector<std::string>{"verdict", "trend", "runs", "zero-grad", "sources"});
    f.runs[0].notes.push_back("run 'async-0': a note");
    CHECK(ids(report_sections(f.r)) == std::vector<std::string>{"verdict", "trend", "runs", "zero-grad", "notes", "sources"});
    f.r.source_line = "5 runs (async 3, sync 2), each with 12 updates carrying it";
    f.r.analysis_sections = {extra("policy", "Policy diagnostics"), extra("strata", "Strata")};
    f.r.source_sections = {extra("reconcile", "Reconcile")};
    f.r.split = {"  async (3 dumps with old_logprobs): mean |delta| 0.04; ...: staleness dominates"};
    const auto ss = report_sections(f.r);
    CHECK(ids(ss) == std::vector<std::string>{"verdict", "trend", "runs", "policy", "strata", "evidence", "split",
                                              "zero-grad", "notes", "sources", "reconcile"});
    CHECK(ss[0].paragraphs.at(1) == f.r.source_line);  // right under the headline
    CHECK(ss[1].charts == std::vector<std::string>{"trend", "group_means"});

    const std::string html = html_report(f.r);
    CHECK(in_order(html, {"class=\"headline\"", f.r.source_line, "id=\"trend\"", "id=\"runs\"", "id=\"policy\"",
                          "Policy diagnostics says something", "id=\"strata\"", "id=\"evidence\"", "id=\"sources\"",
                          "id=\"reconcile\"", "Reconcile says something"}));
    CHECK(in_order(html, {"href=\"#verdict\"", "href=\"#policy\"", "href=\"#reconcile\"", "<main>"}));  // contents
    const std::string md = markdown_report(f.r, "figures");
    CHECK(in_order(md, {"**async: mismatch grows", f.r.source_line, "## delta_abs_mean per update", "## Runs",
                        "## Policy diagnostics", "## Strata", "## Evidence", "### Numeric mismatch vs policy lag",
                        "## Sources", "## Reconcile"}));
    CHECK(md.find("| a\\|b | 1 |") != std::string::npos);
    CHECK(md.find("| run | value \\| unit |") != std::string::npos);
    CHECK(markdown_escape("_x_ a_b *c* <d> e|f") == "\\_x\\_ a_b \\*c\\* \\<d\\> e\\|f");
    CHECK(check_tables(md) >= 5);
}

TEST_CASE("report headline: verdicts, the numeric-vs-lag split, per <axis>") {
    fixture f;
    CHECK(report_headline(f.r).rfind("async: mismatch grows 0.0021 per update in 3/3 runs; sync flat", 0) == 0);
    f.r.split = {"  async (3 dumps with old_logprobs): ... (l_T(new) - l_T(old)): staleness dominates"};
    CHECK(report_headline(f.r).find("; the difference is policy lag, not numerics") != std::string::npos);
    f.r.split = {"  async (3 dumps with old_logprobs): ...: kernels/precision dominate"};
    CHECK(report_headline(f.r).find("numerics (kernels/precision), not policy lag") != std::string::npos);
    f.r.axis = "train/step (slime's train/step)";
    CHECK(report_headline(f.r).find("per train/step in 3/3") != std::string::npos);
    const auto ss = report_sections(f.r);
    CHECK(ss[1].title == "delta_abs_mean per train/step, and the groups");
    CHECK(ss[0].details.at(1).find("mean slope 0.00211 per train/step [") != std::string::npos);
    CHECK(ss[1].tables[0].header[2] == "steps");
    const auto figs = report_figures(f.r);
    REQUIRE(figs.size() == 2);
    CHECK(figs[0].first == "trend.svg");
    CHECK(figs[0].second.find(">train/step (slime&#39;s train/step)</text>") != std::string::npos);  // x axis label
    CHECK(figs[1].first == "group_means.svg");
    for (const auto& x : figs) {
        CHECK(x.second.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
        CHECK(x.second.find("</svg>") != std::string::npos);
    }
    const std::string md = markdown_report(f.r, "figs");
    CHECK(in_order(md, {"![delta_abs_mean per train/step, one line per run](figs/trend.svg)",
                        "](figs/group_means.svg)"}));
    CHECK(markdown_report(f.r, "").find("](trend.svg)") != std::string::npos);
}

TEST_CASE("report page: names cannot end the data block or the markup") {
    fixture f(2, 1, "</script><b>&x");
    const std::string html = html_report(f.r);
    CHECK(html.find("</script><b>") == std::string::npos);
    CHECK(html.find("\\u003c/script\\u003e\\u003cb\\u003e\\u0026x") != std::string::npos);  // the JSON
    CHECK(html.find("&lt;/script&gt;&lt;b&gt;&amp;x") != std::string::npos);                 // the tables
    CHECK(html.find("uPlot") != std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
}

TEST_CASE("report with many runs: top 50 by |slope|, group bands") {
    fixture f(200, 200);
    const auto ss = report_sections(f.r);
    const auto& t = ss[2].tables.at(0);
    CHECK(t.rows.size() == 400);
    CHECK(t.shown == 50);
    for (std::size_t i = 1; i < t.rows.size(); ++i)
        CHECK(std::fabs(std::stod(t.rows[i - 1][5])) >= std::fabs(std::stod(t.rows[i][5])));
    CHECK(t.rows[0][0] == "async-199");  // the steepest
    const std::string md = markdown_report(f.r, "f");
    CHECK(md.find("350 more rows") != std::string::npos);
    CHECK(check_tables(md) >= 2);
    const auto figs = report_figures(f.r);
    CHECK(figs[0].second.find("median of runs") != std::string::npos);  // bands, not 400 lines
    CHECK(figs[0].second.find("<polygon") != std::string::npos);
    const std::string html = html_report(f.r);
    CHECK(html.find("\"many\":true") != std::string::npos);
    CHECK(html.find("<tr class=\"more\">") != std::string::npos);
}

TEST_CASE("doctor findings: one line per (check, run), update range and worst value") {
    namespace dr = logratio::doctor;
    std::vector<dump_diagnosis> ds;
    for (int u = 4; u <= 24; ++u)
        for (const std::string run : {"async-0", "async-1"}) {
            dump_diagnosis x;
            x.run = run;
            x.update = u;
            x.label = run + "@" + std::to_string(u);
            dr::finding f;
            f.check = "policy_lag";
            f.level = dr::severity::warn;
            f.summary = "lag dominates";
            f.num("total_delta_abs_mean", 0.06).num("lag_delta_abs_mean", 0.03 + 0.001 * u);
            x.d.findings.push_back(f);
            dr::finding ok;
            ok.check = "numeric";
            x.d.findings.push_back(ok);
            ds.push_back(x);
        }
    const auto lines = grouped_findings(ds);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "async-0: policy_lag warn at updates 4\u201324 (21 dumps), worst |lag| 0.054");
    CHECK(lines[1].rfind("async-1: policy_lag warn at updates 4\u201324", 0) == 0);
    const auto s = doctor_section(ds);
    CHECK(s.id == "doctor");
    CHECK(s.tables.at(0).header.at(0) == "check");
    CHECK(s.lines == lines);
    CHECK(s.details.size() == 42);  // every finding, folded away
    CHECK(s.charts == std::vector<std::string>{"doctor_position", "doctor_prob", "doctor_joint"});

    fixture f;
    f.r.doctor = &ds;
    const std::string html = html_report(f.r);
    CHECK(in_order(html, {"id=\"evidence\"", "id=\"doctor\"", "<table", "policy_lag", "<ul class=\"lines\">",
                          lines[0], "<details>", "async-0@4  policy_lag warn: lag dominates", "id=\"zero-grad\""}));
    CHECK(in_order(markdown_report(f.r, "x"), {"### Doctor", "| check |", "- async-0: policy_lag warn at updates 4",
                                               "](x/doctor_position.svg)", "<details>"}));
}
