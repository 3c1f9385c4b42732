// `logratio runs` / `report`: the inputs -- long tables, tracker histories
// (io/trackers: detect.hpp picks the reader, to_runs.hpp the step, metric and
// group), directories of dumps, logratio exports -- read into runs, one
// series per run for the mismatch metric and for each --metrics metric.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include <logratio/core/error.hpp>

#include "../io/export_reader.hpp"
#include "../io/files_read.hpp"
#include "../io/sha256.hpp"
#include "../io/trackers/detect.hpp"
#include "../io/trackers/to_runs.hpp"
#include "../io/dumps.hpp"
#include "runs_steps.hpp"

namespace logratio_cli {
namespace {

/// One input read, before its runs are chosen.
struct read_input_t {
    std::string path;
    trackers::detected_input d;
    std::optional<export_data> exported;
    std::vector<dump_panel> panels;  ///< a directory of dumps: every dump's panel (read_stage)
    std::size_t files_mark = 0, files_end = 0;
};

bool wants_all_metrics(const runs_args& a) { return a.metrics.size() == 1 && a.metrics[0] == "all"; }

/// Runs from the dumps' panels: the metric is a SPEC key or a split column
/// (numeric_delta_abs_mean, lag_kl_k3, ...).
std::vector<run_input> runs_from_dumps(const std::vector<dump_panel>& ds, const std::string& metric) {
    std::vector<run_input> out;
    std::map<std::string, std::size_t> where;
    for (const auto& d : ds) {
        std::optional<double> v;
        bool known = false;
        for (const auto& e : dump_columns(d, true))
            if (e.first == metric) {
                known = true;
                v = e.second;
            }
        if (!known) throw logratio::error("no metric '" + metric + "' in a dump's panel (use a SPEC.md key)");
        auto w = where.emplace(d.run, out.size());
        if (w.second) {
            run_input r;
            r.series.run = d.run;
            r.series.group = d.group;
            r.attributes = d.attributes;
            out.push_back(r);
        }
        auto& r = out[w.first->second];
        if (r.series.group != d.group)
            throw logratio::error(d.path + ": run '" + d.run + "' is in group '" + d.group + "' here but in '" +
                                  r.series.group + "' in another dump");
        r.series.update.push_back(d.update);
        r.series.value.push_back(v ? *v : std::nan(""));
    }
    return out;
}

/// `got` reordered to follow `primary`'s runs; a run missing from `got`
/// gets an empty series (it did not log this metric).
std::vector<run_input> aligned(const std::vector<run_input>& primary, std::vector<run_input> got) {
    std::map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < got.size(); ++i) at.emplace(got[i].series.run, i);
    std::vector<run_input> out;
    for (const auto& p : primary) {
        auto it = at.find(p.series.run);
        if (it != at.end()) {
            out.push_back(std::move(got[it->second]));
            continue;
        }
        run_input e;
        e.series.run = p.series.run;
        e.series.group = p.series.group;
        out.push_back(std::move(e));
    }
    return out;
}

/// The metrics of a history with at least 2 logged values in some run,
/// without the step metrics and W&B's internal keys ("_runtime", ...).
void history_metric_names(const trackers::history_set& set, const runs_args& a, std::vector<std::string>& out) {
    std::set<std::string> steps;
    for (const auto& m : trackers::step_metrics()) steps.insert(m.name);
    steps.insert(a.history.step_column);
    for (const auto& r : set.runs)
        for (const auto& [k, pts] : r.metrics) {
            if (k.empty() || k[0] == '_' || steps.count(k)) continue;
            std::size_t n = 0;
            for (const auto& p : pts) n += !std::isnan(p.value);
            if (n >= 2 && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
        }
}

/// --metrics all: every metric some input has with 2 or more values.
std::vector<std::string> all_metric_names(const std::vector<read_input_t>& ins, const runs_args& a) {
    std::vector<std::string> out;
    const dump_panel* first_dump = nullptr;
    for (const auto& in : ins) {
        if (in.exported) {
            for (const auto& m : in.exported->metrics) out.push_back(m.metric);
        } else if (in.d.kind == trackers::detected_input::history) {
            history_metric_names(in.d.set, a, out);
        } else if (in.d.kind == trackers::detected_input::long_table) {
            long_table_metric_names(in.d.streamed, out);
        }
        if (!first_dump && !in.panels.empty()) first_dump = &in.panels.front();
    }
    if (first_dump)
        for (const auto& e : dump_columns(*first_dump, first_dump->split.has_value()))
            if (std::find(out.begin(), out.end(), e.first) == out.end()) out.push_back(e.first);
    return out;
}

/// The runs of one tracker history for the mismatch metric and each other
/// metric (trackers::to_runs, one call over its runs); says on stderr which
/// reader took the input.
void runs_from_history(const runs_args& a, const trackers::history_set& set, const std::vector<std::string>& metrics,
                       loaded_runs& L, std::vector<std::vector<run_input>>& per_metric, std::vector<std::string>& notes) {
    auto got = trackers::to_runs(set, metrics, a.history);
    for (auto& [run, why] : got.left_out) L.left_out.push_back({std::move(run), std::move(why)});
    notes.insert(notes.end(), got.notes.begin(), got.notes.end());
    for (std::size_t m = 0; m < metrics.size(); ++m)
        for (auto& r : got.per_metric[m]) per_metric[m].push_back(std::move(r));
    std::string how;
    const auto& steps_used = got.steps_used;
    for (const auto& [st, n] : steps_used)
        how += (how.empty() ? "" : ", ") + st + (steps_used.size() > 1 ? " (" + std::to_string(n) + " runs)" : "");
    if (steps_used.size() == 1) L.axis = steps_used.begin()->first;
    else if (steps_used.size() > 1) L.axis = "step";
    std::fprintf(stderr, "read %zu run(s) from %s %s%s\n", set.runs.size(), set.reader.c_str(), set.input.c_str(),
                 how.empty() ? "" : ("; step: " + how).c_str());
    if (got.per_metric[0].empty()) throw logratio::error(set.input + ": no run has the metric '" + metrics[0] + "'");
    notes.insert(notes.end(), set.notes.begin(), set.notes.end());
}

/// Runs without a group (tracker layouts that give none) join one group
/// "all", and the notes say that a comparison needs groups.
void settle_groups(const runs_args& a, std::vector<run_input>& runs, std::vector<std::string>& notes) {
    if (!a.group_pattern.empty()) {
        trackers::apply_group_pattern(runs, a.group_pattern);
        return;
    }
    bool ungrouped = false;
    for (auto& r : runs)
        if (r.series.group.empty()) {
            r.series.group = "all";
            ungrouped = true;
        }
    if (ungrouped)
        notes.push_back("runs without a group are in group 'all': a sync-vs-async comparison needs groups "
                        "(--group-pattern REGEX on run names, or <group>/<run> directories)");
}

/// The keys a history reader keeps: everything for --metrics all (and for
/// --list-attributes, which may be asked of any run), else the metrics named.
trackers::key_filter keys_for(const runs_args& a) {
    if (wants_all_metrics(a) || a.list_attributes) return trackers::key_filter();
    auto keys = trackers::keys_to_read(a.metric, a.history.step_column, a.history.grad_norm_column);
    std::vector<std::string> k = keys.wanted();
    k.insert(k.end(), a.metrics.begin(), a.metrics.end());
    return trackers::key_filter(std::move(k));
}

/// Whether two runs were read from byte-identical files (a copied
/// wandb/latest-run/, an export given twice): the size first, then SHA-256.
bool same_bytes(const std::string& a, const std::string& b) {
    std::error_code ea, eb;
    const auto na = std::filesystem::file_size(openable_path(a), ea), nb = std::filesystem::file_size(openable_path(b), eb);
    if (ea || eb || na != nb || a == b) return !ea && !eb && a == b;
    return digest_file(a).sha256 == digest_file(b).sha256;
}

/// Runs of different inputs sharing a name (the HF Trainer names W&B runs
/// after output_dir, often "."): one read from a file byte-identical to
/// another's is read once; the rest are told apart by their id (W&B run id,
/// MLflow run_uuid, else the path read; docs/trackers.md), each said.
void tell_runs_apart(std::vector<read_input_t>& ins, std::vector<std::string>& notes) {
    std::map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> by_name;  // name -> (input, run)
    for (std::size_t i = 0; i < ins.size(); ++i)
        if (!ins[i].exported && ins[i].d.kind == trackers::detected_input::history)
            for (std::size_t r = 0; r < ins[i].d.set.runs.size(); ++r) by_name[ins[i].d.set.runs[r].name].push_back({i, r});
    std::set<std::pair<std::size_t, std::size_t>> dropped;
    for (auto& [name, at] : by_name) {
        if (at.size() < 2) continue;
        std::vector<std::pair<std::size_t, std::size_t>> kept;
        for (const auto& x : at) {
            const auto& run = ins[x.first].d.set.runs[x.second];
            const auto twin = std::find_if(kept.begin(), kept.end(), [&](const auto& k) {
                return same_bytes(ins[k.first].d.set.runs[k.second].source, run.source);
            });
            if (twin == kept.end()) {
                kept.push_back(x);
                continue;
            }
            notes.push_back(run.source + ": byte-identical to " + ins[twin->first].d.set.runs[twin->second].source +
                            " (a copied log?): run '" + name + "' read once");
            dropped.insert(x);
        }
        if (kept.size() < 2) continue;
        std::string list;
        for (const auto& k : kept) {
            auto& run = ins[k.first].d.set.runs[k.second];
            run.name = name + " (" + (run.id.empty() ? run.source : run.id) + ")";
            list += (list.empty() ? "'" : ", '") + run.name + "'";
        }
        notes.push_back(std::to_string(kept.size()) + " runs of different inputs are named '" + name +
                        "': told apart by run id as " + list);
    }
    for (auto it = dropped.rbegin(); it != dropped.rend(); ++it) {
        auto& runs = ins[it->first].d.set.runs;
        runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(it->second));
    }
}

/// Every input read; long tables into per-run columns (a CSV one on
/// --threads threads).
std::vector<read_input_t> read_inputs(const runs_args& a) {
    if (a.metrics.size() > 1 && std::find(a.metrics.begin(), a.metrics.end(), "all") != a.metrics.end())
        throw logratio::error("--metrics: 'all' takes every metric and cannot be combined with names");
    if (a.position && a.history.steps_per_batch <= *a.position)
        throw logratio::error("--position " + std::to_string(*a.position) + " needs --steps-per-batch P greater than it "
                              "(position = step mod P; P is " + std::to_string(a.history.steps_per_batch) + ")");
    const auto keys = keys_for(a);
    std::vector<read_input_t> ins;
    for (const auto& in : a.inputs) {
        read_input_t r;
        r.path = in;
        r.files_mark = files_read_count();
        if (a.format == "auto" && is_export_directory(in)) r.exported = read_export(in);
        else r.d = trackers::read_input(in, a.format, keys, a.threads);
        r.files_end = files_read_count();
        ins.push_back(std::move(r));
    }
    return ins;
}

/// The mismatch metric of long tables and dumps without --metric:
/// delta_abs_mean (SPEC), else the first documented mismatch metric that
/// is a column of a long table.
std::string table_metric(const std::vector<read_input_t>& ins, std::vector<std::string>& notes) {
    const std::string spec = "delta_abs_mean";
    std::vector<const long_table*> tables;
    for (const auto& d : ins)
        if (!d.exported && d.d.kind == trackers::detected_input::long_table) tables.push_back(&d.d.streamed);
    if (tables.empty() || tables[0]->column(spec)) return spec;
    for (const auto& k : trackers::mismatch_metrics())
        for (const auto* t : tables)
            if (t->column(k.name)) {
                notes.push_back(std::string("metric: ") + k.name + " (" + k.from + "; --metric picks another)");
                return k.name;
            }
    return spec;
}

/// --list-attributes without --metric on histories that log no documented
/// mismatch metric: the metric most runs logged, so that the listing covers
/// them (the attributes do not depend on it).
std::string most_logged_metric(const std::vector<const trackers::history_set*>& sets) {
    std::map<std::string, std::size_t> runs;
    for (const auto* s : sets)
        for (const auto& r : s->runs)
            for (const auto& kv : r.metrics) ++runs[kv.first];
    std::string best;
    for (const auto& [k, n] : runs)
        if (best.empty() || n > runs[best]) best = k;
    return best;
}

bool logs_a_mismatch_metric(const std::vector<const trackers::history_set*>& sets) {
    for (const auto& m : trackers::mismatch_metrics())
        for (const auto* s : sets)
            for (const auto& r : s->runs)
                if (r.metrics.count(m.name)) return true;
    return false;
}

/// The mismatch metric first, then --metrics (deduplicated, in order).
std::vector<std::string> chosen_metrics(const runs_args& a, const std::vector<read_input_t>& ins,
                                        std::vector<std::string>& notes) {
    std::vector<const trackers::history_set*> sets;
    std::string exported_metric;
    for (const auto& d : ins)
        if (d.exported) exported_metric = d.exported->metric;
        else if (d.d.kind == trackers::detected_input::history) sets.push_back(&d.d.set);
    const bool any = a.list_attributes && !sets.empty() && !logs_a_mismatch_metric(sets);
    std::vector<std::string> m{!a.metric.empty()          ? a.metric
                               : !exported_metric.empty() ? exported_metric
                               : sets.empty()             ? table_metric(ins, notes)
                               : any                      ? most_logged_metric(sets)
                                                          : trackers::choose_metric(sets, "", notes)};
    const auto more = wants_all_metrics(a) ? all_metric_names(ins, a) : a.metrics;
    for (const auto& x : more)
        if (std::find(m.begin(), m.end(), x) == m.end()) m.push_back(x);
    return m;
}

/// Each input's runs for every metric (per_metric[m] over the inputs, in
/// the order given: the first two groups are compared).
void runs_of_inputs(const runs_args& a, std::vector<read_input_t>& ins, const std::vector<std::string>& metrics, loaded_runs& L,
                    std::vector<std::vector<run_input>>& per_metric, std::vector<std::string>& notes) {
    for (std::size_t i = 0; i < ins.size(); ++i) {
        auto& in = ins[i];
        std::vector<std::vector<run_input>> got(metrics.size());
        input_record rec;
        rec.input = in.path;
        if (in.exported) {
            rec.reader = "logratio export";
            export_runs(*in.exported, metrics, got, notes);
            rec.records = in.exported->rows;
            L.min_updates = std::max(L.min_updates, in.exported->min_updates);
            if (L.compare.empty()) L.compare = in.exported->compare;
            for (const auto& [run, why] : in.exported->left_out) L.left_out.push_back({run, why});
        } else if (in.d.kind == trackers::detected_input::dumps) {
            rec.reader = "dumps";
            rec.records = in.panels.size();
            for (std::size_t m = 0; m < metrics.size(); ++m) got[m] = runs_from_dumps(in.panels, metrics[m]);
            L.dumps.insert(L.dumps.end(), in.panels.begin(), in.panels.end());
        } else if (in.d.kind == trackers::detected_input::long_table) {
            if (!a.history.step_column.empty())
                throw logratio::error(in.path + ": --step-column applies to logging-history exports; this is a long-format table");
            rec.reader = "long table";
            rec.records = in.d.streamed.row_count();
            long_table_runs(in.d.streamed, metrics, got);
            in.d.streamed = long_table();  // the points are in the runs now
        } else {
            rec.reader = in.d.set.reader;
            for (const auto& h : in.d.set.runs)
                for (const auto& [k, pts] : h.metrics) rec.records += pts.size();
            runs_from_history(a, in.d.set, metrics, L, got, notes);
            rec.notes = in.d.set.notes;
            in.d.set = trackers::history_set();  // the points are in the runs now: free the rest
        }
        for (std::size_t m = 1; m < metrics.size(); ++m) got[m] = aligned(got[0], std::move(got[m]));
        rec.runs = got[0].size();
        rec.files = files_read_between(in.files_mark, in.files_end);
        // dumps are read after every input was detected (in parallel): their files are the dumps
        if (!in.exported && in.d.kind == trackers::detected_input::dumps)
            for (const auto& d : in.panels) rec.files.push_back(d.path);
        L.inputs.push_back(std::move(rec));
        for (std::size_t m = 0; m < metrics.size(); ++m)
            per_metric[m].insert(per_metric[m].end(), std::make_move_iterator(got[m].begin()),
                                 std::make_move_iterator(got[m].end()));
    }
}

bool has_a_value(const std::vector<run_input>& runs) {
    for (const auto& r : runs)
        for (double v : r.series.value)
            if (!std::isnan(v)) return true;
    return false;
}

/// --metrics all: metrics with no value on the runs' step axis (logged at
/// other events only) are dropped, said in a note.
void drop_valueless(std::vector<std::string>& metrics, std::vector<std::vector<run_input>>& per_metric,
                    std::vector<std::string>& notes) {
    for (std::size_t m = metrics.size(); m-- > 1;)
        if (!has_a_value(per_metric[m])) {
            notes.push_back("--metrics all: '" + metrics[m] + "' has no value at the runs' training steps: left out");
            metrics.erase(metrics.begin() + static_cast<std::ptrdiff_t>(m));
            per_metric.erase(per_metric.begin() + static_cast<std::ptrdiff_t>(m));
        }
}

/// An error when a --metrics name is in no run at all (a typo, not a gap).
void check_metrics_present(const std::vector<std::string>& metrics,
                           const std::vector<std::vector<run_input>>& per_metric) {
    for (std::size_t m = 1; m < metrics.size(); ++m) {
        const bool any = std::any_of(per_metric[m].begin(), per_metric[m].end(),
                                     [](const run_input& r) { return !r.series.update.empty(); });
        if (any) continue;
        std::string first;
        if (!per_metric[0].empty()) first = " (the runs, e.g. '" + per_metric[0][0].series.run + "', have none of it)";
        throw logratio::error("--metrics: no run has the metric '" + metrics[m] + "'" + first);
    }
}

/// --min-updates: runs with fewer updates carrying the mismatch metric are
/// left out of every metric's analysis, each said.
void keep_runs_with_enough_updates(loaded_runs& L, std::vector<std::vector<run_input>>& per_metric) {
    if (L.min_updates == 0) return;
    std::vector<bool> keep;
    for (const auto& r : per_metric[0]) {
        const auto n = static_cast<std::size_t>(std::count_if(r.series.value.begin(), r.series.value.end(),
                                                              [](double v) { return std::isfinite(v); }));
        keep.push_back(n >= L.min_updates);
        if (n < L.min_updates)
            L.left_out.push_back({r.series.run, std::to_string(n) + " update(s) with a value, fewer than " +
                                                    std::to_string(L.min_updates)});
    }
    for (auto& runs : per_metric) {
        std::vector<run_input> kept;
        for (std::size_t i = 0; i < runs.size(); ++i)
            if (keep[i]) kept.push_back(std::move(runs[i]));
        runs = std::move(kept);
    }
    if (per_metric[0].empty())
        throw logratio::error("--min-updates " + std::to_string(L.min_updates) + ": no run has that many updates "
                              "with a value (" + std::to_string(L.left_out.size()) + " left out)");
}

void check_unique_runs(const std::vector<run_input>& runs) {
    std::map<std::string, std::size_t> seen;
    for (const auto& r : runs)
        if (++seen[r.series.run] == 2)
            throw logratio::error("run '" + r.series.run + "' appears twice in the inputs (runs never merge; "
                                  "rename one, or give each export once)");
}

/// --position: each run keeps the updates at that position in their batch
/// (position = (step + --update-offset) mod --steps-per-batch); a run left
/// with none is an error naming the options (a 1-based step axis needs
/// --update-offset -1 to put the first update of a batch at position 0).
void keep_positions(const runs_args& a, std::vector<std::vector<run_input>>& per_metric) {
    for (std::size_t m = 0; m < per_metric.size(); ++m)
        for (auto& r : per_metric[m]) {
            if (r.series.update.empty()) continue;
            if (r.position.size() != r.series.update.size())
                throw logratio::error("--position needs logging-history exports (with --steps-per-batch)");
            const double first = r.series.update.front();
            keep_position(r, *a.position);
            if (m == 0 && r.series.update.empty())
                throw logratio::error(logratio::detail::concat(
                    "run '", r.series.run, "': --position ", *a.position, " with --steps-per-batch ",
                    a.history.steps_per_batch, " and --update-offset ", a.history.update_offset,
                    " keeps no update (position = (step + offset) mod P; its first update is ", first,
                    "); a 1-based step needs --update-offset -1"));
        }
}

/// A group of one run has no spread between runs (its "CI" is that run's
/// alone), and a comparison of one run against one run is not a comparison
/// of groups: each is said (a W&B run directory read as a group of its own
/// once printed a "group comparison" without a word).
void single_run_notes(const std::string& compare, const std::vector<run_input>& runs, std::vector<std::string>& notes) {
    std::vector<std::string> order;
    std::map<std::string, std::size_t> count;
    for (const auto& r : runs)
        if (count[r.series.group]++ == 0) order.push_back(r.series.group);
    std::vector<std::string> single;
    for (const auto& g : order)
        if (count[g] == 1) single.push_back(g);
    if (single.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < single.size() && i < 10; ++i) list += (i ? ", '" : "'") + single[i] + "'";
    if (single.size() > 10) list += ", ...";
    notes.push_back(std::to_string(single.size()) + " group(s) of a single run (" + list +
                    "): a group's interval needs 2 or more runs; with one it is that run alone");
    std::string a, b;
    if (const auto comma = compare.find(','); comma != std::string::npos) {
        a = compare.substr(0, comma);
        b = compare.substr(comma + 1);
    } else if (order.size() >= 2) {
        a = order[0];
        b = order[1];
    }
    if (!a.empty() && count[a] == 1 && count[b] == 1)
        notes.push_back("the comparison " + a + " vs " + b + " is of 1 run against 1 run: a difference between two "
                        "runs, not between groups (give more runs per group, or --group-pattern)");
}

/// A long table's numbers as points: every logged cell (not empty; a "NaN"
/// is logged) of its metric columns (is_metric_column), by run, metric
/// (sorted, as a history's) and update, after the checks every long table
/// gets (checked_long_table).
void table_points(long_table& t, std::vector<point_row>& out) {
    checked_long_table(t);
    std::map<std::string, std::size_t> metrics;
    for (std::size_t c = 0; c < t.columns.size(); ++c)
        if (is_metric_column(t, c)) metrics.emplace(t.columns[c], c);
    for (const auto& r : t.runs)
        for (const auto& [name, c] : metrics) {
            for (std::size_t i = 0; i < r.update.size(); ++i)
                if (!is_blank_cell_value(r.values[c][i])) out.push_back({r.name, name, r.update[i], r.values[c][i]});
        }
}

}  // namespace

