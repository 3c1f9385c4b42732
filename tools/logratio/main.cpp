// logratio: command-line tool over dumps of paired log-probs -- a thin table
// of commands over the library (one source file per command in commands/).
//
//   logratio panel FILE.safetensors [--json] [--threads N] [--no-quantiles]
//   logratio panel --train a.npy --rollout b.npy (--mask m.npy | --offsets o.npy) [--json]
//   logratio correct FILE.safetensors [--is L --is-threshold C [--is-lower c] [--batch-normalize]]
//                    [--rs OPTIONS --rs-threshold T[,T...] [--rs-threshold-lower L]] [--veto TAU]
//                    [--json] [--prefix P] [--out OUT.safetensors]
//   logratio logits FILE.safetensors [--temperature T] [--json] [--threads N]
//   logratio panel --each DIR [--csv OUT.csv] [--pattern P] [--threads N]
//   logratio runs TABLE.csv|DIR... [--metric NAME] [--compare A,B] [--json] [--html OUT.html]
//   logratio report TABLE.csv|DIR... [--metric NAME] [--compare A,B] [--html OUT.html] [--dump FILE]
//   logratio doctor FILE.safetensors [--json] | --each DIR     (exit 3 when a check fails)
//   logratio reconcile A B [--rtol R] [--map A_NAME=B_NAME ...] [--json] [--format-a F] [--format-b F]
//                    (exit 4 when an overlapping field differs)
//   logratio info
//
// Exit codes (README, "Exit codes"): 0 success, 1 any error (message on
// stderr, nothing on stdout), 3 doctor found a failing check, 4 reconcile
// found overlapping fields that differ.
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/core/version.hpp>

#include "commands/command.hpp"

namespace {

const logratio_cli::command commands[] = {
    {"panel", "print the ratio panel (SPEC.md keys) of one dump", &logratio_cli::setup_panel},
    {"correct", "IS weights (TIS), rejection masks (MIS) and veto, with verl's metrics", &logratio_cli::setup_correct},
    {"logits", "exact entropy, KL both ways, TV and log-probs from full logits", &logratio_cli::setup_logits},
    {"quantiles", "exact (or sketched) quantiles of delta, |delta| or the ratio", &logratio_cli::setup_quantiles},
    {"runs", "per-run trends, group means and a two-group comparison (scipy's numbers)", &logratio_cli::setup_runs},
    {"report", "one-screen verdict and a self-contained HTML report", &logratio_cli::setup_report},
    {"doctor",
     "find the cause of a mismatch: misaligned, filled or processed log-probs, one-sided temperature, desync, "
     "hot spots (exit 3 on a fail)",
     &logratio_cli::setup_doctor},
    {"reconcile",
     "compare two sources of the same runs (a tracker and the local log) field by field (exit 4 when some differ)",
     &logratio_cli::setup_reconcile},
    {"info", "print the version, the SIMD level in use and the levels this CPU runs", &logratio_cli::setup_info},
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"logratio: train-inference mismatch statistics over paired log-prob dumps"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LOGRATIO_VERSION_STRING);
    std::vector<std::pair<CLI::App*, logratio_cli::command_runner>> subcommands;
    for (const auto& c : commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.help);
        subcommands.emplace_back(sub, c.setup(*sub));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help 0, every option or argument error 1 -- not CLI11's own
        // codes (105, 106, ...).
        return app.exit(e) == 0 ? 0 : 1;
    }
    try {
        for (auto& s : subcommands)
            if (s.first->parsed()) return s.second();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "logratio: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
