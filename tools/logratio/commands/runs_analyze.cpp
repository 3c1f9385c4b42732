// `logratio runs` / `report`: the statistics over the runs (Boost.Math,
// logratio/runs) and what the two commands print and write.
#include <cstdio>
#include <iostream>

#include <logratio/core/error.hpp>
#include <logratio/runs/runs.hpp>

#include "../output/atomic_file.hpp"
#include "../output/runs_output.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {
namespace {

logratio::runs_analysis analyze(const runs_args& a, const loaded_runs& L) {
    logratio::runs_options o;
    if (!a.compare.empty()) {
        const auto comma = a.compare.find(',');
        if (comma == std::string::npos || a.compare.find(',', comma + 1) != std::string::npos)
            throw logratio::error("--compare: give two groups as A,B (got '" + a.compare + "')");
        o.compare_a = a.compare.substr(0, comma);
        o.compare_b = a.compare.substr(comma + 1);
    }
    std::vector<logratio::run_series> series;
    for (const auto& r : L.runs) series.push_back(r.series);
    return logratio::analyze_runs(series, o);
}

}  // namespace

int run_runs(const runs_args& a) {
    const auto L = load_runs(a);
    const auto an = analyze(a, L);
    if (!a.html.empty()) write_atomically(a.html, report_html(a, L, an));
    if (a.json) {
        std::cout << runs_json_text(L.metric, an, L.runs) << "\n";
        return 0;
    }
    print_runs_table(L.metric, an);
    return 0;
}

int run_report(const runs_args& a) {
    const auto L = load_runs(a);
    const auto an = analyze(a, L);
    const std::string out = a.html.empty() ? std::string("logratio-report.html") : a.html;
    write_atomically(out, report_html(a, L, an));
    for (const auto& l : verdict_lines(L.metric, an)) std::printf("%s\n", l.c_str());
    const auto split = split_lines(L);
    if (!split.empty()) std::printf("numeric mismatch vs policy lag:\n");
    for (const auto& l : split) std::printf("%s\n", l.c_str());
    std::size_t zero = 0;
    for (const auto& r : L.runs) zero += r.zero_grad_norm.size();
    if (zero) std::printf("  %zu update(s) with zero gradient norm are listed in the report\n", zero);
    std::printf("report: %s\n", out.c_str());
    return 0;
}

}  // namespace logratio_cli
