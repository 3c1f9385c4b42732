// correction_options_from_args (correction_options_from_args.hpp).
#include "correction_options_from_args.hpp"

#include "correct_options.hpp"

namespace logratio_cli {

logratio::correction_options correction_options_from_args(const std::vector<std::string>& args) {
    CLI::App app{"logratio correct"};
    correct_args a;
    add_correct_options(app, a);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
    a.flavour = flavour_of(a);
    return correction_options_of(a);
}

}  // namespace logratio_cli
