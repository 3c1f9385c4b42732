#pragma once
// The correction options the token-mode benchmarks time (bench_correction,
// bench_dispatch): a token IS weight truncated at 2, token k1 in [0.5, 2]
// and token k3 <= 0.01 rejection, a veto at 1e-4 -- every token-level
// option at once, so the short cut and the full step both run.
#include <logratio/correction/correction_options.hpp>

namespace bench {

inline logratio::correction_options token_options() {
    logratio::correction_options o;
    o.is = logratio::is_options(logratio::is_level::token, 2.0);
    o.rejection = logratio::parse_rejection("token_k1,token_k3", "0.5_2,0.01");
    o.veto = 1e-4;
    return o;
}

}  // namespace bench
