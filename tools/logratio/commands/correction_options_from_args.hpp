#pragma once
// The correction options of a `logratio correct` argument list, exactly as the
// command maps them (correct_options.hpp; compiled in correct_options.cpp,
// so a test replaying the CLI's arguments does not compile CLI11).
#include <string>
#include <vector>

#include <logratio/correction/correction_options.hpp>

namespace logratio_cli {

/// `args`: the arguments after the program and subcommand names. CLI11's
/// parse errors and the mapping's logratio::argument_error propagate.
logratio::correction_options correction_options_from_args(const std::vector<std::string>& args);

}  // namespace logratio_cli
