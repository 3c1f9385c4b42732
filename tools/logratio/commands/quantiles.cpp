// `logratio quantiles`: exact (numpy's methods) or sketched (KLL)
// quantiles of delta, |delta| or the ratio.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/quantiles/kll_sketch.hpp>
#include <logratio/quantiles/quantiles.hpp>

#include "../kernels.hpp"
#include "../output/command_json.hpp"
#include "command.hpp"
#include "inputs.hpp"

namespace logratio_cli {
namespace {

struct quantile_args : input_args {
    bool json = false;
    std::string of = "delta", method = "linear", nonfinite = "raise";
    std::vector<double> q{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
    unsigned sketch = 0;
};

int run_quantiles(const quantile_args& a) {
    loaded_inputs L;
    load_inputs(a, L);
    const auto what = logratio::parse_quantile_of(a.of);
    logratio::quantile_options qo;
    qo.method = logratio::parse_quantile_method(a.method);
    qo.nonfinite = policy(a.nonfinite);
    std::vector<double> values;
    double bound = 0;
    std::uint64_t count = 0;
    logratio_cli::with_panel_view(L.in, [&](const auto& view) {
        logratio::quantile_workspace ws;
        if (a.sketch == 0) {
            values = logratio_cli::kernels::quantiles(view, what, a.q, qo);
            count = logratio_cli::selected_tokens(view);
            return;
        }
        if (a.sketch < logratio::kll_sketch<double>::min_k || a.sketch > 65535)
            throw logratio::argument_error(logratio::detail::concat("--sketch K: K = ", a.sketch, " must be in [8, 65535]"));
        logratio::gather_quantity(view, what, qo, ws);
        logratio::kll_sketch<double> sk(static_cast<std::uint16_t>(a.sketch));
        sk.update(ws.values.data(), ws.values.size());
        count = sk.n();
        if (count) values = sk.quantiles(a.q);
        bound = sk.normalized_rank_error();
    });
    if (a.json) {
        std::cout << quantiles_json_text(a.of, a.method, a.q, values, a.sketch, bound) << "\n";
        return 0;
    }
    std::printf("%s quantiles (%s) of %llu tokens\n", a.of.c_str(), a.sketch ? "kll sketch" : a.method.c_str(),
                static_cast<unsigned long long>(count));
    for (std::size_t i = 0; i < a.q.size(); ++i) {
        if (values.empty() || std::isnan(values[i])) std::printf("  q%-10s -\n", logratio::format_g(a.q[i]).c_str());
        else std::printf("  q%-10s % .10g\n", logratio::format_g(a.q[i]).c_str(), values[i]);
    }
    if (a.sketch) std::printf("  k %u, rank_error_bound %.6g (99%% confidence)\n", a.sketch, bound);
    return 0;
}

}  // namespace

command_runner setup_quantiles(CLI::App& c) {
    auto args = std::make_shared<quantile_args>();
    quantile_args& a = *args;
    add_input_options(&c, a);
    c.add_option("--of", a.of, "delta (default), abs_delta or ratio")
        ->check(CLI::IsMember({"delta", "abs_delta", "ratio"}));
    c.add_option("--q", a.q, "probabilities in [0, 1], comma-separated")->delimiter(',');
    c.add_option("--method", a.method, "numpy.quantile method (default linear)");
    c.add_option("--sketch", a.sketch, "use a KLL sketch with this k instead, and print rank_error_bound");
    c.add_option("--nonfinite", a.nonfinite, "NaN/Inf log-probs: raise (default) or omit")
        ->check(CLI::IsMember({"raise", "omit"}));
    c.add_flag("--json", a.json, "one JSON object {of, method, quantiles{p: value}} (+ k, rank_error_bound)");
    return [args] { return run_quantiles(*args); };
}

}  // namespace logratio_cli
