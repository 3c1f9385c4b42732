#pragma once
// The CLI as a table of commands (tools/logratio/main.cpp): each command is
// a name, a help line and a setup function that registers its options on
// its CLI11 subcommand and returns the function that runs it (exit code:
// README, "Exit codes"). One source file per command in this folder.
#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace logratio_cli {

using command_runner = std::function<int()>;

struct command {
    const char* name;
    const char* help;
    command_runner (*setup)(CLI::App& subcommand);
};

command_runner setup_panel(CLI::App& c);
command_runner setup_quantiles(CLI::App& c);
command_runner setup_correct(CLI::App& c);
command_runner setup_logits(CLI::App& c);
command_runner setup_runs(CLI::App& c);
command_runner setup_report(CLI::App& c);
command_runner setup_doctor(CLI::App& c);
command_runner setup_reconcile(CLI::App& c);
command_runner setup_info(CLI::App& c);

}  // namespace logratio_cli
