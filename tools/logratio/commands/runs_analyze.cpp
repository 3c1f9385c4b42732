// `logratio runs` / `report`: the stages in order (runs_steps.hpp) -- the
// inputs loaded into one runs table, analysed once into the evidence value,
// which every output then renders.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <logratio/core/error.hpp>

#include "../output/atomic_file.hpp"
#include "../io/files_read.hpp"
#include "../output/atomic_directory.hpp"
#include "../output/html_report.hpp"
#include "../output/markdown_report.hpp"
#include "../output/runs_output.hpp"
#include "runs_evidence.hpp"
#include "reconcile.hpp"
#include "runs_export.hpp"
#include "runs_render.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {

namespace fs = std::filesystem;

int run_runs(const runs_args& a) {
    const auto L = load_runs(a);
    if (a.list_attributes) {
        print_attributes(L, a.json);
        return 0;
    }
    const auto e = evidence_of(a, L, !a.html.empty());
    if (!a.html.empty()) write_atomically(a.html, html_report(e));
    if (a.json) {
        std::cout << evidence_json_text(e) << "\n";
        return 0;
    }
    print_evidence(e);
    return 0;
}

namespace {

reconcile_options reconcile_options_of(const runs_args& a) {
    reconcile_options o;
    o.format_a = a.format;
    o.pattern = a.pattern;
    o.threads = a.threads;
    return o;
}

void print_report_lines(const evidence& e) {
    for (const auto& l : e.report.verdict) std::printf("%s\n", l.c_str());
    if (!e.report.split.empty()) std::printf("numeric mismatch vs policy lag:\n");
    for (const auto& l : e.report.split) std::printf("%s\n", l.c_str());
    std::size_t zero = 0;
    for (const auto& x : *e.runs) zero += x.zero_grad_norm.size();
    if (!zero) return;
    std::string where;
    std::size_t shown = 0;
    for (const auto& x : *e.runs)
        for (double u : x.zero_grad_norm)
            if (shown++ < 8) where += (where.empty() ? "" : ", ") + x.series.run + " update " + fmt(u, "%g");
    std::printf("  %zu update(s) with zero gradient norm (kept, listed in the report): %s%s\n", zero, where.c_str(),
                zero > 8 ? ", ..." : "");
}

}  // namespace

namespace {

/// Where the Markdown's figures go: DIR/figures with --export, else a
/// directory "<FILE stem>_figures" beside the Markdown file.
std::string figure_directory(const runs_args& a) {
    if (!a.export_dir.empty()) return (fs::path(a.export_dir) / "figures").string();
    fs::path md(a.markdown);
    return (md.parent_path() / (md.stem().string() + "_figures")).string();
}

/// A figure directory may be replaced when it holds only SVG files (one we wrote).
bool only_figures(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (!e.is_regular_file() || e.path().extension() != ".svg") return false;
    return !ec;
}

/// The figure directory as the Markdown file links it (relative to the file's directory).
std::string figure_link(const runs_args& a) {
    std::error_code ec;
    const auto md_dir = fs::absolute(fs::path(a.markdown), ec).parent_path();
    const auto rel = fs::relative(fs::absolute(figure_directory(a), ec), md_dir, ec);
    return ec || rel.empty() ? figure_directory(a) : rel.generic_string();
}

}  // namespace

/// An output file path that is a directory would fail only at the last
/// rename, after other outputs were put in place: refused first.
void check_file_target(const std::string& path, const char* option) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw logratio::error(std::string(option) + " " + path + ": a directory, not a file: nothing was written");
}

int run_report(const runs_args& a) {
    if (!a.export_dir.empty()) check_export_target(a.export_dir);  // before anything is read
    check_file_target(a.html.empty() ? std::string("logratio-report.html") : a.html, "--html");
    if (!a.markdown.empty()) check_file_target(a.markdown, "--markdown");
    if (!a.markdown.empty() && a.export_dir.empty()) {
        const auto problem = directory_target_problem(figure_directory(a), &only_figures);
        if (!problem.empty()) throw logratio::error("--markdown's figures: " + problem);
    }
    const auto L = load_runs(a);
    auto e = evidence_of(a, L, true);
    std::optional<reconcile_result> rec;
    std::vector<input_record> reconciled;
    if (!a.reconcile.empty()) {
        const auto mark = files_read_count();
        rec = reconcile_sources(a.inputs, a.reconcile, reconcile_options_of(a));
        input_record b;
        b.input = a.reconcile;
        b.reader = "reconcile --reconcile (side B)";
        b.files = files_read_between(mark, files_read_count());
        b.notes = rec->notes;
        reconciled.push_back(std::move(b));
        e.report.source_sections.push_back(reconcile_section(a.reconcile, *rec));
    }
    if (!a.export_dir.empty()) e.report.source_sections.push_back(export_section(a.export_dir));
    // every output is made before any is put in place: an error leaves none
    const std::string out = a.html.empty() ? std::string("logratio-report.html") : a.html;
    atomic_file html(out);
    html.write(html_report(e));
    std::optional<atomic_file> md;
    const auto figures = report_figures(e);
    if (!a.markdown.empty()) {
        md.emplace(a.markdown);
        md->write(markdown_report(e, figure_link(a)));
    }
    if (!a.export_dir.empty()) {
        std::vector<std::pair<std::string, std::string>> extra;
        if (rec) extra.push_back({"reconcile.json", reconcile_json(*rec) + "\n"});
        write_export(a, L, e, evidence_json_text(e), figures, extra, reconciled);
    } else if (md) {
        atomic_directory dir(figure_directory(a), &only_figures);
        for (const auto& [name, svg] : figures) dir.write(name, svg);
        dir.commit();
    }
    html.commit();
    if (md) md->commit();
    print_report_lines(e);
    if (rec)
        std::printf("  %s; on one side only: %zu field(s) and %zu run(s) of the inputs, %zu field(s) and %zu run(s) of %s\n",
                    reconcile_summary(*rec).c_str(), rec->only_a.size(), rec->runs_only_a.size(), rec->only_b.size(),
                    rec->runs_only_b.size(), a.reconcile.c_str());
    std::printf("report: %s\n", out.c_str());
    if (md) std::printf("markdown: %s (figures in %s)\n", a.markdown.c_str(), figure_directory(a).c_str());
    if (!a.export_dir.empty()) std::printf("export: %s\n", a.export_dir.c_str());
    return 0;
}

}  // namespace logratio_cli
