#pragma once
// Collects one run's points as a reader meets them and hands back a
// run_history with every metric sorted by step. A (metric, step) met twice
// with the same value (or NaN twice) is kept once; with different values it
// is an error naming the file, both lines and the step: readers never pick
// one of two conflicting numbers.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <logratio/error.hpp>

#include "history.hpp"

namespace logratio_cli::trackers {

class run_builder {
public:
    run_builder() = default;
    run_builder(std::string name, std::string source, std::string step_name) {
        run_.name = std::move(name);
        run_.source = std::move(source);
        run_.step_name = std::move(step_name);
    }
    run_history& run() { return run_; }

    /// `line` is where the point was read (a line number, or 0 when the
    /// format has none: the message then names the file only).
    void add(const std::string& metric, std::int64_t step, double value, double wall_time, const std::string& file,
             std::size_t line) {
        auto& m = points_[metric];
        auto ins = m.emplace(step, entry{point{step, value, wall_time}, line});
        if (ins.second) return;
        const double old = ins.first->second.p.value;
        if (old == value || (std::isnan(old) && std::isnan(value))) return;
        using logratio::detail::concat;
        throw logratio::format_error(concat(file, where(line), ": run '", run_.name, "', metric '", metric, "', step ",
                                            step, ": ", value, " here but ", old, where_before(ins.first->second.line),
                                            " (conflicting duplicate step)"));
    }
    bool empty() const { return points_.empty(); }

    /// The run with its metrics sorted by step (std::map keeps them so).
    run_history finish() {
        for (auto& [metric, pts] : points_) {
            auto& v = run_.metrics[metric];
            v.clear();
            v.reserve(pts.size());
            for (auto& [s, e] : pts) v.push_back(e.p);
        }
        points_.clear();
        return std::move(run_);
    }

private:
    struct entry {
        point p;
        std::size_t line;
    };
    static std::string where(std::size_t line) { return line ? ": line " + std::to_string(line) : std::string(); }
    static std::string where_before(std::size_t line) {
        return line ? " on line " + std::to_string(line) : std::string(" before");
    }
    run_history run_;
    std::map<std::string, std::map<std::int64_t, entry>> points_;
};

/// Every run of a reader, sorted by name (std::map keeps them so).
inline std::vector<run_history> finish_runs(std::map<std::string, run_builder>& runs) {
    std::vector<run_history> out;
    out.reserve(runs.size());
    for (auto& [name, b] : runs) out.push_back(b.finish());
    return out;
}

/// The last path component without its extension ("a/b/run 1.csv" -> "run 1").
inline std::string file_stem(const std::string& p) {
    const auto slash = p.find_last_of('/');
    std::string s = slash == std::string::npos ? p : p.substr(slash + 1);
    const auto dot = s.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

/// The name of the directory holding `p` ("" when `p` has no directory part).
inline std::string parent_dir_name(const std::string& p) {
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
inline std::int64_t integer_step(double s, const std::string& place) {
    if (!std::isfinite(s) || s != std::floor(s) || std::fabs(s) > 9007199254740992.0)
        throw logratio::format_error(logratio::detail::concat(place, ": step ", s, " is not an integer (or beyond 2^53)"));
    return static_cast<std::int64_t>(s);
}

}  // namespace logratio_cli::trackers
