// `logratio reconcile`: each side's inputs -- tracker histories (every
// metric, by training step: trackers::logged_by_training_step), long tables
// (every numeric column), dump directories (every panel column) -- read into
// runs of fields (reconcile_sides.hpp).
#include <cmath>
#include <set>
#include <utility>

#include <logratio/core/error.hpp>

#include "../io/dumps.hpp"
#include "../io/export_reader.hpp"
#include "../io/table_stream.hpp"
#include "../io/trackers/detect.hpp"
#include "../io/trackers/to_runs.hpp"
#include "reconcile_sides.hpp"

namespace logratio_cli::reconcile_detail {
namespace {

using logratio::detail::concat;

/// Not fields: the framework step metrics (they are the steps) and the
/// trackers' own bookkeeping keys.
bool is_step_or_internal(const std::string& k) {
    if (k == "_step" || k == "_runtime" || k == "_timestamp" || k.rfind("_wandb", 0) == 0) return true;
    for (const auto& s : trackers::step_metrics())
        if (k == s.name) return true;
    return false;
}

/// The run `name` of input `input`; a run of that name from another input is
/// an error (two runs are never merged).
side_run& run_of(side& s, const std::string& name, const std::string& input) {
    auto [it, fresh] = s.runs.emplace(name, side_run{input, {}});
    if (!fresh && it->second.input != input)
        throw logratio::error(s.label + ": run '" + name + "' is in " + it->second.input + " and in " + input +
                              " (runs never merge: give each once, or rename one)");
    return it->second;
}

/// Every metric of one history run by training step. A metric the W&B
/// history logged at no training step (no step metric with it) is said in
/// a note; a run none of whose metrics has one is the reader's error.
void add_history_run(side& s, const trackers::run_history& h, const std::string& input,
                     std::map<std::string, std::size_t>& steps_used) {
    if (const auto it = s.runs.find(h.name); it != s.runs.end())  // a history holds each of its runs once
        throw logratio::error(s.label + ": run '" + h.name + "' is in " + it->second.input +
                              (it->second.input == input ? " twice" : " and in " + input) +
                              " (runs never merge: give each once, or rename one)");
    side_run& r = run_of(s, h.name, input);
    std::string first_error;
    std::vector<std::string> unplaced;
    for (const auto& [key, pts] : h.metrics) {
        if (is_step_or_internal(key)) continue;
        std::string how;
        try {
            r.metrics[key] = trackers::logged_by_training_step(h, key, history_options(), how, &s.notes);
        } catch (const logratio::error& e) {  // choose_step: no training step for this metric
            if (first_error.empty()) first_error = e.what();
            unplaced.push_back(key);
            r.metrics.erase(key);
            continue;
        }
        if (!how.empty()) ++steps_used[how];
    }
    if (r.metrics.empty() && !first_error.empty()) throw logratio::error(s.label + ": " + first_error);
    if (!unplaced.empty()) {
        std::string list;
        for (std::size_t i = 0; i < unplaced.size() && i < 10; ++i) list += (i ? ", " : "") + unplaced[i];
        s.notes.push_back(concat(s.label, ": ", input, ": run '", h.name, "': ", unplaced.size(),
                                 " metric(s) logged at no training step, not compared: ", list,
                                 unplaced.size() > 10 ? ", ..." : ""));
    }
}

void add_history(side& s, const trackers::history_set& set) {
    std::map<std::string, std::size_t> steps_used;
    for (const auto& h : set.runs) add_history_run(s, h, set.input, steps_used);
    std::string how;
    for (const auto& [st, n] : steps_used) how += (how.empty() ? "" : ", ") + st;
    s.notes.push_back(concat(s.label, ": read ", set.runs.size(), " run(s) from ", set.reader, " ", set.input,
                             how.empty() ? "" : "; step: " + how));
    for (const auto& n : set.notes) s.notes.push_back(s.label + ": " + n);
}

/// A long table: its metric columns (is_metric_column; a text column is
/// no field, said in a note), after the checks every long table gets
/// (checked_long_table: (run, update) unique, ...); an empty cell is
/// nothing logged, a "NaN" cell a logged NaN.
void add_long_table(side& s, long_table& t) {
    checked_long_table(t);
    std::vector<std::size_t> cols;
    std::string text;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const auto& n = t.columns[c];
        if (is_metric_column(t, c)) cols.push_back(c);
        else if (t.non_number[c] && n != "run" && n != "group" && n != "update" && n.rfind("attr:", 0) != 0)
            text += (text.empty() ? "" : ", ") + n;
    }
    if (!text.empty()) s.notes.push_back(s.label + ": " + t.path + ": non-numeric column(s) not compared: " + text);
    for (const auto& lr : t.runs) {
        side_run& r = run_of(s, lr.name, t.path);
        for (const auto c : cols)
            for (std::size_t i = 0; i < lr.update.size(); ++i)
                if (!is_blank_cell_value(lr.values[c][i])) r.metrics[t.columns[c]][lr.update[i]] = lr.values[c][i];
    }
    s.notes.push_back(concat(s.label, ": read ", t.row_count(), " row(s) of the long table ", t.path));
}

/// A directory of dumps: each dump's panel columns at its (run, update).
void add_dumps(side& s, const std::string& dir, const reconcile_options& o) {
    const logratio::panel_options opt;
    const auto ds = panels_of_directory(dir, o.pattern, opt, o.threads);
    std::map<std::pair<std::string, double>, std::string> seen;
    for (const auto& d : ds) {
        const auto dup = seen.emplace(std::make_pair(d.run, d.update), d.path);
        if (!dup.second)
            throw logratio::error(concat(s.label, ": run '", d.run, "' update ", d.update, " is both ",
                                         dup.first->second, " and ", d.path));
        side_run& r = run_of(s, d.run, dir);
        for (const auto& [k, v] : dump_columns(d, true))
            if (v) r.metrics[k][d.update] = *v;
    }
    s.notes.push_back(concat(s.label, ": read ", ds.size(), " dump(s) under ", dir));
}

/// A logratio export (io/export_reader.hpp): every metric's series at the
/// updates it was analysed at.
void add_export(side& s, const std::string& dir) {
    const auto e = read_export(dir);
    for (const auto& m : e.metrics)
        for (const auto& r : m.runs) {
            if (r.series.update.empty()) continue;
            side_run& x = run_of(s, r.series.run, dir);
            for (std::size_t i = 0; i < r.series.update.size(); ++i) x.metrics[m.metric][r.series.update[i]] = r.series.value[i];
        }
    s.notes.push_back(concat(s.label, ": read the logratio export ", dir, " (", e.rows, " rows of updates.csv; its steps "
                             "are the updates it was analysed at)"));
}

}  // namespace

side read_side(const std::vector<std::string>& inputs, const std::string& format, const reconcile_options& o,
               const std::string& label) {
    side s;
    s.label = label;
    std::set<std::string> given;
    for (const auto& in : inputs) {
        if (!given.insert(in).second)
            throw logratio::error(label + ": " + in + " given twice (runs never merge)");
        if (format == "auto" && is_export_directory(in)) {
            add_export(s, in);
            continue;
        }
        auto d = trackers::read_input(in, format);  // key_filter(): every metric
        if (d.kind == trackers::detected_input::history) add_history(s, d.set);
        else if (d.kind == trackers::detected_input::long_table) add_long_table(s, d.streamed);
        else add_dumps(s, in, o);
    }
    return s;
}

}  // namespace logratio_cli::reconcile_detail
