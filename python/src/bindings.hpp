#pragma once
// The module's components: each bind_<name>.cpp defines bind_<name>(m).
// A new component (e.g. bind_doctor.cpp) adds its line here and in
// module.cpp, and its file to python/CMakeLists.txt.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include <logratio/dispatch/dispatch.hpp>

namespace logratio_py {
namespace py = pybind11;

void bind_dispatch(py::module_& m);
void bind_panel(py::module_& m);
void bind_correct(py::module_& m);
void bind_quantiles(py::module_& m);
void bind_split(py::module_& m);
void bind_logits(py::module_& m);
void bind_kll(py::module_& m);
void bind_doctor(py::module_& m);

/// "raise" / "omit" -> the policy (ValueError naming `nonfinite` otherwise).
logratio::nonfinite_policy parse_nonfinite(const std::string& s);

/// Seconds of the fastest of `repeat` runs of f() (the GIL released):
/// the kernel time the benchmark compares the Python call with.
template <class F>
double best_seconds(int repeat, F&& f);

/// A new numpy array of `shape` with element type E (C-contiguous).
template <class E>
py::array_t<E> new_array(const std::vector<std::int64_t>& shape) {
    std::vector<py::ssize_t> s(shape.begin(), shape.end());
    return py::array_t<E>(s);
}

}  // namespace logratio_py

#include <chrono>
namespace logratio_py {
template <class F>
double best_seconds(int repeat, F&& f) {
    if (repeat < 1) throw py::value_error("repeat must be >= 1");
    double best = 1e300;
    py::gil_scoped_release nogil;
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        best = std::min(best, dt.count());
    }
    return best;
}
}  // namespace logratio_py
