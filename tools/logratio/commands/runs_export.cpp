// `logratio report --export DIR` (runs_export.hpp).
#include "runs_export.hpp"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>
#include <logratio/core/version.hpp>

#include "../io/export_reader.hpp"
#include "../io/number_text.hpp"
#include "../io/sha256.hpp"
#include "../output/atomic_directory.hpp"
#include "../output/panel_table.hpp"

namespace logratio_cli {

namespace fs = std::filesystem;

namespace {

bool replaceable_export(const std::string& dir) { return is_export_directory(dir); }

/// The metric series of run i, the mismatch metric first.
std::vector<const run_input*> series_of_run(const loaded_runs& L, std::size_t i) {
    std::vector<const run_input*> s{&L.runs[i]};
    for (const auto& m : L.others) s.push_back(&m.runs[i]);
    return s;
}

/// Run i's updates over all metrics: the mismatch metric's order first (the
/// order its statistics summed in), then the other metrics' extra updates;
/// `at[m]` maps an update to its index in series m.
std::vector<double> update_order(const std::vector<const run_input*>& s, std::vector<std::map<double, std::size_t>>& at) {
    std::vector<double> order;
    std::set<double> seen;
    at.assign(s.size(), {});
    for (std::size_t m = 0; m < s.size(); ++m)
        for (std::size_t k = 0; k < s[m]->series.update.size(); ++k) {
            const double u = s[m]->series.update[k];
            if (!at[m].emplace(u, k).second)
                throw logratio::error("--export: run '" + s[m]->series.run + "' has update " + number_text(u) +
                                      " twice (two dumps or rows of one update): it cannot be one row of updates.csv");
            if (seen.insert(u).second) order.push_back(u);
        }
    return order;
}

std::string updates_csv(const loaded_runs& L, std::vector<std::string>& metric_names, bool& positions, bool& zero) {
    metric_names = {L.metric};
    for (const auto& m : L.others) metric_names.push_back(m.metric);
    positions = zero = false;
    for (const auto& r : L.runs) {
        zero = zero || !r.zero_grad_norm.empty();
        for (long p : r.position) positions = positions || p != 0;
    }
    for (const auto& m : metric_names)
        for (const char* own : {"run", "group", "update", "position", "zero_grad_norm", "batch", "updates"})
            if (m == own)
                throw logratio::error("--export: a metric is named '" + m + "', like a column updates.csv or "
                                      "rollouts.csv has of its own; export the other metrics (--metrics A,B,...)");
    std::string s = "run,group,update";
    if (positions) s += ",position";
    if (zero) s += ",zero_grad_norm";
    for (const auto& m : metric_names) s += "," + csv_cell(m);
    s += "\n";
    for (std::size_t i = 0; i < L.runs.size(); ++i) {
        const auto series = series_of_run(L, i);
        const std::set<double> zeros(L.runs[i].zero_grad_norm.begin(), L.runs[i].zero_grad_norm.end());
        std::vector<std::map<double, std::size_t>> at;
        for (double u : update_order(series, at)) {
            std::string row = csv_cell(L.runs[i].series.run) + "," + csv_cell(L.runs[i].series.group) + "," + number_text(u);
            std::string pos, cells;
            for (std::size_t m = 0; m < series.size(); ++m) {
                const auto* r = series[m];
                const auto it = at[m].find(u);
                cells += ",";
                if (it == at[m].end()) continue;
                const std::size_t k = it->second;
                cells += number_text(r->series.value[k]);
                if (pos.empty() && k < r->position.size()) pos = std::to_string(r->position[k]);
            }
            if (positions) row += "," + pos;
            if (zero) row += zeros.count(u) ? ",1" : ",";
            s += row + cells + "\n";
        }
    }
    return s;
}

/// One row per run x rollout batch (batch = floor(step / P), step = update
/// - offset): the updates in it and each metric's mean over them.
std::string rollouts_csv(const runs_args& a, const loaded_runs& L) {
    const long P = a.history.steps_per_batch;
    std::string s = "run,group,batch,updates," + csv_cell(L.metric);
    for (const auto& m : L.others) s += "," + csv_cell(m.metric);
    s += "\n";
    for (std::size_t i = 0; i < L.runs.size(); ++i) {
        const auto series = series_of_run(L, i);
        std::map<long, std::vector<std::pair<std::size_t, double>>> sums;  // batch -> per metric (n, sum)
        std::map<long, std::size_t> updates;
        for (std::size_t m = 0; m < series.size(); ++m)
            for (std::size_t k = 0; k < series[m]->series.update.size(); ++k) {
                const double step = series[m]->series.update[k] - a.history.update_offset;
                const long b = static_cast<long>(std::floor(step / static_cast<double>(P)));
                auto& v = sums[b];
                v.resize(series.size());
                if (m == 0) ++updates[b];
                const double x = series[m]->series.value[k];
                if (std::isfinite(x)) {
                    ++v[m].first;
                    v[m].second += x;
                }
            }
        for (const auto& [b, v] : sums) {
            s += csv_cell(L.runs[i].series.run) + "," + csv_cell(L.runs[i].series.group) + "," + std::to_string(b) +
                 "," + std::to_string(updates[b]);
            for (const auto& [n, sum] : v) s += "," + (n ? number_text(sum / static_cast<double>(n)) : std::string());
            s += "\n";
        }
    }
    return s;
}

std::string run_summary_csv(const evidence& e) {
    std::string s = "metric,run,group,updates,missing,mean,std,median,max,slope,slope_stderr,slope_ci_low,"
                    "slope_ci_high,slope_p,theil_sen_slope,theil_sen_low,theil_sen_high,kendall_tau,kendall_p\n";
    for (const auto& m : e.metrics)
        for (const auto& r : m.analysis.runs) {
            s += csv_cell(m.metric) + "," + csv_cell(r.run) + "," + csv_cell(r.group) + "," + std::to_string(r.updates) +
                 "," + std::to_string(r.missing);
            for (double v : {r.summary.mean, r.summary.std, r.summary.median, r.summary.max, r.ols.slope,
                             r.ols.slope_stderr, r.ols.slope_ci_low, r.ols.slope_ci_high, r.ols.pvalue,
                             r.theil_sen.slope, r.theil_sen.low, r.theil_sen.high, r.kendall.tau, r.kendall.pvalue})
                s += "," + number_text(v);
            s += "\n";
        }
    return s;
}

std::string group_summary_csv(const evidence& e) {
    std::string s = "metric,group,runs,updates,mean_of_means,ci_low,ci_high,mean_slope,slope_ci_low,slope_ci_high,"
                    "rising_runs,falling_runs\n";
    for (const auto& m : e.metrics)
        for (const auto& g : m.analysis.groups) {
            s += csv_cell(m.metric) + "," + csv_cell(g.group) + "," + std::to_string(g.runs) + "," +
                 std::to_string(g.updates);
            for (double v : {g.mean_of_means.mean, g.mean_of_means.low, g.mean_of_means.high, g.mean_slope.mean,
                             g.mean_slope.low, g.mean_slope.high})
                s += "," + number_text(v);
            s += "," + std::to_string(g.rising) + "," + std::to_string(g.falling) + "\n";
        }
    return s;
}

std::string comparison_csv(const evidence& e) {
    std::string s = "metric,a,b,mean_diff,ci_low,ci_high,welch_t,welch_df,welch_p,mannwhitney_u,mannwhitney_p,"
                    "slope_welch_t,slope_welch_df,slope_welch_p\n";
    for (const auto& m : e.metrics) {
        if (!m.analysis.comparison) continue;
        const auto& c = *m.analysis.comparison;
        s += csv_cell(m.metric) + "," + csv_cell(c.a) + "," + csv_cell(c.b);
        for (double v : {c.means.mean_diff, c.means.ci_low, c.means.ci_high, c.means.t, c.means.df, c.means.pvalue,
                         c.mann_whitney.u, c.mann_whitney.pvalue, c.slopes.t, c.slopes.df, c.slopes.pvalue})
            s += "," + number_text(v);
        s += "\n";
    }
    return s;
}

std::string attributes_csv(const loaded_runs& L) {
    std::string s = "run,key,value\n";
    for (const auto& r : L.runs)
        for (const auto& [k, v] : r.attributes) s += csv_cell(r.series.run) + "," + csv_cell(k) + "," + csv_cell(v) + "\n";
    return s;
}

}  // namespace

void check_export_target(const std::string& dir) {
    const auto problem = directory_target_problem(dir, &replaceable_export);
    if (!problem.empty()) throw logratio::error("--export " + problem);
}

namespace {

/// argv of this process (Linux: /proc/self/cmdline), for the manifest.
nlohmann::ordered_json command_line() {
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    auto arr = nlohmann::ordered_json::array();
    std::string arg;
    while (std::getline(f, arg, '\0')) arr.push_back(arg);
    return arr;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

nlohmann::ordered_json options_json(const runs_args& a) {
    nlohmann::ordered_json o;
    o["inputs"] = a.inputs;
    o["format"] = a.format;
    o["metric"] = a.metric;
    o["metrics"] = a.metrics;
    o["compare"] = a.compare;
    o["min_updates"] = a.min_updates;
    o["by"] = a.by;
    o["group_pattern"] = a.group_pattern;
    o["step_column"] = a.history.step_column;
    o["update_offset"] = a.history.update_offset;
    o["steps_per_batch"] = a.history.steps_per_batch;
    o["grad_norm_column"] = a.history.grad_norm_column;
    o["position"] = a.position ? nlohmann::ordered_json(*a.position) : nlohmann::ordered_json(nullptr);
    o["pattern"] = a.pattern;
    o["reconcile"] = a.reconcile;
    return o;
}

/// A file's path for the manifest: relative to its input directory, or its
/// name when the input is the file itself.
std::string relative_to_input(const std::string& file, const std::string& input) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) return fs::path(file).filename().string();
    const auto r = fs::relative(file, input, ec);
    return ec || r.empty() ? file : r.generic_string();
}

nlohmann::ordered_json inputs_json(const std::vector<input_record>& inputs) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& in : inputs) {
        nlohmann::ordered_json o;
        o["input"] = in.input;
        o["reader"] = in.reader;
        o["runs"] = in.runs;
        o["records"] = in.records;
        o["files"] = nlohmann::ordered_json::array();
        for (const auto& f : in.files) {
            const auto d = digest_file(f);
            o["files"].push_back({{"path", relative_to_input(f, in.input)}, {"bytes", d.bytes}, {"sha256", d.sha256}});
        }
        o["notes"] = in.notes;
        arr.push_back(std::move(o));
    }
    return arr;
}

}  // namespace

