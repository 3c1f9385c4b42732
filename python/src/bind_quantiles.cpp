// quantiles: exact quantiles (numpy's methods) of delta, |delta| or rho.
#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

logratio::quantile_options options(const std::string& method, const std::string& nonfinite) {
    logratio::quantile_options o;
    try {
        o.method = logratio::parse_quantile_method(method);
    } catch (const logratio::error& e) {
        throw py::value_error(std::string("method: ") + e.what());
    }
    o.nonfinite = parse_nonfinite(nonfinite);
    return o;
}

logratio::quantile_of quantity(const std::string& of) {
    try {
        return logratio::parse_quantile_of(of);
    } catch (const logratio::error& e) {
        throw py::value_error(std::string("of: ") + e.what());
    }
}

std::vector<double> run(const paired_input& in, logratio::quantile_of what, const std::vector<double>& q,
                        const logratio::quantile_options& o) {
    return visit(in, [&](const auto& v) { return logratio::dispatch::quantiles(v, what, q, o); });
}

py::array_t<double> quantiles(py::object train, py::object rollout, py::object mask, py::object cu_seqlens,
                              const std::vector<double>& q, const std::string& of, const std::string& method,
                              const std::string& nonfinite) {
    const auto what = quantity(of);
    const auto o = options(method, nonfinite);
    for (std::size_t i = 0; i < q.size(); ++i)
        if (!(q[i] >= 0.0 && q[i] <= 1.0))
            throw py::value_error("q[" + std::to_string(i) + "] = " + std::string(py::repr(py::float_(q[i]))) +
                                  " is outside [0, 1]");
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens);
    std::vector<double> out;
    {
        py::gil_scoped_release nogil;
        out = run(in, what, q, o);
    }
    return py::array_t<double>(py::ssize_t(out.size()), out.data());
}

}  // namespace

void bind_quantiles(py::module_& m) {
    m.def("quantiles", &quantiles, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("q") = std::vector<double>{0.5, 0.9, 0.99, 0.999},
          py::arg("of") = "delta", py::arg("method") = "linear", py::arg("nonfinite") = "raise");
    m.def("_time_quantiles",
          [](py::object train, py::object rollout, py::object mask, const std::vector<double>& q,
             const std::string& of, int repeat) {
              const auto what = quantity(of);
              const auto o = options("linear", "raise");
              const paired_input in = read_paired(train, rollout, mask, py::none());
              return best_seconds(repeat, [&] { run(in, what, q, o); });
          },
          py::arg("train"), py::arg("rollout"), py::arg("mask"), py::arg("q"), py::arg("of") = "delta",
          py::arg("repeat") = 5);
}

}  // namespace logratio_py
