#pragma once
// `logratio runs`, `logratio report` and `logratio panel --each`: from
// panel tables, logging-history exports or directories of dumps to run
// statistics, a verdict and an HTML report.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
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

namespace logratio_cli {

struct runs_args {
    std::vector<std::string> inputs;
    std::string metric = "delta_abs_mean", compare, html, format = "auto", pattern, dump;
    history_options history;
    std::optional<long> position;
    bool json = false;
    unsigned threads = 1;
};

inline void add_runs_options(CLI::App* c, runs_args& a, bool report) {
    c->add_option("inputs", a.inputs,
                  "panel tables (CSV or .jsonl, long format), logging-history CSV exports, or directories of dumps")
        ->required();
    c->add_option("--metric", a.metric, "metric column (default delta_abs_mean)");
    c->add_option("--compare", a.compare, "two groups A,B: compare A - B (default: the first two groups)");
    if (!report) c->add_flag("--json", a.json, "one JSON object (runs, groups, comparison)");
    c->add_option("--html", a.html, report ? "HTML report path (default logratio-report.html)" : "also write the HTML report here");
    c->add_option("--format", a.format, "auto (default), long or history")
        ->check(CLI::IsMember({"auto", "long", "history"}));
    c->add_option("--step-column", a.history.step_column, "history exports: the training-step column (e.g. train/step)");
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
};

inline loaded_runs load_runs(const runs_args& a) {
    loaded_runs L;
    for (const auto& in : a.inputs) {
        if (is_directory(in)) {
            logratio::panel_options opt;
            auto ds = panels_of_directory(in, a.pattern, opt, a.threads);
            auto rs = runs_from_dumps(ds, a.metric);
            L.runs.insert(L.runs.end(), rs.begin(), rs.end());
            L.dumps.insert(L.dumps.end(), ds.begin(), ds.end());
            continue;
        }
        const text_table t = read_table(in);
        const bool history = a.format == "history" ||
                             (a.format == "auto" && t.column("_step") && !t.column("update"));
        std::vector<run_input> rs;
        if (history) {
            rs.push_back(history_run(t, a.metric, a.history));
        } else {
            long_format_runs(t, a.metric, rs);
            if (!a.history.step_column.empty())
                throw logratio::error(in + ": --step-column applies to logging-history exports; this is a long-format table");
        }
        for (auto& r : rs) {
            for (const auto& o : L.runs)
                if (o.series.run == r.series.run)
                    throw logratio::error(in + ": run '" + r.series.run + "' also appears in another input");
            L.runs.push_back(std::move(r));
        }
    }
    if (a.position) {
        for (auto& r : L.runs) {
            if (r.position.size() != r.series.update.size())
                throw logratio::error("--position needs logging-history exports (with --steps-per-batch)");
            keep_position(r, *a.position);
        }
    }
    if (L.runs.empty()) throw logratio::error("no runs in the inputs");
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
    panel_tensors in;
    in.train = st.find("train_logprobs");
    in.rollout = st.find("rollout_logprobs");
    in.mask = st.find("mask");
    in.offsets = st.find("cu_seqlens");
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
                if (e.first == a.metric && e.second && *e.second > best) {
                    best = *e.second;
                    dump = d.path;
                }
        if (dump.empty()) dump = L.dumps.front().path;
    }
    if (!dump.empty()) h = histogram_of_dump(dump);
    report_inputs r;
    r.metric = a.metric;
    r.source = source_list(a);
    r.analysis = &an;
    r.runs = &L.runs;
    r.verdict = verdict_lines(a.metric, an);
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
        std::cout << runs_json(a.metric, an, L.runs).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return 0;
    }
    print_runs_table(a.metric, an);
    return 0;
}

inline int run_report(const runs_args& a) {
    const auto L = load_runs(a);
    const auto an = analyze(a, L);
    const std::string out = a.html.empty() ? std::string("logratio-report.html") : a.html;
    write_atomically(out, report_html(a, L, an));
    for (const auto& l : verdict_lines(a.metric, an)) std::printf("%s\n", l.c_str());
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
