#pragma once
// Tables of per-update metrics, as users export them:
//  - long format (CSV or JSON Lines): one row per update with columns run,
//    group, update and metric columns;
//  - logging-history exports (W&B-style CSV, one file per run): `_step` is a
//    logging-event counter, not a training step; rows are sparse (each event
//    logs some metrics); the training step is in a column such as
//    `train/step`.
// Missing cells stay missing (NaN in the series): never interpolated, never 0.
// Errors name the file, line and column.
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <logratio/core/error.hpp>
#include <logratio/runs/run_series.hpp>

#include "../model/run_input.hpp"
#include "mapped_file.hpp"

namespace logratio_cli {

/// A table of text cells. The cells are views into `storage` (the file's
/// bytes, quoted CSV fields unescaped in place), row-major; `line[i]` is the
/// 1-based source line of row i. Movable (the views follow the bytes: a
/// short string's bytes move), not copyable (the views would point into the
/// original).
struct text_table {
    std::string path;
    std::vector<std::string> columns;
    std::string storage;  ///< a string: parse_csv takes the file's text over instead of copying it
    /// or the file mapped (read_csv_file): the views point into its pages
    std::unique_ptr<mapped_file> mapping;
    std::vector<std::string_view> cells;
    std::vector<std::size_t> line;
    /// Columns of the file parse_csv was told not to keep (csv_columns):
    /// their cells were scanned, not stored; `columns` holds the others.
    std::vector<std::string> dropped;

    text_table() = default;
    text_table(text_table&& o) noexcept { take(o); }
    text_table& operator=(text_table&& o) noexcept {
        take(o);
        return *this;
    }
    text_table(const text_table&) = delete;
    text_table& operator=(const text_table&) = delete;

    std::size_t row_count() const { return line.size(); }
    std::string_view cell(std::size_t row, std::size_t col) const { return cells[row * columns.size() + col]; }
    std::optional<std::size_t> column(const std::string& name) const;
    /// "a, b, c": the columns, for messages.
    std::string column_list() const;

private:
    void take(text_table& o) noexcept;
};

/// RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines;
/// CRLF or LF line ends; the first record is the header; blank lines are
/// skipped. One pass over the bytes; cells are views (text_table).
text_table parse_csv(const std::string& text, const std::string& path);
/// The same, the table keeping `text`'s buffer (no copy of the file).
text_table parse_csv(std::string&& text, const std::string& path);
/// Which columns of a CSV a reader keeps (by header name); the others'
/// cells are scanned (the same errors) but not stored: `logratio runs
/// --metric M` of a W&B history stores a few columns of tens to hundreds.
using csv_columns = bool (*)(const std::string& column, const void* context);
/// parse_csv keeping the columns `keep(name, context)` says (text_table::dropped: the rest).
text_table parse_csv(std::string&& text, const std::string& path, csv_columns keep, const void* context);

/// The CSV file at `path` parsed as parse_csv(strip the UTF-8 BOM(read_text_file(path)), path, keep, context)
/// does, its pages mapped copy-on-write instead of read into a string (a
/// regular, non-empty file: the read's copy, the zeroed buffer and its page
/// faults were a sixth of a 100 MB W&B history's read); another file
/// (a pipe, an empty file) is read.
text_table read_csv_file(const std::string& path, csv_columns keep = nullptr, const void* context = nullptr);

/// JSON Lines: one object per line, keys are columns (union over all lines,
/// in order of first appearance); null or absent = missing.
text_table parse_jsonl(const std::string& text, const std::string& path);

/// The whole file; logratio::error naming it when it cannot be read.
std::string read_text_file(const std::string& path);
/// The size of the UTF-8 byte-order mark (Excel, some Windows tools) that
/// `text` starts with: 3, or 0 without one. Every text reader skips it.
inline std::size_t utf8_bom_size(std::string_view text) noexcept {
    return text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
}
/// read_text_file without its UTF-8 byte-order mark.
std::string read_text_file_without_bom(const std::string& path);
bool ends_with(const std::string& s, const std::string& suf);

/// CSV or JSON Lines by extension; a UTF-8 byte-order mark (Excel, some
/// Windows tools) is skipped; CRLF line ends are read as LF.
text_table read_table(const std::string& path);

/// A cell's text as a number into `x`: empty, nan, NaN, null, None, NA =
/// missing (NaN); surrounding spaces and tabs are ignored; false if it is
/// not a number. std::from_chars (io/number_parse.hpp): correctly rounded,
/// locale-independent.
bool cell_double(std::string_view s, double& x);

/// cell_double as an optional (std::nullopt: not a number). Inline: an
/// optional<double> returned from an out-of-line call was a store-forwarding
/// stall in the CSV profile (its flag byte stored, re-read as 8 bytes); the
/// readers' per-cell loops call cell_double (parse_cell) directly.
inline std::optional<double> cell_number(std::string_view s) {
    double x = 0;
    if (cell_double(s, x)) return x;
    return std::nullopt;
}

/// A cell as a number (cell_number); a non-number is an error naming the
/// file, line and column.
double parse_cell(const text_table& t, std::size_t row, std::size_t col);

/// How to read a logging-history export into updates.
struct history_options {
    std::string step_column;       ///< the training-step column (e.g. train/step); required
    double update_offset = 0;      ///< update = step + update_offset
    long steps_per_batch = 1;      ///< rollout batch = floor(step / steps_per_batch); position = step mod it
    std::string grad_norm_column;  ///< updates whose value here is exactly 0 are listed
    std::string run, group;        ///< names (default: file stem, parent directory)
};

/// The long format (columns run, group, update and metrics) is read by
/// io/table_stream.hpp (read_long_csv, long_table_of, long_table_runs):
/// one path for every command.

/// "a/b/run 1.csv" -> "run 1"; the directory holding a path ("all" if none).
std::string path_stem(const std::string& p);
std::string parent_name(const std::string& p);

/// A logging-history export of one run: rows merged per training step (the
/// last non-missing value of an event wins), events without a step skipped
/// (counted in a note), zero gradient norms listed.
run_input history_run(const text_table& t, const std::string& metric, const history_options& o);

/// Keeps only the updates at `position` inside their rollout batch.
void keep_position(run_input& r, long position);

}  // namespace logratio_cli
