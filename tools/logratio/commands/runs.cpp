// `logratio runs` and `logratio report`: statistics over runs of panels
// (dumps, long tables, tracker histories) and the one-screen verdict / HTML
// report (runs.hpp). This file registers the options.
#include <cmath>
#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "../io/trackers/detect.hpp"
#include "command.hpp"
#include "runs.hpp"
#include "threads_option.hpp"

namespace logratio_cli {
namespace {

void add_runs_options(CLI::App* c, runs_args& a, bool report) {
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
    c->add_option("--update-offset", a.history.update_offset, "history exports: update = step + OFFSET (default 0)")
        ->check(CLI::Validator(
            [](std::string& s) {
                const double v = std::strtod(s.c_str(), nullptr);
                return std::isfinite(v) && std::fabs(v) <= 9007199254740992.0 ? std::string()
                                                                             : "must be finite, within +-2^53";
            },
            "FINITE"));
    c->add_option("--steps-per-batch", a.history.steps_per_batch,
                  "history exports: optimizer updates per rollout batch; batch = floor(step / P), position = step mod P");
    c->add_option("--position", a.position, "keep only updates at this position inside their rollout batch (0 = first)");
    c->add_option("--grad-norm-column", a.history.grad_norm_column, "list updates where this column is exactly 0");
    c->add_option("--run", a.history.run, "history exports: run name (default: file name)");
    c->add_option("--group", a.history.group, "history exports: group (default: parent directory name)");
    c->add_option("--pattern", a.pattern,
                  "dump directories: path pattern such as '{group}/{run}/update_{update}.safetensors' "
                  "(default: __metadata__ run/group/update)");
    c->add_option("--metrics", a.metrics,
                  "more metrics analysed beside --metric (which keeps the verdict): A,B,... or 'all' (every numeric "
                  "metric with at least 2 points in some run); each gets the per-run and per-group tables")
        ->delimiter(',');
    c->add_option("--min-updates", a.min_updates,
                  "keep only runs with at least N updates carrying the metric (the rest are left out, and said)")
        ->check(CLI::Validator(
            [](std::string& v) {
                return v.find_first_not_of(" 0123456789") == std::string::npos ? std::string()
                                                                                : "must be a whole number >= 0";
            },
            "N>=0"));
    c->add_option("--by", a.by,
                  "a run attribute (W&B config, MLflow param or tag, TensorBoard hparam, a long table's constant "
                  "column, a dump's __metadata__): the analysis repeated within each of its values");
    if (!report) c->add_flag("--list-attributes", a.list_attributes, "print the run attributes found, and nothing else");
    if (!report)
        c->add_flag("--points", a.points,
                    "print every (run, step, metric, value) the readers read, in order, and nothing else (with "
                    "--json: a \"points\" array): to check a reader against the tracker");
    add_threads_option(*c, a.threads, "dumps computed and runs analysed in parallel");
    if (!report) return;
    c->add_option("--dump", a.dump, "dump whose delta histogram the report shows (default: the worst update)");
    c->add_option("--export", a.export_dir,
                  "also write the frozen data here: tidy CSVs (updates, rollout batches, per-run and per-group "
                  "summaries, the comparison), SVG figures and manifest.json (inputs with SHA-256, the command); "
                  "`logratio runs DIR` reads it back");
    c->add_option("--markdown", a.markdown, "also write the Markdown evidence pack here");
    c->add_option("--reconcile", a.reconcile,
                  "check the inputs against this second source (as `logratio reconcile`) and say it in the report");
}

}  // namespace

command_runner setup_runs(CLI::App& c) {
    auto args = std::make_shared<runs_args>();
    add_runs_options(&c, *args, false);
    return [args] { return args->points ? run_points(*args) : run_runs(*args); };
}

command_runner setup_report(CLI::App& c) {
    auto args = std::make_shared<runs_args>();
    add_runs_options(&c, *args, true);
    return [args] { return run_report(*args); };
}

}  // namespace logratio_cli
