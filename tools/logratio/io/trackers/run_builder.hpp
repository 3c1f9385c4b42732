#pragma once
// Collects one run's points as a reader meets them (appended, any order)
// and hands back a run_history with every metric sorted by step. A
// (metric, step) met twice with the same value (or NaN twice) is kept once;
// with different values it is an error naming the file, both lines and the
// step: readers never pick one of two conflicting numbers.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <logratio/core/error.hpp>

#include "history.hpp"

namespace logratio_cli::trackers {

class run_builder {
public:
    /// The points of one metric as read (any order; duplicates resolved in
    /// finish()), columnar: the points as finish() hands them over (moved,
    /// not copied, when they came sorted with unique steps: the copy and
    /// its first-touch page faults were a sixth of a JSON Lines read) and
    /// where each was read, packed (file_bits), for the duplicate messages.
    struct series {
        std::vector<point> points;
        std::vector<std::uint64_t> where;
    };
    /// A point's file index (into files_, 0: the run's source) in the low
    /// file_bits bits of its `where`, its line above them.
    static constexpr unsigned file_bits = 20;

    run_builder() = default;
    /// `keys` (may be null: every key) must outlive the builder.
    run_builder(std::string name, std::string source, std::string step_name, const key_filter* keys = nullptr)
        : keys_(keys) {
        run_.name = std::move(name);
        run_.source = std::move(source);
        run_.id = run_.source;
        run_.step_name = std::move(step_name);
    }
    run_history& run() { return run_; }

    /// MLflow's rule for a (metric, step) logged twice with different values
    /// (Stable-Baselines3 dumps its logger twice at an evaluation step): the
    /// point MLflow shows as latest wins -- the larger (timestamp, value), as
    /// SqlAlchemyStore._update_latest_metrics_if_necessary orders them
    /// (mlflow/mlflow @b1669059 mlflow/store/tracking/sqlalchemy_store.py)
    /// -- and duplicates_resolved() counts the steps so decided.
    void keep_latest_by_time() { latest_by_time_ = true; }
    std::size_t duplicates_resolved() const { return resolved_; }

    /// The points of `metric`; readers may keep the reference (one per
    /// column) and call add(series&, ...) to skip the name lookup.
    series& of(const std::string& metric) { return points_[metric]; }

    /// Whether the reader should read `metric`'s values; a metric it should
    /// not is remembered by name (run_history::unread).
    bool wants(const std::string& metric);
    /// Whether every metric is read (no key filter, or one keeping all).
    bool keeps_all() const { return !keys_ || keys_->keeps_all(); }

    /// `line` is where the point was read (a line number, or 0 when the
    /// format has none: the message then names `file` only).
    void add(series& s, std::int64_t step, double value, double wall_time, const std::string& file, std::size_t line) {
        add_at(s, step, value, wall_time, where_of(file, line));
    }
    /// A point's `where` (file and line packed), for add_at: a reader adding
    /// a row's many points packs it once (the per-point file_index call was
    /// 2% of a W&B CSV read).
    std::uint64_t where_of(const std::string& file, std::size_t line) {
        return static_cast<std::uint64_t>(line) << file_bits | file_index(file);
    }
    void add_at(series& s, std::int64_t step, double value, double wall_time, std::uint64_t where) {
        s.points.push_back(point{step, value, wall_time});
        s.where.push_back(where);
    }
    /// Room for `n` points in `s` (a reader that knows how many records are
    /// left, e.g. a one-run file's line count): no reallocation while adding.
    static void reserve(series& s, std::size_t n) {
        s.points.reserve(n);
        s.where.reserve(n);
    }
    /// The most points a reader reserves for one run, over all its series
    /// (1 GiB of address space): a sparse history (hundreds of keys, each
    /// in a few rows) beyond it grows its series as they fill instead.
    static constexpr std::size_t reserve_limit = std::size_t{1} << 25;
    /// Adds a point of `metric` if the filter wants it.
    void add(const std::string& metric, std::int64_t step, double value, double wall_time, const std::string& file,
             std::size_t line);

    /// The run with every metric sorted by step; a step met twice keeps one
    /// point if the values agree (NaN and NaN agree), else it is an error.
    run_history finish();

private:
    void keep_latest(point& kept, const point& again);
    void check_same(const std::string& metric, const point& first, std::uint64_t first_where, const point& again,
                    std::uint64_t again_where) const;
    static std::string where(std::size_t line);
    std::string where_before(std::uint64_t w, const std::string& file) const;
    const std::string& file_of(std::uint64_t w) const { return files_[w & ((std::uint64_t{1} << file_bits) - 1)]; }
    static std::size_t line_of(std::uint64_t w) { return static_cast<std::size_t>(w >> file_bits); }
    std::uint32_t file_index(const std::string& file);
    const key_filter* keys_ = nullptr;
    bool latest_by_time_ = false;
    std::size_t resolved_ = 0;
    run_history run_;
    std::map<std::string, series> points_;
    std::vector<std::string> files_;  ///< the files points came from (a run may span several)
    std::uint32_t last_ = 0;
    const std::string* last_file_ = nullptr;
};

/// Every run of a reader, sorted by name (std::map keeps them so); with
/// `notes`, a run whose duplicate steps were resolved (keep_latest_by_time)
/// is said there, with the count.
std::vector<run_history> finish_runs(std::map<std::string, run_builder>& runs,
                                     std::vector<std::string>* notes = nullptr);

/// Run names made unique without merging runs (`names`: run id -> name): a
/// name that several runs share (a job relaunched under the same name)
/// becomes "<name> (<first 8 characters of the id>)" for each of them (the
/// whole id where 8 are not enough), with a note naming `where`.
std::map<std::string, std::string> unique_run_names(const std::map<std::string, std::string>& names,
                                                     const std::string& where, std::vector<std::string>& notes);

/// The last path component without its extension ("a/b/run 1.csv" -> "run 1").
std::string file_stem(const std::string& p);

/// The name of the directory holding `p` ("" when `p` has no directory part).
std::string parent_dir_name(const std::string& p);

/// A step read as a double (CSV cell, JSON number) as an integer step: an
/// error naming the place if it is not an integer within +-2^53.
std::int64_t integer_step(double s, const std::string& place);

/// The same for a table cell: the message (built only on error) names the
/// file, line and column.
std::int64_t integer_step(double s, const std::string& file, std::size_t line, const std::string& column);

}  // namespace logratio_cli::trackers
