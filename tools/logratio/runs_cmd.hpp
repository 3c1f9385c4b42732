#pragma once
// `logratio runs`, `logratio report` and `logratio panel --each`: from
// panel tables, logging-history exports or directories of dumps to run
// statistics, a verdict and an HTML report.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <logratio/logratio.hpp>

#include "atomic_file.hpp"
#include "doctor_report.hpp"
#include "dumps.hpp"
#include "html_report.hpp"
#include "runs_output.hpp"
#include "table.hpp"
#include "trackers/detect.hpp"
#include "trackers/to_runs.hpp"

namespace logratio_cli {

struct runs_args {
    std::vector<std::string> inputs;
    std::string metric, compare, html, format = "auto", pattern, dump, group_pattern;
    history_options history;
    std::optional<long> position;
    bool json = false;
    unsigned threads = 1;
};

inline void add_runs_options(CLI::App* c, runs_args& a, bool report) {
    c->add_option("inputs", a.inputs,
                  "panel tables (CSV or .jsonl, long format), tracker histories (W&B history tables, chart exports and "
                  "JSON histories, TensorBoard logdirs/event files, MLflow mlruns/ or SQLite stores, TRL checkpoint "
                  "directories, verl file-logger lines), or directories of dumps")
        ->required();
    c->add_option("--metric", a.metric,
                  "metric (default: delta_abs_mean for long tables and dumps; for tracker histories the first "
                  "documented mismatch metric present, see README)");
    c->add_option("--compare", a.compare, "two groups A,B: compare A - B (default: the first two groups)");
    if (!report) c->add_flag("--json", a.json, "one JSON object (runs, groups, comparison)");
    c->add_option("--html", a.html, report ? "HTML report path (default logratio-report.html)" : "also write the HTML report here");
    c->add_option("--format", a.format, "the reader: auto (default: sniffed, and said on stderr), long, history, "
                                        "wandb-history, wandb-chart, json, mlflow, mlflow-sqlite, trl, tensorboard, "
                                        "wandb-offline, dumps")
        ->check(CLI::IsMember(trackers::format_names()));
    c->add_option("--step-column", a.history.step_column,
                  "tracker histories: the training-step column (default: the tracker's training step, or the "
                  "framework's step metric: train/step, rollout/step, training/global_step, train/global_step)");
    c->add_option("--group-pattern", a.group_pattern,
                  "the group of each run: the first capture group of this regular expression searched in the run "
                  "name, e.g. '^(sync|async)' (default: the directory layout or tracker groups)");
    c->add_option("--update-offset", a.history.update_offset, "history exports: update = step + OFFSET (default 0)");
    c->add_option("--steps-per-batch", a.history.steps_per_batch,
                  "history exports: optimizer updates per rollout batch; batch = floor(step / P), position = step mod P");
    c->add_option("--position", a.position, "keep only updates at this position inside their rollout batch (0 = first)");
    c->add_option("--grad-norm-column", a.history.grad_norm_column, "list updates where this column is exactly 0");
    c->add_option("--run", a.history.run, "history exports: run name (default: file name)");
    c->add_option("--group", a.history.group, "history exports: group (default: parent directory name)");
    c->add_option("--pattern", a.pattern,
                  "dump directories: path pattern such as '{group}/{run}/update_{update}.safetensors' "
                  "(default: __metadata__ run/group/update)");
    c->add_option("--threads", a.threads, "dumps computed in parallel")->check(CLI::Range(1u, 1024u));
    if (report) c->add_option("--dump", a.dump, "dump whose delta histogram the report shows (default: the worst update)");
}

inline bool is_directory(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Runs from the dumps' panels: the metric is a SPEC key or a split column
/// (numeric_delta_abs_mean, lag_kl_k3, ...).
inline std::vector<run_input> runs_from_dumps(const std::vector<dump_panel>& ds, const std::string& metric) {
    std::vector<run_input> out;
    for (const auto& d : ds) {
        std::optional<double> v;
        bool known = false;
        for (const auto& e : dump_columns(d, true))
            if (e.first == metric) {
                known = true;
                v = e.second;
            }
        if (!known) throw logratio::error("no metric '" + metric + "' in a dump's panel (use a SPEC.md key)");
        auto it = std::find_if(out.begin(), out.end(), [&](const run_input& r) { return r.series.run == d.run; });
        if (it == out.end()) {
            run_input r;
            r.series.run = d.run;
            r.series.group = d.group;
            out.push_back(r);
            it = out.end() - 1;
        }
        if (it->series.group != d.group)
            throw logratio::error(d.path + ": run '" + d.run + "' is in group '" + d.group + "' here but in '" +
                                  it->series.group + "' in another dump");
        it->series.update.push_back(d.update);
        it->series.value.push_back(v ? *v : std::nan(""));
    }
    return out;
}

struct loaded_runs {
    std::vector<run_input> runs;
    std::vector<dump_panel> dumps;  ///< when an input was a directory
    std::string metric;             ///< --metric, or the one chosen
};

/// Tracker histories -> runs (trackers/to_runs.hpp does the step, metric and
/// group choices); says on stderr which reader took each input.
inline void runs_from_histories(const runs_args& a, const trackers::history_set& set, loaded_runs& L,
                                std::vector<std::string>& notes) {
    {
        std::map<std::string, std::size_t> steps_used;
        std::size_t taken = 0;
        for (const auto& h : set.runs) {
            if (!h.metrics.count(L.metric)) {
                notes.push_back(set.input + ": run '" + h.name + "' has no '" + L.metric + "': left out");
                continue;
            }
            std::string step;
            run_input r = trackers::run_from_history(h, L.metric, a.history, step);
            ++steps_used[step];
            if (set.runs.size() == 1 && !a.history.run.empty()) r.series.run = a.history.run;
            if (set.runs.size() == 1 && !a.history.group.empty()) r.series.group = a.history.group;
            L.runs.push_back(std::move(r));
            ++taken;
        }
        std::string how;
        for (const auto& [st, n] : steps_used) how += (how.empty() ? "" : ", ") + st + (steps_used.size() > 1 ? " (" + std::to_string(n) + " runs)" : "");
        std::fprintf(stderr, "read %zu run(s) from %s %s%s\n", set.runs.size(), set.reader.c_str(), set.input.c_str(),
                     how.empty() ? "" : ("; step: " + how).c_str());
        if (taken == 0) throw logratio::error(set.input + ": no run has the metric '" + L.metric + "'");
        notes.insert(notes.end(), set.notes.begin(), set.notes.end());
    }
}

/// Runs without a group (tracker layouts that give none) join one group
/// "all", and the notes say that a comparison needs groups.
inline void settle_groups(const runs_args& a, loaded_runs& L, std::vector<std::string>& notes) {
    if (!a.group_pattern.empty()) {
        trackers::apply_group_pattern(L.runs, a.group_pattern);
        return;
    }
    bool ungrouped = false;
    for (auto& r : L.runs)
        if (r.series.group.empty()) {
            r.series.group = "all";
            ungrouped = true;
        }
    if (ungrouped)
        notes.push_back("runs without a group are in group 'all': a sync-vs-async comparison needs groups "
                        "(--group-pattern REGEX on run names, or <group>/<run> directories)");
}

inline loaded_runs load_runs(const runs_args& a) {
    loaded_runs L;
    std::vector<trackers::detected_input> ins;
    std::vector<const trackers::history_set*> sets;
    std::vector<std::string> notes;
    // Of a tracker history only what the analysis uses is read (the metric or
    // the candidates for it, the step and gradient-norm columns).
    const auto keys = trackers::keys_to_read(a.metric, a.history.step_column, a.history.grad_norm_column);
    for (const auto& in : a.inputs) ins.push_back(trackers::read_input(in, a.format, keys));
    for (const auto& d : ins)
        if (d.kind == trackers::detected_input::history) sets.push_back(&d.set);
    L.metric = !a.metric.empty() ? a.metric : sets.empty() ? std::string("delta_abs_mean")
                                                            : trackers::choose_metric(sets, "", notes);
    if (L.metric.rfind("training/rollout_probs_diff", 0) == 0)
        notes.push_back("'" + L.metric + "' (verl) is a difference of PROBABILITIES |exp(l_T) - exp(l_E)|, not of "
                        "log-probs: it is not delta and shrinks where tokens are unlikely");
    for (std::size_t i = 0; i < ins.size(); ++i) {  // in the order given: the first two groups are compared
        const auto& d = ins[i];
        if (d.kind == trackers::detected_input::dumps) {
            logratio::panel_options opt;
            auto ds = panels_of_directory(a.inputs[i], a.pattern, opt, a.threads);
            auto rs = runs_from_dumps(ds, L.metric);
            L.runs.insert(L.runs.end(), rs.begin(), rs.end());
            L.dumps.insert(L.dumps.end(), ds.begin(), ds.end());
        } else if (d.kind == trackers::detected_input::long_table) {
            if (!a.history.step_column.empty())
                throw logratio::error(a.inputs[i] + ": --step-column applies to logging-history exports; this is a long-format table");
            long_format_runs(d.table, L.metric, L.runs);
        } else {
            runs_from_histories(a, d.set, L, notes);
            ins[i].set = trackers::history_set();  // the points are in L.runs now: free the rest
        }
    }
    for (std::size_t i = 0; i < L.runs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (L.runs[i].series.run == L.runs[j].series.run)
                throw logratio::error("run '" + L.runs[i].series.run + "' appears twice in the inputs (runs never merge; "
                                      "rename one, or give each export once)");
    settle_groups(a, L, notes);
    if (a.position) {
        for (auto& r : L.runs) {
            if (r.position.size() != r.series.update.size())
                throw logratio::error("--position needs logging-history exports (with --steps-per-batch)");
            keep_position(r, *a.position);
        }
    }
    if (L.runs.empty()) throw logratio::error("no runs in the inputs");
    for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    L.runs.front().notes.insert(L.runs.front().notes.begin(), notes.begin(), notes.end());
    return L;
}

inline logratio::runs_analysis analyze(const runs_args& a, const loaded_runs& L) {
    logratio::runs_options o;
    if (!a.compare.empty()) {
        const auto comma = a.compare.find(',');
        if (comma == std::string::npos || a.compare.find(',', comma + 1) != std::string::npos)
            throw logratio::error("--compare: give two groups as A,B (got '" + a.compare + "')");
        o.compare_a = a.compare.substr(0, comma);
        o.compare_b = a.compare.substr(comma + 1);
    }
    std::vector<logratio::run_series> series;
    for (const auto& r : L.runs) series.push_back(r.series);
    return logratio::analyze_runs(series, o);
}

/// Histogram and tail quantiles of one dump's masked-in δ.
inline dump_histogram histogram_of_dump(const std::string& path) {
    mapped_file f(path);
    const auto st = parse_safetensors(f);
    const panel_tensors in = dump_tensors(st, path, "");
    std::vector<double> d;
    with_panel_view(in, [&](const auto& v) {
        for (std::uint64_t i = 0; i < v.size(); ++i)
            if (v.counts(i)) {
                const double x = logratio::to_double(v.train()[i]) - logratio::to_double(v.rollout()[i]);
                if (std::isfinite(x)) d.push_back(x);
            }
    });
    dump_histogram h;
    h.path = path;
    h.tokens = d.size();
    if (d.empty()) return h;
    const std::vector<double> probs{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    const auto q = logratio::quantiles(d.begin(), d.end(), probs);
    for (std::size_t i = 0; i < probs.size(); ++i) h.quantiles.push_back({"delta_q" + fmt(probs[i], "%g"), q[i]});
    std::vector<double> ad(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) ad[i] = std::fabs(d[i]);
    const std::vector<double> aprobs{0.5, 0.9, 0.99, 0.999, 0.9999};
    const auto aq = logratio::quantiles(ad.begin(), ad.end(), aprobs);
    for (std::size_t i = 0; i < aprobs.size(); ++i) h.quantiles.push_back({"abs_delta_q" + fmt(aprobs[i], "%g"), aq[i]});
    double m = std::max(std::fabs(q.front()), std::fabs(q.back())) * 1.5;
    if (!(m > 0)) m = std::max(1e-6, *std::max_element(ad.begin(), ad.end()));
    h.lo = -m;
    h.hi = m;
    h.counts.assign(61, 0);
    for (double x : d) {
        if (x < h.lo) ++h.below;
        else if (x > h.hi) ++h.above;
        else h.counts[std::min<std::size_t>(60, static_cast<std::size_t>((x - h.lo) / (h.hi - h.lo) * 61.0))]++;
    }
    return h;
}

inline void write_atomically(const std::string& path, const std::string& bytes) {
    atomic_file f(path);
    f.write(bytes);
    f.commit();
}

inline std::string source_list(const runs_args& a) {
    std::string s;
    for (const auto& i : a.inputs) s += (s.empty() ? "" : " ") + i;
    return s;
}

/// Per group, the mean over dumps of |δ| split into numeric mismatch and
/// policy lag (dumps with old_logprobs only): fix kernels or staleness?
inline std::vector<std::string> split_lines(const loaded_runs& L) {
    std::vector<std::string> groups, out;
    for (const auto& d : L.dumps)
        if (d.split && std::find(groups.begin(), groups.end(), d.group) == groups.end()) groups.push_back(d.group);
    for (const auto& g : groups) {
        double tot = 0, num = 0, lag = 0;
        std::size_t n = 0;
        for (const auto& d : L.dumps)
            if (d.split && d.group == g) {
                tot += d.split->total.delta_abs_mean;
                num += d.split->numeric.delta_abs_mean;
                lag += d.split->lag.delta_abs_mean;
                ++n;
            }
        const double k = static_cast<double>(n);
        out.push_back("  " + g + " (" + std::to_string(n) + " dumps with old_logprobs): mean |delta| " +
                      fmt(tot / k) + "; per token delta = numeric + lag, mean |numeric| " + fmt(num / k) +
                      " (l_T(old) - l_E), mean |lag| " + fmt(lag / k) + " (l_T(new) - l_T(old)): " +
                      (lag > num ? "staleness dominates" : "kernels/precision dominate"));
    }
    return out;
}

inline std::string report_html(const runs_args& a, const loaded_runs& L, const logratio::runs_analysis& an) {
    std::optional<dump_histogram> h;
    std::string dump = a.dump;
    if (dump.empty() && !L.dumps.empty()) {  // the worst update: largest value of the metric
        double best = -INFINITY;
        for (const auto& d : L.dumps)
            for (const auto& e : logratio::panel_entries(d.panel))
                if (e.first == L.metric && e.second && *e.second > best) {
                    best = *e.second;
                    dump = d.path;
                }
        if (dump.empty()) dump = L.dumps.front().path;
    }
    if (!dump.empty()) h = histogram_of_dump(dump);
    report_inputs r;
    r.metric = L.metric;
    r.source = source_list(a);
    r.analysis = &an;
    r.runs = &L.runs;
    r.verdict = verdict_lines(L.metric, an);
    r.histogram = h ? &*h : nullptr;
    r.split = split_lines(L);
    r.doctor_html = doctor_section_html(diagnose_dumps(L.dumps, a.threads));
    return html_report(r);
}

inline int run_runs(const runs_args& a) {
    const auto L = load_runs(a);
    const auto an = analyze(a, L);
    if (!a.html.empty()) write_atomically(a.html, report_html(a, L, an));
    if (a.json) {
        std::cout << runs_json(L.metric, an, L.runs).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return 0;
    }
    print_runs_table(L.metric, an);
    return 0;
}

inline int run_report(const runs_args& a) {
    const auto L = load_runs(a);
    const auto an = analyze(a, L);
    const std::string out = a.html.empty() ? std::string("logratio-report.html") : a.html;
    write_atomically(out, report_html(a, L, an));
    for (const auto& l : verdict_lines(L.metric, an)) std::printf("%s\n", l.c_str());
    const auto split = split_lines(L);
    if (!split.empty()) std::printf("numeric mismatch vs policy lag:\n");
    for (const auto& l : split) std::printf("%s\n", l.c_str());
    std::size_t zero = 0;
    for (const auto& r : L.runs) zero += r.zero_grad_norm.size();
    if (zero) std::printf("  %zu update(s) with zero gradient norm are listed in the report\n", zero);
    std::printf("report: %s\n", out.c_str());
    return 0;
}

/// `logratio panel --each DIR --csv OUT`: the long table of every dump's panel.
inline int run_panel_each(const std::string& dir, const std::string& csv, const std::string& pattern,
                          const logratio::panel_options& opt, unsigned threads) {
    const auto ds = panels_of_directory(dir, pattern, opt, threads);
    const std::string text = panel_table_csv(ds);
    if (csv.empty() || csv == "-") std::cout << text;
    else {
        write_atomically(csv, text);
        std::fprintf(stderr, "wrote %zu panels to %s\n", ds.size(), csv.c_str());
    }
    return 0;
}

}  // namespace logratio_cli
