// libFuzzer target: JSON histories (W&B JSON Lines / arrays with Python's
// NaN tokens, verl file-logger lines) through the tracker reader, the one
// history -> runs conversion (step and metric choice) and the run
// statistics. The first byte picks the step choice (and, bit 8, a key
// filter). Every input is also read with json_scanner alone: the simdjson
// path must give the same runs, values (bit for bit), notes, unread keys and
// errors, with and without the key filter, or the target traps.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <logratio/runs/runs.hpp>

#include "io/trackers/json_history.hpp"
#include "io/trackers/to_runs.hpp"

namespace {

/// The runs, notes, unread keys and values (their bits) a parser reads
/// with key filter `keys`, or its error.
std::string said(const std::string& text, logratio_cli::trackers::json_lines_parser p,
                 const logratio_cli::trackers::key_filter& keys = {}) {
    try {
        const auto set = logratio_cli::trackers::read_json_history_text(text, "fuzz.jsonl", keys, p);
        std::string s = set.reader;
        for (const auto& n : set.notes) s += "\n" + n;
        for (const auto& r : set.runs) {
            s += "\n" + r.name + "/" + r.group + "/" + r.step_name;
            for (const auto& u : r.unread) s += "\nunread " + u;
            for (const auto& [k, pts] : r.metrics) {
                s += "\n" + k;
                for (const auto& pt : pts) {
                    std::uint64_t b[2];
                    std::memcpy(&b[0], &pt.value, 8);
                    std::memcpy(&b[1], &pt.wall_time, 8);
                    s += " " + std::to_string(pt.step) + "=" + std::to_string(b[0]) + "@" + std::to_string(b[1]);
                }
            }
        }
        return s;
    } catch (const logratio::error& e) {
        return std::string("error ") + e.what();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 8192) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    using logratio_cli::trackers::json_lines_parser;
    if (said(text, json_lines_parser::fastest) != said(text, json_lines_parser::scanner)) __builtin_trap();
    if (data[0] & 8) {  // a key filter (`logratio runs --metric`): the numbers of the other keys are only checked
        const logratio_cli::trackers::key_filter keys({"a", "loss", "x/y"});
        if (said(text, json_lines_parser::fastest, keys) != said(text, json_lines_parser::scanner, keys)) __builtin_trap();
    }
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