void write_export(const runs_args& a, const loaded_runs& L, const evidence& e, const std::string& summary_json,
                  const std::vector<std::pair<std::string, std::string>>& figures,
                  const std::vector<std::pair<std::string, std::string>>& extra,
                  const std::vector<input_record>& more_inputs) {
    atomic_directory dir(a.export_dir, &replaceable_export);
    std::vector<std::string> metric_names;
    bool positions = false, zero = false;
    std::vector<std::pair<std::string, std::string>> files{{"updates.csv", updates_csv(L, metric_names, positions, zero)}};
    if (a.history.steps_per_batch > 1) files.push_back({"rollouts.csv", rollouts_csv(a, L)});
    files.push_back({"run_summary.csv", run_summary_csv(e)});
    files.push_back({"group_summary.csv", group_summary_csv(e)});
    files.push_back({"comparison.csv", comparison_csv(e)});
    files.push_back({"run_attributes.csv", attributes_csv(L)});
    files.push_back({"summary.json", summary_json + "\n"});
    for (const auto& [name, svg] : figures) files.push_back({"figures/" + name, svg});
    files.insert(files.end(), extra.begin(), extra.end());
    nlohmann::ordered_json man;
    man[export_marker_key()] = 1;
    man["logratio_version"] = LOGRATIO_VERSION_STRING;
    man["created"] = utc_now();
    man["command"] = command_line();
    std::error_code ec;
    man["cwd"] = fs::current_path(ec).string();
    man["options"] = options_json(a);
    man["analysis"] = {{"metric", L.metric}, {"metrics", metric_names}, {"axis", L.axis},
                       {"compare", L.compare}, {"min_updates", L.min_updates},
                       {"updates_csv", {{"position", positions}, {"zero_grad_norm", zero}}}};
    man["left_out"] = nlohmann::ordered_json::array();
    for (const auto& x : L.left_out) man["left_out"].push_back({{"run", x.run}, {"reason", x.reason}});
    man["inputs"] = inputs_json(L.inputs);
    if (!more_inputs.empty()) man["reconciled_with"] = inputs_json(more_inputs);
    man["outputs"] = nlohmann::ordered_json::array();
    for (const auto& [name, bytes] : files) {
        dir.write(name, bytes);
        man["outputs"].push_back({{"path", name}, {"bytes", bytes.size()}, {"sha256", sha256_hex(bytes)}});
    }
    dir.write(export_manifest_name(), man.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    dir.commit();
}

}  // namespace logratio_cli
