// Compiled, never run: every kernel family instantiated at -march=x86-64-v4
// with -Wall -Wextra -Werror (g++ 12 and clang 14), the flags the README
// recommends to consumers. Fails the build if our headers let a warning
// through, e.g. GCC 12.2's -Wmaybe-uninitialized inside <avx512fintrin.h>
// (see detail/xsimd.hpp), which used to reach consumers ~500 times.
#include <cstdint>
#include <vector>

#include <logratio/logratio.hpp>

int warnings_v4_instantiate() {
    std::vector<float> t(64, -1.0f), r(64, -1.1f), w(64), old(64, -1.05f);
    std::vector<unsigned char> m(64, 1), km(64);
    auto view = logratio::paired_view<float>::padded(t.data(), r.data(), m.data(), 8, 8);
    logratio::panel p = logratio::compute_panel(view);
    logratio::add_panel_quantiles(p, view);
    auto split = logratio::compute_mismatch_split(view, old.data());
    logratio::correction_options o;
    auto c = logratio::correct(view, o, w.data(), km.data());
    auto bview = logratio::paired_view<logratio::bfloat16>::padded(
        reinterpret_cast<const logratio::bfloat16*>(m.data()), reinterpret_cast<const logratio::bfloat16*>(m.data()),
        m.data(), 4, 8);
    logratio::panel pb = logratio::compute_panel(bview);
    std::vector<float> logits(2 * 16, 0.5f);
    std::int64_t tokens[2] = {1, 2};
    logratio::logits_view<float> lv(logits.data(), 2, 16);
    logratio::logits_row rows[2];
    logratio::compare_logits(lv, lv, tokens, rows);
    logratio::kll_sketch<double> s;
    s.update(1.0);
    return static_cast<int>(p.tokens + pb.tokens + c.tokens + split.tokens + s.n());
}
