// correct: verl's rollout correction (IS weights, rejection mask, metrics).
#include <cmath>
#include <optional>

#include "bindings.hpp"
#include "paired_input.hpp"

namespace logratio_py {
namespace {

/// A threshold given as a str ("0.999_1.001", "1.05,0.003") or a number
/// (verl accepts both) as the text parse_rejection reads.
std::string threshold_text(py::handle t, const char* name) {
    if (py::isinstance<py::str>(t)) return t.cast<std::string>();
    if (py::isinstance<py::bool_>(t) || !(py::isinstance<py::float_>(t) || py::isinstance<py::int_>(t)))
        throw py::type_error(std::string(name) + ": expected a str such as '0.999_1.001' or a float, got " +
                             std::string(py::str(py::type::handle_of(t).attr("__name__"))));
    return py::repr(py::float_(t.cast<double>()));  // shortest round-trip form
}

/// rollout_is_threshold: a float, or a str "upper" / "lower_upper".
std::pair<double, std::optional<double>> is_thresholds(py::handle t) {
    if (py::isinstance<py::str>(t)) {
        const std::string s = t.cast<std::string>();
        const auto cut = s.find('_');
        try {
            if (cut == std::string::npos) return {std::stod(s), std::nullopt};
            return {std::stod(s.substr(cut + 1)), std::stod(s.substr(0, cut))};
        } catch (const std::exception&) {
            throw py::value_error("rollout_is_threshold: '" + s + "' is not a number or 'lower_upper'");
        }
    }
    if (py::isinstance<py::bool_>(t) || !(py::isinstance<py::float_>(t) || py::isinstance<py::int_>(t)))
        throw py::type_error("rollout_is_threshold: expected a float (or a str), got " +
                             std::string(py::str(py::type::handle_of(t).attr("__name__"))));
    return {t.cast<double>(), std::nullopt};
}

template <class F>
void named_option(const char* names, F&& f) {
    try {
        f();
    } catch (const logratio::error& e) {
        throw py::value_error(std::string(names) + ": " + e.what());
    }
}

struct correct_args {
    logratio::correction_options o;
    bool want_weights = false;
};

correct_args options(py::object rollout_is, py::object rollout_is_threshold, std::optional<double> is_lower,
                     bool batch_normalize, py::object rollout_rs, py::object rollout_rs_threshold,
                     std::optional<double> rs_lower, std::optional<double> veto) {
    correct_args a;
    if (!rollout_is.is_none()) {
        if (!py::isinstance<py::str>(rollout_is))
            throw py::type_error("rollout_is: expected 'token', 'sequence', 'geometric' or None");
        const auto thresholds = is_thresholds(rollout_is_threshold);
        const double upper = thresholds.first;
        const std::optional<double> lower = is_lower ? is_lower : thresholds.second;
        named_option("rollout_is / rollout_is_threshold", [&] {
            a.o.is = logratio::is_options(logratio::parse_is_level(rollout_is.cast<std::string>()), upper, lower,
                                          batch_normalize);
            a.o.is->validate();
        });
        a.want_weights = true;
    }
    if (!rollout_rs.is_none()) {
        if (!py::isinstance<py::str>(rollout_rs))
            throw py::type_error("rollout_rs: expected a str such as 'token_k1' or 'token_k1,seq_max_k3', or None");
        if (rollout_rs_threshold.is_none())
            throw py::value_error("rollout_rs_threshold: required when rollout_rs is given");
        const std::string t = threshold_text(rollout_rs_threshold, "rollout_rs_threshold");
        named_option("rollout_rs / rollout_rs_threshold", [&] {
            a.o.rejection = logratio::parse_rejection(rollout_rs.cast<std::string>(), t, rs_lower);
        });
    }
    a.o.veto = veto;
    named_option("correct() options", [&] { a.o.validate(); });
    return a;
}

logratio::correction_result run(const paired_input& in, const logratio::correction_options& o, float* w,
                                std::uint8_t* k, unsigned threads) {
    return visit(in, [&](const auto& v) { return logratio::dispatch::correct(v, o, w, k, threads); });
}

py::tuple correct(py::object train, py::object rollout, py::object mask, py::object cu_seqlens, py::object rollout_is,
                  py::object rollout_is_threshold, std::optional<double> rollout_is_threshold_lower,
                  bool rollout_is_batch_normalize, py::object rollout_rs, py::object rollout_rs_threshold,
                  std::optional<double> rollout_rs_threshold_lower, std::optional<double> rollout_token_veto_threshold,
                  long threads, const std::string& prefix) {
    const unsigned nt = check_threads(threads);
    const correct_args a = options(rollout_is, rollout_is_threshold, rollout_is_threshold_lower,
                                   rollout_is_batch_normalize, rollout_rs, rollout_rs_threshold,
                                   rollout_rs_threshold_lower, rollout_token_veto_threshold);
    const paired_input in = read_paired(train, rollout, mask, cu_seqlens);
    auto keep = new_array<std::uint8_t>(in.out_shape());
    py::object weights = py::none();
    py::array_t<float> w;
    if (a.want_weights) {
        w = new_array<float>(in.out_shape());
        weights = w;
    }
    logratio::correction_result r;
    {
        py::gil_scoped_release nogil;
        if (!in.strided_rows) {
            r = run(in, a.o, a.want_weights ? w.mutable_data() : nullptr, keep.mutable_data(), nt);
        } else {
            // The view spans the gaps between rows: write there, then compact.
            std::vector<float> ws(a.want_weights ? in.n : 0);
            std::vector<std::uint8_t> ks(in.n);
            r = run(in, a.o, a.want_weights ? ws.data() : nullptr, ks.data(), nt);
            if (a.want_weights) compact_rows(in, ws.data(), w.mutable_data());
            compact_rows(in, ks.data(), keep.mutable_data());
        }
    }
    py::dict metrics;
    for (const auto& e : logratio::correction_entries(r, prefix)) metrics[e.first.c_str()] = e.second;
    return py::make_tuple(weights, keep, metrics);
}

}  // namespace

void bind_correct(py::module_& m) {
    m.def("correct", &correct, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("rollout_is") = py::none(),
          py::arg("rollout_is_threshold") = 2.0, py::arg("rollout_is_threshold_lower") = py::none(),
          py::arg("rollout_is_batch_normalize") = false, py::arg("rollout_rs") = py::none(),
          py::arg("rollout_rs_threshold") = py::none(), py::arg("rollout_rs_threshold_lower") = py::none(),
          py::arg("rollout_token_veto_threshold") = py::none(), py::arg("threads") = 1, py::arg("prefix") = "");
    m.def("_time_correct",
          [](py::object train, py::object rollout, py::object mask, py::object rollout_is, py::object is_threshold,
             py::object rollout_rs, py::object rs_threshold, int repeat) {
              const correct_args a = options(rollout_is, is_threshold, std::nullopt, false, rollout_rs, rs_threshold,
                                             std::nullopt, std::nullopt);
              const paired_input in = read_paired(train, rollout, mask, py::none());
              std::vector<float> w(in.n);
              std::vector<std::uint8_t> k(in.n);
              return best_seconds(repeat, [&] { run(in, a.o, a.want_weights ? w.data() : nullptr, k.data(), 1); });
          },
          py::arg("train"), py::arg("rollout"), py::arg("mask"), py::arg("rollout_is") = py::none(),
          py::arg("rollout_is_threshold") = 2.0, py::arg("rollout_rs") = py::none(),
          py::arg("rollout_rs_threshold") = py::none(), py::arg("repeat") = 5);
}

}  // namespace logratio_py
