// libFuzzer target: the CSV / JSON Lines table readers, the long-format and
// logging-history run builders, and the run statistics on whatever numbers
// they produce (NaN, inf, ties, huge values). The first byte picks the format.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "io/table.hpp"
#include "io/table_stream.hpp"
#include "output/html_report.hpp"
#include "output/runs_output.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 4096) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        const auto t = (data[0] & 1) ? logratio_cli::parse_jsonl(text, "fuzz.jsonl")
                                     : logratio_cli::parse_csv(text, "fuzz.csv");
        std::vector<logratio_cli::run_input> in;
        if (data[0] & 2) {
            logratio_cli::history_options o;
            o.step_column = "s";
            o.steps_per_batch = 2;
            o.grad_norm_column = t.column("g") ? "g" : "";
            in.push_back(logratio_cli::history_run(t, "m", o));
        } else {
            auto table = logratio_cli::long_table_of(t);  // the long-table path every command reads
            std::vector<std::vector<logratio_cli::run_input>> got(1);
            logratio_cli::long_table_runs(table, {"m"}, got);
            in = std::move(got[0]);
        }
        std::vector<logratio::run_series> s;
        for (const auto& r : in) s.push_back(r.series);
        const auto a = logratio::analyze_runs(s);
        (void)logratio_cli::runs_json_text("m", a, in);
        logratio_cli::report_inputs r;
        r.metric = "m";
        r.source = "fuzz";
        r.analysis = &a;
        r.runs = &in;
        r.verdict = logratio_cli::verdict_lines("m", a);
        (void)logratio_cli::html_report(r);
    } catch (const logratio::error&) {
    }
    return 0;
}
