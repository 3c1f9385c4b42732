#pragma once
// A text table's long-format runs for one metric, as every command reads
// them (io/table_stream.hpp: the table's rows into the per-run column
// builder, then long_table_runs' checks): for tests that build a table in
// memory (parse_csv, parse_jsonl, read_table).
#include <string>
#include <vector>

#include "table.hpp"
#include "table_stream.hpp"

namespace logratio_test {

/// The runs of `t` for `metric`, appended to `out`; the read's error thrown.
inline void long_runs(const logratio_cli::text_table& t, const std::string& metric,
                      std::vector<logratio_cli::run_input>& out) {
    auto table = logratio_cli::long_table_of(t);
    std::vector<std::vector<logratio_cli::run_input>> got(1);
    logratio_cli::long_table_runs(table, {metric}, got);
    for (auto& r : got[0]) out.push_back(std::move(r));
}

}  // namespace logratio_test
