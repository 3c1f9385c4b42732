// split_mismatch: the mismatch split into its numeric and lag parts.
#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

py::dict part_dict(const logratio::mismatch_part& p) {
    py::dict d;
    d["delta_mean"] = p.delta_mean;
    d["delta_abs_mean"] = p.delta_abs_mean;
    d["delta_std"] = p.delta_std;
    d["kl_k3"] = p.kl_k3;
    return d;
}

py::dict split_mismatch(py::object train, py::object rollout, py::object old, py::object mask, py::object cu_seqlens,
                        long threads, const std::string& nonfinite) {
    const unsigned nt = check_threads(threads);
    logratio::panel_options o;
    o.nonfinite = parse_nonfinite(nonfinite);
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens, old, "train", "rollout", "mask", "old");
    logratio::mismatch_split s;
    {
        py::gil_scoped_release nogil;
        s = visit(in, [&](const auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            return logratio::dispatch::compute_mismatch_split(v, static_cast<const T*>(in.old_data), o, nt);
        });
    }
    py::dict d;
    d["tokens"] = s.tokens;
    d["total"] = part_dict(s.total);
    d["numeric"] = part_dict(s.numeric);
    d["lag"] = part_dict(s.lag);
    return d;
}

}  // namespace

void bind_split(py::module_& m) {
    m.def("split_mismatch", &split_mismatch, py::arg("train"), py::arg("rollout"), py::arg("old"),
          py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none(), py::arg("threads") = 1,
          py::arg("nonfinite") = "raise");
}

}  // namespace logratio_py
