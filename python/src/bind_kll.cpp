// KLLSketch: the mergeable quantile sketch (kll_sketch<double>) as a class.
#include <logratio/quantiles/kll_sketch.hpp>

#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

using sketch = logratio::kll_sketch<double>;

/// Converts a run of elements of a 1-D (or any-shape contiguous) array to double.
void update_from(sketch& s, const tensor_arg& t) {
    if (!t.c_contiguous())
        throw py::value_error(t.describe() + ": must be contiguous (use .contiguous() / np.ascontiguousarray)");
    const std::size_t n = std::size_t(t.numel());
    if (t.dtype == dtype_code::f64) {
        py::gil_scoped_release nogil;
        s.update(static_cast<const double*>(t.data), n);
        return;
    }
    if (!is_logprob_dtype(t.dtype))
        throw py::type_error(t.describe() + ": dtype " + t.dtype_name + " is not supported (" + logprob_dtypes_text() +
                             ")");
    py::gil_scoped_release nogil;
    std::vector<double> chunk;
    constexpr std::size_t step = std::size_t(1) << 16;
    for (std::size_t i = 0; i < n; i += step) {
        const std::size_t m = std::min(step, n - i);
        chunk.resize(m);
        for (std::size_t k = 0; k < m; ++k) {
            switch (t.dtype) {
                case dtype_code::f32: chunk[k] = static_cast<const float*>(t.data)[i + k]; break;
                case dtype_code::f16: chunk[k] = logratio::to_float(static_cast<const logratio::float16*>(t.data)[i + k]); break;
                default: chunk[k] = logratio::to_float(static_cast<const logratio::bfloat16*>(t.data)[i + k]); break;
            }
        }
        s.update(chunk.data(), m);
    }
}

}  // namespace

void bind_kll(py::module_& m) {
    py::class_<sketch>(m, "KLLSketch")
        .def(py::init([](int k, std::uint64_t seed) {
                 if (k < int(sketch::min_k) || k > 65535)
                     throw py::value_error("k must be in [" + std::to_string(sketch::min_k) + ", 65535], got " +
                                           std::to_string(k));
                 return sketch(std::uint16_t(k), seed);
             }),
             py::arg("k") = int(sketch::default_k), py::arg("seed") = std::uint64_t(0x9E3779B97F4A7C15ull))
        .def("update",
             [](sketch& s, py::object values) {
                 if (py::isinstance<py::float_>(values) || py::isinstance<py::int_>(values)) {
                     s.update(values.cast<double>());
                     return;
                 }
                 update_from(s, read_tensor(values, "values"));
             },
             py::arg("values"))
        .def("merge", [](sketch& s, const sketch& o) { s.merge(o); }, py::arg("other"))
        .def("quantile",
             [](const sketch& s, double q) {
                 if (!(q >= 0.0 && q <= 1.0)) throw py::value_error("q must be in [0, 1], got " + std::to_string(q));
                 return s.quantile(q);
             },
             py::arg("q"))
        .def("quantiles",
             [](const sketch& s, const std::vector<double>& qs) {
                 for (double q : qs)
                     if (!(q >= 0.0 && q <= 1.0)) throw py::value_error("q values must be in [0, 1]");
                 return s.quantiles(qs);
             },
             py::arg("q"))
        .def("rank",
             [](const sketch& s, double x, bool inclusive) {
                 return s.rank(x, inclusive);
             },
             py::arg("x"), py::arg("inclusive") = true)
        .def_property_readonly("n", &sketch::n)
        .def_property_readonly("k", &sketch::k)
        .def("normalized_rank_error", &sketch::normalized_rank_error, py::arg("confidence") = 0.99)
        .def("serialize",
             [](const sketch& s) {
                 const auto b = s.serialize();
                 return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
             })
        .def_static("deserialize",
                    [](py::bytes b) {
                        const std::string s = b;
                        return sketch::deserialize(s.data(), s.size());
                    },
                    py::arg("data"))
        .def("__len__", [](const sketch& s) { return s.n(); })
        .def("__repr__", [](const sketch& s) {
            return "KLLSketch(k=" + std::to_string(s.k()) + ", n=" + std::to_string(s.n()) + ")";
        });
}

}  // namespace logratio_py
