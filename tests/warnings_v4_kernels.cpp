// Compiled, never run: the second half of warnings_v4.cpp (the quantile,
// correction, logits and mismatch-split kernels at -march=x86-64-v4 under -Werror),
// through their component headers.
#include <cstdint>
#include <vector>

#include <logratio/correction/correction.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel_quantiles.hpp>
#include <logratio/quantiles/quantiles.hpp>

int warnings_v4_instantiate_kernels() {
    std::vector<float> t(64, -1.0f), r(64, -1.1f), w(64), old(64, -1.05f);
    std::vector<unsigned char> m(64, 1), km(64);
    auto view = logratio::paired_view<float>::padded(t.data(), r.data(), m.data(), 8, 8);
    auto split = logratio::compute_mismatch_split(view, old.data());
    logratio::panel p = logratio::compute_panel(view);
    logratio::add_panel_quantiles(p, view);
    logratio::correction_options o;
    auto c = logratio::correct(view, o, w.data(), km.data());
    std::vector<float> logits(2 * 16, 0.5f);
    std::int64_t tokens[2] = {1, 2};
    logratio::logits_view<float> lv(logits.data(), 2, 16);
    logratio::logits_row rows[2];
    logratio::compare_logits(lv, lv, tokens, rows);
    return static_cast<int>(c.tokens + split.tokens + p.tokens);
}
