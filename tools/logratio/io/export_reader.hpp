#pragma once
// Reading back a logratio export (`logratio report ... --export DIR`, written
// by output/export_writer.hpp): DIR/manifest.json names the metrics and the
// analysis options; DIR/updates.csv holds one row per run x update with every
// metric (an empty cell: not logged at that update; "nan": logged missing);
// DIR/run_attributes.csv the runs' attributes. The series come back exactly
// as they were analysed (numbers written shortest-round-trip), so `logratio
// runs DIR` gives the original analysis to the last digit.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "table.hpp"

namespace logratio_cli {

/// One metric's series over the export's runs (in the export's run order).
struct exported_metric {
    std::string metric;
    std::vector<run_input> runs;
};

struct export_data {
    std::string dir;
    std::string metric;   ///< the mismatch metric of the original analysis
    std::string compare;  ///< its --compare ("" when the first two groups were compared)
    std::size_t min_updates = 0;
    std::size_t rows = 0;  ///< rows of updates.csv
    std::vector<exported_metric> metrics;
    /// Runs the original analysis left out, and why (manifest "left_out").
    std::vector<std::pair<std::string, std::string>> left_out;
};

/// The manifest file name, and its marker key.
inline const char* export_manifest_name() { return "manifest.json"; }
inline const char* export_marker_key() { return "logratio_export"; }

/// Whether `path` is a directory holding a logratio export's manifest.
bool is_export_directory(const std::string& path);

/// The export's series; format_error naming the file, line and column when
/// a file is not what the export writer writes.
export_data read_export(const std::string& dir);

/// The series of `metrics` (the mismatch metric first) as runs: got[m] for
/// metrics[m]; a metric the export lacks is an error for the first, empty
/// series for the rest.
void export_runs(const export_data& e, const std::vector<std::string>& metrics,
                 std::vector<std::vector<run_input>>& got, std::vector<std::string>& notes);

}  // namespace logratio_cli
