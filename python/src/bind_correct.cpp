// correct: verl's rollout correction (IS weights, rejection mask, metrics).
#include <cmath>
#include <optional>

#include "bindings.hpp"
#include "flavour_args.hpp"
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

/// flavour / mode / mode_options (slime's and TRL's own argument names, as
/// `logratio correct --mode` takes them) onto the options, through the
/// CLI's one mapping (flavour_args.hpp).
void apply_flavour(correct_args& a, const std::string& flavour, const std::string& mode, py::object mode_options) {
    logratio_cli::flavour_args f;
    f.flavour = flavour;
    f.mode = mode;
    if (!mode_options.is_none()) {
        if (!py::isinstance<py::dict>(mode_options))
            throw py::type_error("mode_options: expected a dict such as {'tis_clip': 2.0}, got " +
                                 std::string(py::str(py::type::handle_of(mode_options).attr("__name__"))));
        for (auto item : py::reinterpret_borrow<py::dict>(mode_options)) {
            const std::string k = py::str(item.first);
            const py::handle v = item.second;
            auto num = [&] { return v.is_none() ? std::optional<double>() : std::optional<double>(v.cast<double>()); };
            if (k == "tis_clip") f.tis_clip = num();
            else if (k == "tis_clip_low") f.tis_clip_low = num();
            else if (k == "tis_upper_bound") f.tis_upper_bound = num();
            else if (k == "tis_lower_bound") f.tis_lower_bound = num();
            else if (k == "rs_lower_bound") f.rs_lower_bound = num();
            else if (k == "rs_upper_bound") f.rs_upper_bound = num();
            else if (k == "rs_veto_threshold") f.rs_veto_threshold = num();
            else if (k == "rs_level") f.rs_level = v.cast<std::string>();
            else if (k == "use_rs") f.use_rs = v.cast<bool>();
            else if (k == "tis_batch_normalize") f.tis_batch_normalize = v.cast<bool>();
            else if (k == "calculate_per_token_loss") f.calculate_per_token_loss = v.cast<bool>();
            else if (k == "clip_min") f.clip_min = num();
            else if (k == "clip_max") f.clip_max = num();
            else
                throw py::value_error("mode_options: unknown setting '" + k +
                                      "' (slime: tis_clip, tis_clip_low, tis_upper_bound, tis_lower_bound, use_rs, "
                                      "rs_level, rs_lower_bound, rs_upper_bound, rs_veto_threshold, "
                                      "tis_batch_normalize, calculate_per_token_loss; TRL: clip_min, clip_max)");
        }
    }
    named_option("flavour / mode / mode_options", [&] {
        f.apply(a.o);
        a.o.validate();
    });
    // slime without a mode computes its mismatch metrics only: no weights
    if (a.o.mode && !(a.o.mode->fw == logratio::framework::slime &&
                      a.o.mode->slime == logratio::slime_kind::metrics_only))
        a.want_weights = true;
}

logratio::correction_result run(const paired_input& in, const logratio::correction_options& o, float* w,
                                std::uint8_t* k, unsigned threads) {
    return visit(in, [&](const auto& v) { return logratio::dispatch::correct(v, o, w, k, threads); });
}

py::tuple correct(py::object train, py::object rollout, py::object mask, py::object cu_seqlens, py::object rollout_is,
                  py::object rollout_is_threshold, std::optional<double> rollout_is_threshold_lower,
                  bool rollout_is_batch_normalize, py::object rollout_rs, py::object rollout_rs_threshold,
                  std::optional<double> rollout_rs_threshold_lower, std::optional<double> rollout_token_veto_threshold,
                  long threads, const std::string& prefix, const std::string& flavour, const std::string& mode,
                  py::object mode_options, const std::string& nonfinite) {
    const unsigned nt = check_threads(threads);
    correct_args a = options(rollout_is, rollout_is_threshold, rollout_is_threshold_lower, rollout_is_batch_normalize,
                             rollout_rs, rollout_rs_threshold, rollout_rs_threshold_lower,
                             rollout_token_veto_threshold);
    a.o.nonfinite = parse_nonfinite(nonfinite);
    if (!flavour.empty() || !mode.empty() || !mode_options.is_none()) apply_flavour(a, flavour, mode, mode_options);
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
    // One empty-input rule with panel(): a metric with no token to be
    // computed over (NaN in C++, null in the CLI's JSON) is None.
    for (const auto& e : logratio::correction_entries(r, prefix))
        metrics[e.first.c_str()] = std::isnan(e.second) ? py::object(py::none()) : py::object(py::float_(e.second));
    if (a.o.nonfinite == logratio::nonfinite_policy::omit)  // the NaN/Inf tokens left out (not a verl metric)
        metrics[(prefix + "nonfinite_tokens").c_str()] = r.nonfinite_tokens;
    return py::make_tuple(weights, keep, metrics);
}

}  // namespace

void bind_correct(py::module_& m) {
    m.def("correct", &correct, py::arg("train"), py::arg("rollout"), py::arg("mask") = py::none(),
          py::arg("cu_seqlens") = py::none(), py::arg("rollout_is") = py::none(),
          py::arg("rollout_is_threshold") = 2.0, py::arg("rollout_is_threshold_lower") = py::none(),
          py::arg("rollout_is_batch_normalize") = false, py::arg("rollout_rs") = py::none(),
          py::arg("rollout_rs_threshold") = py::none(), py::arg("rollout_rs_threshold_lower") = py::none(),
          py::arg("rollout_token_veto_threshold") = py::none(), py::arg("threads") = 1, py::arg("prefix") = "",
          py::arg("flavour") = "", py::arg("mode") = "", py::arg("mode_options") = py::none(),
          py::arg("nonfinite") = "raise");
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
