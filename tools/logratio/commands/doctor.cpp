// `logratio doctor`: the data bugs behind a mismatch (doctor_cmd.hpp);
// exit 3 when a check fails.
#include <memory>

#include "../doctor_cmd.hpp"
#include "command.hpp"

namespace logratio_cli {

command_runner setup_doctor(CLI::App& c) {
    auto args = std::make_shared<doctor_args>();
    add_doctor_options(&c, *args);
    return [args] { return run_doctor(*args); };
}

}  // namespace logratio_cli
