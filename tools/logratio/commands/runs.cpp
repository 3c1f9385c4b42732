// `logratio runs` and `logratio report`: statistics over runs of panels
// (dumps, long tables, tracker histories) and the one-screen verdict / HTML
// report (runs_cmd.hpp).
#include <memory>

#include "../runs_cmd.hpp"
#include "command.hpp"

namespace logratio_cli {

command_runner setup_runs(CLI::App& c) {
    auto args = std::make_shared<runs_args>();
    add_runs_options(&c, *args, false);
    return [args] { return run_runs(*args); };
}

command_runner setup_report(CLI::App& c) {
    auto args = std::make_shared<runs_args>();
    add_runs_options(&c, *args, true);
    return [args] { return run_report(*args); };
}

}  // namespace logratio_cli
