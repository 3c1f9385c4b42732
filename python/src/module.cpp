// logratio._logratio: the compiled part of the Python package (pybind11).
// The public API, its documentation and the torch/numpy output kinds are in
// python/logratio/__init__.py; this module takes tensors (tensor_arg.hpp),
// runs logratio::dispatch's kernels with the GIL released and returns
// numpy arrays and dicts.
#include <logratio/core/version.hpp>

#include "bindings.hpp"

PYBIND11_MODULE(_logratio, m) {
    namespace py = pybind11;
    m.doc() = "logratio's compiled kernels (use the logratio package, not this module)";
    m.attr("__version__") = LOGRATIO_VERSION_STRING;
    py::register_exception<logratio::error>(m, "Error", PyExc_ValueError);
    logratio_py::bind_dispatch(m);
    logratio_py::bind_panel(m);
    logratio_py::bind_correct(m);
    logratio_py::bind_quantiles(m);
    logratio_py::bind_split(m);
    logratio_py::bind_logits(m);
    logratio_py::bind_kll(m);
    logratio_py::bind_doctor(m);
}
