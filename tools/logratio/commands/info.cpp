// `logratio info`: the version, the SIMD level the kernels run and the
// levels this CPU can run (LOGRATIO_SIMD's choices).
#include <cstdio>
#include <string>

#include <logratio/core/version.hpp>

#include "../kernels.hpp"
#include "command.hpp"

namespace logratio_cli {

command_runner setup_info(CLI::App&) {
    return [] {
        std::string levels;
        for (const auto& l : kernels::simd_levels()) levels += (levels.empty() ? "" : " ") + l;
        std::printf("logratio %s\nsimd %s\nlevels %s\n", LOGRATIO_VERSION_STRING, kernels::simd_level(), levels.c_str());
        return 0;
    };
}

}  // namespace logratio_cli
