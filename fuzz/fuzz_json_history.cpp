// libFuzzer target: JSON histories (W&B JSON Lines / arrays with Python's
// NaN tokens, verl file-logger lines) through the tracker reader, the one
// history -> runs conversion (step and metric choice) and the run
// statistics. The first byte picks the step choice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "io/trackers/json_history.hpp"
#include "io/trackers/to_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 8192) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        const auto set = logratio_cli::trackers::read_json_history_text(text, "fuzz.jsonl");
        logratio_cli::history_options o;
        if (data[0] & 1) o.step_column = "train/step";
        if (data[0] & 2) o.steps_per_batch = 2;
        std::vector<logratio::run_series> s;
        for (const auto& r : set.runs) {
            if (r.metrics.empty()) continue;
            std::string how;
            const std::string metric = (data[0] & 4) ? r.metrics.rbegin()->first : r.metrics.begin()->first;
            s.push_back(logratio_cli::trackers::run_from_history(r, metric, o, how).series);
        }
        (void)logratio::analyze_runs(s);
    } catch (const logratio::error&) {
    }
    return 0;
}
