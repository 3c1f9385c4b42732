// Compiled, never run: every kernel family instantiated at -march=x86-64-v4
// with -Wall -Wextra -Werror (g++ 12 and clang 14), the flags the README
// recommends to consumers. Fails the build if our headers let a warning
// through, e.g. GCC 12.2's -Wmaybe-uninitialized inside <avx512fintrin.h>
// (see detail/xsimd.hpp), which used to reach consumers ~500 times.
// Two translation units (this one: the umbrella header, the panel and KLL;
// warnings_v4_kernels.cpp: quantiles, correction, logits, mismatch split),
// each under 600 MB to compile.
#include <cstdint>
#include <vector>

#include <logratio/logratio.hpp>

int warnings_v4_instantiate() {
    std::vector<float> t(64, -1.0f), r(64, -1.1f);
    std::vector<unsigned char> m(64, 1);
    auto view = logratio::paired_view<float>::padded(t.data(), r.data(), m.data(), 8, 8);
    logratio::panel p = logratio::compute_panel(view);
    auto bview = logratio::paired_view<logratio::bfloat16>::padded(
        reinterpret_cast<const logratio::bfloat16*>(m.data()), reinterpret_cast<const logratio::bfloat16*>(m.data()),
        m.data(), 4, 8);
    logratio::panel pb = logratio::compute_panel(bview);
    logratio::kll_sketch<double> s;
    s.update(1.0);
    return static_cast<int>(p.tokens + pb.tokens + s.n());
}
