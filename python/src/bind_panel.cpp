// panel, panel_state, merge_panel_states.
#include <logratio/correction/flavour.hpp>

#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

py::dict panel_dict(const logratio::panel& p) {
    py::dict d;
    for (const auto& e : logratio::panel_entries(p)) {
        if (e.first == "tokens" || e.first == "sequences") d[e.first.c_str()] = std::uint64_t(*e.second);
        else if (e.second) d[e.first.c_str()] = *e.second;
        else d[e.first.c_str()] = py::none();
    }
    d["nonfinite_tokens"] = p.nonfinite_tokens;
    // Where the largest |delta| is: row (sequence) and column (position).
    if (p.tokens) {
        d["delta_abs_max_row"] = p.delta_abs_max_at.sequence;
        d["delta_abs_max_column"] = p.delta_abs_max_at.position;
    } else {
        d["delta_abs_max_row"] = py::none();
        d["delta_abs_max_column"] = py::none();
    }
    return d;
}

logratio::panel run_panel(const paired_input& in, bool quantiles, unsigned threads,
                          const logratio::panel_options& o) {
    return visit(in, [&](const auto& v) {
        if (quantiles) return logratio::dispatch::compute_panel_with_quantiles(v, o, threads);  // one pass
        return logratio::dispatch::compute_panel(v, o, threads);
    });
}

logratio::panel_options options(const std::string& nonfinite) {
    logratio::panel_options o;
    o.nonfinite = parse_nonfinite(nonfinite);
    return o;
}

py::dict panel(py::object train, py::object rollout, py::object mask, py::object cu_seqlens, bool quantiles,
               long threads, const std::string& nonfinite, const std::string& flavour) {
    const unsigned nt = check_threads(threads);
    const auto o = options(nonfinite);
    logratio::framework fw = logratio::framework::verl;
    try {
        fw = logratio::parse_framework(flavour);
    } catch (const logratio::error& e) {
        throw py::value_error(std::string("flavour: ") + e.what());
    }
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens);
    logratio::panel p;
    logratio::metric_entries framework_metrics;
    {
        py::gil_scoped_release nogil;
        p = run_panel(in, quantiles, nt, o);
        // slime's / TRL's own mismatch metrics (flavour.hpp), as `logratio panel --flavour`
        if (fw != logratio::framework::verl)
            framework_metrics = visit(in, [&](const auto& v) { return logratio::framework_mismatch_entries(v, fw); });
    }
    py::dict d = panel_dict(p);
    if (fw != logratio::framework::verl) {
        py::dict f;
        for (const auto& e : framework_metrics) f[e.first.c_str()] = e.second;
        d[flavour.c_str()] = f;
    }
    return d;
}

py::bytes panel_state(py::object train, py::object rollout, py::object mask, py::object cu_seqlens,
                      const std::string& nonfinite) {
    const auto o = options(nonfinite);
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens);
    std::vector<std::uint8_t> bytes;
    {
        py::gil_scoped_release nogil;
        bytes = visit(in, [&](const auto& v) { return logratio::dispatch::accumulate_panel(v, o).serialize(); });
    }
    return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

py::dict merge_panel_states(py::iterable states) {
    logratio::panel_accumulator total;
    std::size_t i = 0;
    for (py::handle h : states) {
        if (!py::isinstance<py::bytes>(h))
            throw py::type_error("states[" + std::to_string(i) + "]: expected bytes from panel_state(), got " +
                                 std::string(py::str(py::type::handle_of(h).attr("__name__"))));
        const std::string s = py::reinterpret_borrow<py::bytes>(h);
        logratio::panel_accumulator a;
        try {
            a = logratio::panel_accumulator::deserialize(s.data(), s.size());
        } catch (const logratio::error& e) {
            throw py::value_error("states[" + std::to_string(i) + "]: " + e.what());
        }
        if (i == 0) total = a;
        else total.merge(a);
        ++i;
    }
    if (i == 0) throw py::value_error("merge_panel_states: states is empty");
    return panel_dict(total.finish());
}

}  // namespace

void bind_panel(py::module_& m) {
    m.def("panel", &panel, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("quantiles") = true, py::arg("threads") = 1,
          py::arg("nonfinite") = "raise", py::arg("flavour") = "verl");
    m.def("panel_state", &panel_state, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("nonfinite") = "raise");
    m.def("merge_panel_states", &merge_panel_states, py::arg("states"));
    m.def("_time_panel",
          [](py::object train, py::object rollout, py::object mask, py::object cu_seqlens, bool quantiles, long threads,
             int repeat) {
              const paired_input in = read_paired(train, rollout, mask, cu_seqlens);
              const auto o = options("raise");
              const unsigned nt = check_threads(threads);
              return best_seconds(repeat, [&] { run_panel(in, quantiles, nt, o); });
          },
          py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(), py::arg("cu_seqlens") = py::none(),
          py::arg("quantiles") = false, py::arg("threads") = 1, py::arg("repeat") = 5);
}

}  // namespace logratio_py
