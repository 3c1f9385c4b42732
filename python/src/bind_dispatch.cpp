// simd_level() and friends: which instruction-set level the kernels run.
#include "bindings.hpp"

namespace logratio_py {

logratio::nonfinite_policy parse_nonfinite(const std::string& s) {
    if (s == "raise") return logratio::nonfinite_policy::raise;
    if (s == "omit") return logratio::nonfinite_policy::omit;
    throw py::value_error("nonfinite must be 'raise' or 'omit', got '" + s + "'");
}

void bind_dispatch(py::module_& m) {
    m.def("simd_level", [] { return std::string(logratio::dispatch::simd_level()); });
    m.def("available_simd_levels", [] { return logratio::dispatch::available_simd_levels(); });
    m.def("set_simd_level", [](const std::string& name) { logratio::dispatch::set_simd_level(name); }, py::arg("name"));
}

}  // namespace logratio_py
