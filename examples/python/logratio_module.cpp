// Python access to logratio (pybind11): the panel, the IS correction and the
// exact quantiles over numpy arrays, without copying them (buffer protocol;
// C-contiguous float32, float64, float16, or uint16 holding bf16 bits; masks
// bool/uint8 or float32), with the GIL released while the kernels run. The
// panel state serializes to bytes that merge across processes (e.g.
// torch.distributed.all_gather_object), see distributed.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <logratio/logratio.hpp>

namespace py = pybind11;

namespace {

enum class vt { f32, f64, f16, bf16 };

struct inputs {
    py::buffer_info train, rollout;
    std::optional<py::buffer_info> mask, offsets;
    vt type = vt::f32;
    bool float_mask = false;
};

py::buffer_info contiguous(const py::object& o, const char* name) {
    py::buffer b = py::reinterpret_borrow<py::buffer>(o);
    py::buffer_info i = b.request();
    py::ssize_t expect = i.itemsize;
    for (py::ssize_t d = i.ndim - 1; d >= 0; --d) {
        if (i.shape[std::size_t(d)] > 1 && i.strides[std::size_t(d)] != expect)
            throw py::value_error(std::string(name) + ": must be C-contiguous (use np.ascontiguousarray)");
        expect *= i.shape[std::size_t(d)];
    }
    return i;
}

vt value_type(const py::buffer_info& i, const char* name) {
    if (i.format == py::format_descriptor<float>::format()) return vt::f32;
    if (i.format == py::format_descriptor<double>::format()) return vt::f64;
    if (i.format == "e") return vt::f16;
    if (i.format == py::format_descriptor<std::uint16_t>::format() || i.format == "H") return vt::bf16;
    throw py::type_error(std::string(name) + ": dtype '" + i.format +
                         "' not supported (float32, float64, float16, or uint16 holding bfloat16 bits)");
}

inputs read_inputs(const py::object& train, const py::object& rollout, const py::object& mask,
                   const py::object& cu_seqlens) {
    inputs in{contiguous(train, "train"), contiguous(rollout, "rollout"), std::nullopt, std::nullopt};
    in.type = value_type(in.train, "train");
    if (value_type(in.rollout, "rollout") != in.type || in.train.itemsize != in.rollout.itemsize)
        throw py::type_error("dtype mismatch: train is '" + in.train.format + "', rollout is '" + in.rollout.format + "'");
    if (in.train.shape != in.rollout.shape) throw py::value_error("shape mismatch between train and rollout");
    if (!mask.is_none()) {
        in.mask = contiguous(mask, "mask");
        const auto& f = in.mask->format;
        if (f == "?" || f == "B" || f == "b") in.float_mask = false;
        else if (f == "f") in.float_mask = true;
        else throw py::type_error("mask: dtype '" + f + "' not supported (bool, uint8, int8 or float32)");
        if (in.mask->shape != in.train.shape) throw py::value_error("shape mismatch between mask and train");
    }
    if (!cu_seqlens.is_none()) {
        in.offsets = contiguous(cu_seqlens, "cu_seqlens");
        if (in.offsets->ndim != 1) throw py::value_error("cu_seqlens must be 1-D");
        if (in.offsets->format != "q" && in.offsets->format != "l" && in.offsets->format != "i")
            throw py::type_error("cu_seqlens: dtype must be int32 or int64");
        if (in.train.ndim != 1) throw py::value_error("packed layout (cu_seqlens given): train must be 1-D");
    } else {
        if (in.train.ndim != 2) throw py::value_error("padded layout: train must be [B, T] (or give cu_seqlens)");
        if (!in.mask) throw py::value_error("padded layout needs a mask");
    }
    return in;
}

// Calls f(view) with the concrete element and mask types.
template <class T, class M, class F>
void with_view_m(const inputs& in, F&& f) {
    const T* tr = static_cast<const T*>(in.train.ptr);
    const T* ro = static_cast<const T*>(in.rollout.ptr);
    const M* mk = in.mask ? static_cast<const M*>(in.mask->ptr) : nullptr;
    if (in.offsets) {
        const auto n = std::uint64_t(in.train.size), no = std::uint64_t(in.offsets->size);
        if (in.offsets->itemsize == 8)
            f(logratio::paired_view<T, M>::packed(tr, ro, n, static_cast<const std::int64_t*>(in.offsets->ptr), no, mk));
        else
            f(logratio::paired_view<T, M>::packed(tr, ro, n, static_cast<const std::int32_t*>(in.offsets->ptr), no, mk));
    } else {
        f(logratio::paired_view<T, M>::padded(tr, ro, mk, std::uint64_t(in.train.shape[0]),
                                              std::uint64_t(in.train.shape[1])));
    }
}
template <class T, class F>
void with_view_t(const inputs& in, F&& f) {
    if (in.float_mask) with_view_m<T, float>(in, f);
    else with_view_m<T, std::uint8_t>(in, f);
}
template <class F>
void with_view(const inputs& in, F&& f) {
    switch (in.type) {
        case vt::f32: return with_view_t<float>(in, f);
        case vt::f64: return with_view_t<double>(in, f);
        case vt::f16: return with_view_t<logratio::float16>(in, f);
        case vt::bf16: return with_view_t<logratio::bfloat16>(in, f);
    }
}

py::dict panel_dict(const logratio::panel& p) {
    py::dict d;
    for (const auto& e : logratio::panel_entries(p)) {
        if (e.first == "tokens" || e.first == "sequences") d[e.first.c_str()] = std::uint64_t(*e.second);
        else if (e.second) d[e.first.c_str()] = *e.second;
        else d[e.first.c_str()] = py::none();
    }
    if (p.nonfinite_tokens) d["nonfinite_tokens"] = p.nonfinite_tokens;
    return d;
}

logratio::panel_options panel_opts(const std::string& nonfinite) {
    logratio::panel_options o;
    if (nonfinite == "omit") o.nonfinite = logratio::nonfinite_policy::omit;
    else if (nonfinite != "raise") throw py::value_error("nonfinite must be 'raise' or 'omit'");
    return o;
}

py::dict panel(py::object train, py::object rollout, py::object mask, py::object cu_seqlens, bool quantiles,
               unsigned threads, const std::string& nonfinite) {
    const inputs in = read_inputs(train, rollout, mask, cu_seqlens);
    const auto o = panel_opts(nonfinite);
    logratio::panel p;
    {
        py::gil_scoped_release nogil;
        with_view(in, [&](const auto& v) {
            p = logratio::compute_panel(v, o, threads);
            if (quantiles) logratio::add_panel_quantiles(p, v, o.nonfinite);
        });
    }
    return panel_dict(p);
}

py::bytes panel_state(py::object train, py::object rollout, py::object mask, py::object cu_seqlens) {
    const inputs in = read_inputs(train, rollout, mask, cu_seqlens);
    std::vector<std::uint8_t> bytes;
    {
        py::gil_scoped_release nogil;
        with_view(in, [&](const auto& v) { bytes = logratio::accumulate_panel(v).serialize(); });
    }
    return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

py::dict merge_panel_states(const std::vector<py::bytes>& states) {
    if (states.empty()) throw py::value_error("merge_panel_states: no states");
    logratio::panel_accumulator total;
    bool first = true;
    for (const auto& b : states) {
        const std::string s = b;
        auto a = logratio::panel_accumulator::deserialize(s.data(), s.size());
        if (first) total = a;
        else total.merge(a);
        first = false;
    }
    return panel_dict(total.finish());
}

py::tuple correct(py::object train, py::object rollout, py::object mask, py::object cu_seqlens,
                  std::optional<std::string> is_level, double is_threshold, std::optional<double> is_lower,
                  bool batch_normalize, std::optional<std::string> rs, std::optional<std::string> rs_threshold,
                  std::optional<double> rs_threshold_lower, std::optional<double> veto, unsigned threads) {
    const inputs in = read_inputs(train, rollout, mask, cu_seqlens);
    logratio::correction_options o;
    if (is_level) o.is = logratio::is_options(logratio::parse_is_level(*is_level), is_threshold, is_lower, batch_normalize);
    if (rs) {
        if (!rs_threshold) throw py::value_error("rs needs rs_threshold");
        o.rejection = logratio::parse_rejection(*rs, *rs_threshold, rs_threshold_lower);
    }
    o.veto = veto;
    o.validate();
    std::vector<py::ssize_t> shape(in.train.shape.begin(), in.train.shape.end());
    py::array_t<float> weights(shape);
    py::array_t<std::uint8_t> keep(shape);
    float* w = weights.mutable_data();
    std::uint8_t* k = keep.mutable_data();
    logratio::correction_result r;
    {
        py::gil_scoped_release nogil;
        with_view(in, [&](const auto& v) { r = logratio::correct(v, o, w, k, threads); });
    }
    py::dict metrics;
    for (const auto& e : logratio::correction_entries(r)) metrics[e.first.c_str()] = e.second;
    return py::make_tuple(weights, keep, metrics);
}

py::array_t<double> quantiles(py::object train, py::object rollout, py::object mask, py::object cu_seqlens,
                              const std::vector<double>& q, const std::string& of, const std::string& method,
                              const std::string& nonfinite) {
    const inputs in = read_inputs(train, rollout, mask, cu_seqlens);
    const auto what = logratio::parse_quantile_of(of);
    logratio::quantile_options qo;
    qo.method = logratio::parse_quantile_method(method);
    qo.nonfinite = panel_opts(nonfinite).nonfinite;
    std::vector<double> out;
    {
        py::gil_scoped_release nogil;
        with_view(in, [&](const auto& v) { out = logratio::quantiles(v, what, q, qo); });
    }
    return py::array_t<double>(py::ssize_t(out.size()), out.data());
}

}  // namespace

PYBIND11_MODULE(logratio, m) {
    m.doc() = "logratio: train-inference mismatch statistics (panel, IS correction, quantiles) on numpy arrays";
    m.attr("__version__") = LOGRATIO_VERSION_STRING;
    py::register_exception<logratio::error>(m, "Error", PyExc_ValueError);
    const auto a = [](const char* n) { return py::arg(n); };
    m.def("panel", &panel, "The ratio panel (SPEC.md keys) of paired log-probs", a("train"), a("rollout"),
          py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none(), py::arg("quantiles") = true,
          py::arg("threads") = 1u, py::arg("nonfinite") = "raise");
    m.def("panel_state", &panel_state, "Serialized panel accumulator (bytes) of one shard", a("train"), a("rollout"),
          py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none());
    m.def("merge_panel_states", &merge_panel_states, "Merge serialized panel states (in order) into the panel",
          a("states"));
    m.def("correct", &correct,
          "IS weights, response mask and verl's metrics: returns (weights float32, response_mask uint8, metrics)",
          a("train"), a("rollout"), py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none(),
          py::arg("is_level") = py::none(), py::arg("is_threshold") = 2.0, py::arg("is_lower") = py::none(),
          py::arg("batch_normalize") = false, py::arg("rs") = py::none(), py::arg("rs_threshold") = py::none(),
          py::arg("rs_threshold_lower") = py::none(), py::arg("veto") = py::none(), py::arg("threads") = 1u);
    m.def("quantiles", &quantiles, "Exact quantiles (numpy methods) of delta, abs_delta or ratio", a("train"),
          a("rollout"), py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none(),
          py::arg("q") = std::vector<double>{0.5, 0.9, 0.99, 0.999}, py::arg("of") = "delta",
          py::arg("method") = "linear", py::arg("nonfinite") = "raise");
}
