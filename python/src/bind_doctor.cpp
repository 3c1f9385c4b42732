// diagnose: logratio doctor's findings and breakdowns (include/logratio/doctor/),
// at the CPU's widest SIMD level (logratio::dispatch).
// The result is the JSON text `logratio doctor --json` prints (one writer,
// tools/logratio/output/doctor_json.hpp), parsed by logratio.diagnose().
#include <nlohmann/json.hpp>

#include <logratio/dispatch/dispatch.hpp>

#include "bindings.hpp"
#include "output/doctor_json.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

py::tuple diagnose(py::object train, py::object rollout, py::object mask, py::object cu_seqlens, py::object old,
                   long threads) {
    logratio::doctor::diagnose_options o;
    o.threads = check_threads(threads);
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens, old, "train", "rollout", "mask", "old");
    std::string text;
    int worst = 0;
    {
        py::gil_scoped_release nogil;
        o.old_logprobs = in.old_data;
        const auto d = visit(in, [&](const auto& v) { return logratio::dispatch::diagnose(v, o); });
        worst = static_cast<int>(d.worst());
        text = logratio_cli::diagnosis_json(d).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
    return py::make_tuple(text, worst);
}

}  // namespace

void bind_doctor(py::module_& m) {
    m.def("diagnose", &diagnose, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("old") = py::none(), py::arg("threads") = 1);
}

}  // namespace logratio_py
