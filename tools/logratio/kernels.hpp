#pragma once
// The kernels the CLI runs, in one place: logratio::kernels
// (<logratio/dispatch/kernels.hpp>). logratio_cli links logratio::dispatch
// where it is built (the default on x86-64), so the calls run at the CPU's
// widest SIMD level, chosen once at run time (LOGRATIO_SIMD forces one) --
// one binary for every machine; without it (the sanitizer and fuzz builds,
// other CPUs) they are the header-only kernels at the build's level.
//
// Views reach these with a byte (std::uint8_t) or float mask
// (io/panel_input.cpp converts other mask dtypes) and int64 token ids.
#include <logratio/dispatch/kernels.hpp>

namespace logratio_cli {
namespace kernels = logratio::kernels;
}  // namespace logratio_cli
