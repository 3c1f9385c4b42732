// libFuzzer target: W&B chart CSV exports ("Step", "<run> - <metric>",
// __MIN/__MAX columns) through the CSV parser, the chart reader, the one
// history -> runs conversion and the run statistics.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "io/table.hpp"
#include "io/trackers/to_runs.hpp"
#include "io/trackers/wandb_chart.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 8192) return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto t = logratio_cli::parse_csv(text, "fuzz.csv");
        const auto set = logratio_cli::trackers::read_wandb_chart(t);
        logratio_cli::history_options o;
        o.step_column = t.columns[0];
        std::vector<logratio::run_series> s;
        for (const auto& r : set.runs) {
            std::string how;
            s.push_back(logratio_cli::trackers::run_from_history(r, r.metrics.begin()->first, o, how).series);
        }
        (void)logratio::analyze_runs(s);
    } catch (const logratio::error&) {
    }
    return 0;
}
