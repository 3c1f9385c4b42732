#include "run_builder.hpp"

#include <algorithm>
#include <cmath>

#include <logratio/core/error.hpp>

namespace logratio_cli::trackers {

bool run_builder::wants(const std::string& metric) {
    if (!keys_ || keys_->keeps(metric)) return true;
    run_.unread.insert(metric);
    return false;
}

void run_builder::add(const std::string& metric, std::int64_t step, double value, double wall_time,
                      const std::string& file, std::size_t line) {
    if (wants(metric)) add(of(metric), step, value, wall_time, file, line);
}

run_history run_builder::finish() {
    for (auto& [metric, s] : points_) {
        auto& v = run_.metrics[metric];
        const auto& pts = s.points;
        const auto increasing = [](const point& a, const point& b) { return a.step >= b.step; };
        if (std::adjacent_find(pts.begin(), pts.end(), increasing) == pts.end()) {
            v = std::move(s.points);  // sorted, unique steps: the common case, nothing to decide
            if (v.capacity() > 2 * v.size() + 64) v.shrink_to_fit();  // a reservation that was not filled
        } else {
            // by step, in reading order among equal steps (a stable sort of the positions)
            std::vector<std::size_t> order(pts.size());
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return pts[a].step < pts[b].step; });
            v.clear();
            v.reserve(pts.size());
            for (std::size_t i = 0; i < order.size(); ++i) {
                const point& p = pts[order[i]];
                if (i > 0 && p.step == pts[order[i - 1]].step) {
                    if (latest_by_time_) keep_latest(v.back(), p);
                    else check_same(metric, pts[order[i - 1]], s.where[order[i - 1]], p, s.where[order[i]]);
                    continue;
                }
                v.push_back(p);
            }
        }
        s = series();  // its memory back before the next metric
    }
    points_.clear();
    return std::move(run_);
}

void run_builder::keep_latest(point& kept, const point& again) {
    const bool same = kept.value == again.value || (std::isnan(kept.value) && std::isnan(again.value));
    if (same) return;
    ++resolved_;
    // (timestamp, value) as MLflow orders them; NaN (is_nan rows) sorts below every number
    const auto later = [](const point& a, const point& b) {
        if (a.wall_time != b.wall_time) return a.wall_time > b.wall_time;
        return !std::isnan(a.value) && (std::isnan(b.value) || a.value > b.value);
    };
    if (later(again, kept)) kept = again;
}

void run_builder::check_same(const std::string& metric, const point& first, std::uint64_t first_where,
                             const point& again, std::uint64_t again_where) const {
    const double a = first.value, b = again.value;
    if (a == b || (std::isnan(a) && std::isnan(b))) return;
    using logratio::detail::concat;
    const std::string& f = file_of(again_where);
    throw logratio::format_error(concat(f, where(line_of(again_where)), ": run '", run_.name, "', metric '", metric,
                                        "', step ", again.step, ": ", b, " here but ", a, where_before(first_where, f),
                                        " (conflicting duplicate step)"));
}

std::string run_builder::where_before(std::uint64_t w, const std::string& file) const {
    const std::string& f = file_of(w);
    const std::size_t line = line_of(w);
    if (f != file) return " in " + f + where(line);
    return line ? " on line " + std::to_string(line) : std::string(" before");
}

std::uint32_t run_builder::file_index(const std::string& file) {
    if (files_.empty()) files_.push_back(run_.source);
    if (&file == last_file_ || files_[last_] == file) {  // the same string object: no compare per point
        last_file_ = &file;
        return last_;
    }
    last_file_ = &file;
    for (std::uint32_t i = 0; i < files_.size(); ++i)
        if (files_[i] == file) return last_ = i;
    if (files_.size() >> file_bits)  // the packing of series::where; no tracker run has a million files
        throw logratio::error(logratio::detail::concat("run '", run_.name, "': more than ",
                                                       (std::size_t{1} << file_bits) - 1, " files"));
    files_.push_back(file);
    return last_ = static_cast<std::uint32_t>(files_.size() - 1);
}

std::string run_builder::where(std::size_t line) { return line ? ": line " + std::to_string(line) : std::string(); }

/// Every run of a reader, sorted by name (std::map keeps them so).
std::vector<run_history> finish_runs(std::map<std::string, run_builder>& runs, std::vector<std::string>* notes) {
    std::vector<run_history> out;
    out.reserve(runs.size());
    for (auto& [name, b] : runs) {
        out.push_back(b.finish());
        if (notes && b.duplicates_resolved())
            notes->push_back(logratio::detail::concat(
                "run '", name, "': ", b.duplicates_resolved(),
                " (metric, step) pair(s) logged twice with different values: the latest by timestamp kept (on a tie "
                "the larger value), as MLflow shows it"));
    }
    return out;
}

/// The last path component without its extension ("a/b/run 1.csv" -> "run 1").
std::string file_stem(const std::string& p) {
    const auto slash = p.find_last_of('/');
    std::string s = slash == std::string::npos ? p : p.substr(slash + 1);
    const auto dot = s.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

/// The name of the directory holding `p` ("" when `p` has no directory part).
std::string parent_dir_name(const std::string& p) {
    std::string d = p;
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    const auto slash = d.find_last_of('/');
    if (slash == std::string::npos) return "";
    d = d.substr(0, slash);
    const auto s2 = d.find_last_of('/');
    const std::string name = s2 == std::string::npos ? d : d.substr(s2 + 1);
    return name == "." || name == ".." ? "" : name;
}

/// A step read as a double (CSV cell, JSON number) as an integer step: an
/// error naming the place if it is not an integer within +-2^53.
std::int64_t integer_step(double s, const std::string& place) {
    if (!is_integer_step(s))
        throw logratio::format_error(logratio::detail::concat(place, ": step ", s, " is not an integer (or beyond 2^53)"));
    return static_cast<std::int64_t>(s);
}

/// The same for a table cell: the message (built only on error) names the
/// file, line and column.
std::int64_t integer_step(double s, const std::string& file, std::size_t line, const std::string& column) {
    if (!is_integer_step(s))
        integer_step(s, logratio::detail::concat(file, ": line ", line, ", column '", column, "'"));
    return static_cast<std::int64_t>(s);
}

std::map<std::string, std::string> unique_run_names(const std::map<std::string, std::string>& names,
                                                     const std::string& where, std::vector<std::string>& notes) {
    std::map<std::string, std::size_t> uses;
    for (const auto& [id, name] : names) ++uses[name];
    std::map<std::string, std::string> out;
    std::map<std::string, std::size_t> taken;  // the names given so far
    std::size_t renamed = 0;
    for (const auto& [id, name] : names) {
        std::string n = name;
        if (uses[name] > 1) {
            n = name + " (" + id.substr(0, 8) + ")";
            if (taken.count(n) || uses.count(n)) n = name + " (" + id + ")";
            ++renamed;
        }
        ++taken[n];
        out[id] = n;
    }
    if (renamed)
        notes.push_back(logratio::detail::concat(where, ": ", renamed, " runs share a name with another run (a relaunch?): ",
                                                 "each is named with its run id added, never merged"));
    return out;
}

}  // namespace logratio_cli::trackers