points_read load_points(const runs_args& a) {
    runs_args every = a;
    every.metrics = {"all"};  // every key of every history
    auto ins = read_inputs(every);
    points_read out;
    tell_runs_apart(ins, out.notes);
    for (auto& in : ins) {
        if (in.exported)
            throw logratio::error(in.path + ": --points lists what tracker readers read; this is a logratio export "
                                  "(its updates.csv is the table)");
        if (in.d.kind == trackers::detected_input::dumps)
            throw logratio::error(in.path + ": --points lists what tracker readers read; for a directory of dumps "
                                  "`logratio panel --each DIR --csv FILE` writes their panels");
        if (in.d.kind == trackers::detected_input::long_table) {
            out.inputs.push_back({in.path, "long table"});
            table_points(in.d.streamed, out.rows);
            continue;
        }
        out.inputs.push_back({in.path, in.d.set.reader});
        for (const auto& r : in.d.set.runs) {
            if (r.metrics.empty()) out.notes.push_back(in.path + ": run '" + r.name + "' logged no history");
            const std::string name = trackers::run_name_and_group(in.d.set, r, a.history).first;  // --run, as runs
            for (const auto& [metric, pts] : r.metrics)
                for (const auto& p : pts) out.rows.push_back({name, metric, static_cast<double>(p.step), p.value});
        }
        out.notes.insert(out.notes.end(), in.d.set.notes.begin(), in.d.set.notes.end());
    }
    return out;
}

