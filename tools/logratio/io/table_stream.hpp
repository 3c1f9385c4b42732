#pragma once
// A long-format table (columns run, group, update, metrics; table.hpp)
// read straight into per-run columns: the CSV is parsed from a memory map
// (its pages handed back as the parse passes them; on 2+ threads in chunks
// split at record boundaries, joined in file order), each row's numbers
// appended to its run's columns, and no cell is kept as text. A table of
// text cells (parse_csv's) was ~7 bytes of memory per CSV byte (issue 41);
// this keeps ~16 bytes per row and metric column. The one path for long
// tables: `logratio runs`, `runs --points`, `reconcile`, CSV and JSON
// Lines (its rows fed to the same builder) alike.
//
// Errors of the CSV's structure (quotes, ragged rows, the header) are
// thrown while reading, as parse_csv words them; errors of the cells
// (an empty run, a bad update, a run in two groups, a metric cell that is
// no number) are recorded while reading and thrown by long_table_runs (or
// checked_long_table) in row order, because which column is the metric is
// chosen after the read.
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../model/run_input.hpp"
#include "table.hpp"

namespace logratio_cli {

/// A run's source lines, one per row, packed as arithmetic progressions
/// (first, stride, count): a run's rows are mostly one block of lines
/// (rows grouped by run) or every k-th line (rows grouped by update), so a
/// run costs a few words where a line per row was 8 bytes each.
class line_list {
public:
    void push(std::size_t line);
    /// Appends `later`'s lines (all after ours).
    void append(const line_list& later);
    std::size_t size() const { return size_; }
    /// The line of the k-th row pushed (k < size()).
    std::size_t at(std::size_t k) const;

private:
    struct progression {
        std::size_t first, stride, count;
    };
    std::vector<progression> parts_;
    std::size_t size_ = 0;
};

/// A long table's rows by run (in order of first appearance; rows in file
/// order within a run), the numbers of each column per run.
struct long_table {
    /// One run: its rows' updates (NaN where the cell is bad: that row's
    /// error is recorded), lines, and per column the numbers (NaN for an
    /// empty cell; no vector for the update column, the update itself, and
    /// none left for a column with a non-number cell) and the first
    /// non-empty text with its line (the attribute candidates).
    struct run {
        std::string name, group;
        std::vector<double> update;
        line_list lines;
        std::vector<std::vector<double>> values;
        std::vector<std::string> first_text;
        std::vector<std::size_t> first_line;  ///< 0: no non-empty cell yet
    };
    /// An error of one data row, at `line` (lines grow with the rows: the
    /// earlier line is the earlier row), with its message.
    struct row_error {
        std::size_t line = 0;
        std::string message;
    };
    /// The first row on which a column's text differs from its run's first
    /// non-empty text (the end of an attribute candidate).
    struct text_change {
        std::size_t line = 0, run = 0;
        std::string value;
    };

    std::string path;
    std::vector<std::string> columns;
    std::size_t rows = 0;
    std::vector<run> runs;
    std::optional<row_error> first_error;              ///< the first row's error that does not depend on the metric
    std::vector<std::optional<row_error>> non_number;  ///< per column: its first cell that is not a number
    std::vector<std::optional<text_change>> changes;   ///< per column

    std::size_t row_count() const { return rows; }
    std::optional<std::size_t> column(const std::string& name) const;
    std::string column_list() const;  ///< "a, b, c", for messages
};

/// The NaN an empty (or blank) cell is read as: nothing logged. A quiet
/// NaN with a payload of its own, so that the readers that tell nothing
/// logged from a logged "NaN" (reconcile, --points) can; isnan and
/// arithmetic treat it as any NaN.
double blank_cell_value();
bool is_blank_cell_value(double x);

/// Builds a long_table from rows of cells (a CSV record's fields, a JSON
/// Lines row of a text_table).
class long_table_builder {
public:
    long_table_builder(std::string path, std::vector<std::string> columns);
    /// One data row: columns().size() cells, read at `line`.
    void add_row(const std::string_view* cells, std::size_t line);
    long_table finish() { return std::move(t_); }
    /// Appends `later`, the rows that follow this builder's in the file (a
    /// chunk of the same CSV, built with the same columns): its runs join
    /// this one's by name, in file order, and its first errors count only
    /// where this one has none before them. Its row numbers follow ours.
    void append(long_table&& later);

private:
    std::size_t run_index(std::string_view name, std::string_view group);
    void add_cells(long_table::run& r, std::size_t run, const std::string_view* cells, std::size_t line);
    void first_error(std::string message, std::size_t line);
    long_table t_;
    std::optional<std::size_t> rc_, gc_, uc_;
    std::vector<char> text_done_;  ///< per column: no attribute to follow (a key column, or its text changed)
    std::deque<std::string> names_;  ///< the keys of where_ view these (a deque: they never move)
    std::unordered_map<std::string_view, std::size_t> where_;
    std::size_t last_ = 0;  ///< the run of the row before (rows come grouped by run: no hash lookup)
};

/// A long table in CSV (RFC 4180 as parse_csv reads it: a UTF-8 BOM
/// skipped, CRLF read as LF, blank lines skipped) read from `path`; on
/// `threads` threads (0: the machine's) when the file is large enough,
/// split at record boundaries (one thread when a split point cannot be
/// told to lie outside a quoted field); the result, its errors and the run
/// order are those of one thread.
/// `min_chunk`: the fewest bytes a thread is given (tests split small files).
long_table read_long_csv(const std::string& path, unsigned threads = 1, std::size_t min_chunk = std::size_t{4} << 20);

/// The first line of each chunk read_long_csv(path, parts, 1) reads (where
/// its splits fall: for tests).
std::vector<std::size_t> long_csv_chunk_lines(const std::string& path, unsigned parts);

/// The header of the CSV at `path` (its first record that is not a blank
/// line; the errors of that record as parse_csv throws them); nullopt when
/// it is no regular file with bytes, or holds blank lines only.
std::optional<std::vector<std::string>> csv_header(const std::string& path);

/// A table parsed as text (JSON Lines: parse_jsonl) as a long_table.
long_table long_table_of(const text_table& t);

/// The runs of `t` for each of `metrics` into got[m] (appended): for
/// metrics[0] and for each other metric that is a column (a metric that is
/// none is left empty). Rows keep their order within a run after sorting
/// by update; the first error is thrown: no run or update column, no
/// metrics[0] column, a row's own error or a non-number metric cell
/// (whichever row comes first), an attr: column with two values in a run,
/// a repeated (run, update) (the one whose later line comes first). The
/// points are moved out of `t`.
void long_table_runs(long_table& t, const std::vector<std::string>& metrics, std::vector<std::vector<run_input>>& got);

/// long_table_runs' checks that need no metric (run and update columns, the
/// rows' own errors, attr: conflicts, repeated (run, update)), in its
/// order; each run's rows sorted by update. The runs' attributes. For the
/// readers of every numeric column (reconcile, --points).
std::vector<std::map<std::string, std::string>> checked_long_table(long_table& t);

/// Whether column `c` holds metric numbers: not run, group, update or
/// attr:*, and every cell a number or empty.
bool is_metric_column(const long_table& t, std::size_t c);

/// The columns of a long table that are metrics with 2 or more numbers in
/// some run (not run, group, update, attr:*), appended to `out` if absent.
void long_table_metric_names(const long_table& t, std::vector<std::string>& out);

}  // namespace logratio_cli
