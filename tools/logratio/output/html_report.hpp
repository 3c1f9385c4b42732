#pragma once
// The self-contained HTML report of `logratio report`: the section model
// (report_sections.hpp) as one page with a table of contents, the trend
// chart drawn by uPlot (inlined with the page's own script: one offline file
// that requests nothing), the other charts as inline SVG. Well-formed
// XHTML-style markup (every element closed, text escaped, scripts in CDATA
// sections, the JSON data without < > &) so that an XML parser reads it.
#include <string>
#include <vector>

#include "../model/evidence.hpp"
#include "../model/report_model.hpp"
#include "../model/run_input.hpp"
#include "runs_output.hpp"

namespace logratio_cli {

/// What the section model (report_sections.hpp) is drawn from: views of one
/// evidence value (report_inputs_of below), or filled by hand (the tests).
struct report_inputs {
    std::string metric, source;
    const logratio::runs_analysis* analysis = nullptr;
    const std::vector<run_input>* runs = nullptr;
    std::vector<std::string> verdict;
    const dump_histogram* histogram = nullptr;
    std::vector<std::string> split;  ///< numeric-vs-lag lines, when the dumps have old_logprobs
    /// The doctor's findings on the dumps the report read (doctor_scan.hpp's
    /// diagnose_dumps), or null: the Doctor section of the evidence.
    const std::vector<dump_diagnosis>* doctor = nullptr;
    std::string doctor_html;  ///< legacy: pre-rendered Doctor markup, placed as is when `doctor` is null
    /// Which runs count: "10 runs (async 6, sync 4), each with >= 20 updates
    /// carrying <metric>, 240 updates; left out: ..." (the verdict's first line).
    std::string source_line;
    /// The horizontal axis: "update" for dumps and long tables, else the
    /// step column the runs were read by (e.g. "train/step (slime's
    /// train/step)"); slopes are "per <axis>".
    std::string axis = "update";
    /// Sections the run analysis adds (policy diagnostics per run, strata by
    /// an attribute), placed right after the per-run table.
    std::vector<report_section> analysis_sections;
    /// Sections about the sources (the reconcile line, the export and its
    /// manifest), placed with the sources at the end.
    std::vector<report_section> source_sections;
};

/// The whole report, in report_sections' order: headline, trend and group
/// means, runs, analysis sections, evidence, zero gradient norms, notes, sources.
std::string html_report(const report_inputs& r);

/// The section model's inputs as views into the evidence (its analysis, runs
/// and report parts: nothing computed, nothing read); `e` must outlive them.
report_inputs report_inputs_of(const evidence& e);

/// The report of the evidence value (`logratio report`, `runs --html`).
std::string html_report(const evidence& e);

}  // namespace logratio_cli