namespace {

/// Stage 1, the read: every input read once (tracker histories, long tables,
/// exports), same-named runs told apart, each directory of dumps read into
/// panels (io/dumps.hpp; in parallel, after every input was detected).
std::vector<read_input_t> read_stage(const runs_args& a, std::vector<std::string>& notes) {
    auto ins = read_inputs(a);
    tell_runs_apart(ins, notes);
    for (auto& in : ins)
        if (!in.exported && in.d.kind == trackers::detected_input::dumps)
            in.panels = panels_of_directory(in.path, a.pattern, logratio::panel_options(), a.threads);
    return ins;
}

/// Stage 2, the runs table: the metrics chosen, every input's runs for each
/// (histories through trackers::to_runs, one call per history), groups
/// settled once over all runs, --position and --min-updates applied.
loaded_runs runs_table(const runs_args& a, std::vector<read_input_t> ins, std::vector<std::string>& notes) {
    loaded_runs L;
    L.min_updates = a.min_updates;
    L.compare = a.compare;
    auto metrics = chosen_metrics(a, ins, notes);
    L.metric = metrics[0];
    if (L.metric.rfind("training/rollout_probs_diff", 0) == 0)
        notes.push_back("'" + L.metric + "' (verl) is a difference of PROBABILITIES |exp(l_T) - exp(l_E)|, not of "
                        "log-probs: it is not delta and shrinks where tokens are unlikely");
    std::vector<std::vector<run_input>> per_metric(metrics.size());
    runs_of_inputs(a, ins, metrics, L, per_metric, notes);
    check_unique_runs(per_metric[0]);
    if (wants_all_metrics(a)) drop_valueless(metrics, per_metric, notes);
    check_metrics_present(metrics, per_metric);
    settle_groups(a, per_metric[0], notes);
    for (std::size_t m = 1; m < metrics.size(); ++m)
        for (std::size_t i = 0; i < per_metric[m].size(); ++i) per_metric[m][i].series.group = per_metric[0][i].series.group;
    if (a.position) keep_positions(a, per_metric);
    if (per_metric[0].empty()) throw logratio::error("no runs in the inputs");
    keep_runs_with_enough_updates(L, per_metric);
    single_run_notes(L.compare, per_metric[0], notes);
    L.runs = std::move(per_metric[0]);
    for (std::size_t m = 1; m < metrics.size(); ++m) L.others.push_back({metrics[m], std::move(per_metric[m])});
    return L;
}

}  // namespace

loaded_runs load_runs(const runs_args& a) {
    std::vector<std::string> notes;
    auto L = runs_table(a, read_stage(a, notes), notes);
    for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    L.runs.front().notes.insert(L.runs.front().notes.begin(), notes.begin(), notes.end());
    return L;
}

}  // namespace logratio_cli
