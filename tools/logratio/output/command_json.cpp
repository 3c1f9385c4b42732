#include "command_json.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include <logratio/doctor/diagnose.hpp>
#include <logratio/logits/logits.hpp>
#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel_accumulator.hpp>

#include "doctor_json.hpp"
#include "doctor_summary.hpp"

namespace logratio_cli {

namespace {

std::string text(const nlohmann::ordered_json& j) {
    return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json part_json(const logratio::mismatch_part& p) {
    return {{"delta_mean", p.delta_mean}, {"delta_abs_mean", p.delta_abs_mean}, {"delta_std", p.delta_std},
            {"kl_k3", p.kl_k3}};
}

}  // namespace

std::string panel_json_text(const logratio::panel& p, const logratio::mismatch_split* split,
                            const metric_values& flavour_metrics, const std::string& flavour) {
    nlohmann::ordered_json j;
    for (const auto& e : logratio::panel_entries(p)) {
        if (e.first == "tokens") j[e.first] = p.tokens;
        else if (e.first == "sequences") j[e.first] = p.sequences;
        else if (e.second) j[e.first] = *e.second;
        else j[e.first] = nullptr;
    }
    // SPEC's keys, then the numeric-vs-lag split and the flavour's metrics
    if (split)
        j["mismatch_split"] = {{"total", part_json(split->total)},
                               {"numeric", part_json(split->numeric)},
                               {"lag", part_json(split->lag)}};
    if (!flavour_metrics.empty()) {  // under one extra key named by the flavour
        nlohmann::ordered_json f = nlohmann::ordered_json::object();
        for (const auto& e : flavour_metrics) f[e.first] = e.second;
        j[flavour] = f;
    }
    return text(j);
}

std::string metrics_json_text(const metric_values& entries) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& e : entries) j[e.first] = e.second;
    return text(j);
}

std::string quantiles_json_text(const std::string& of, const std::string& method, const std::vector<double>& probs,
                                const std::vector<double>& values, unsigned k, double rank_error_bound) {
    nlohmann::ordered_json j;
    j["of"] = of;
    j["method"] = method;
    nlohmann::ordered_json q = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < probs.size(); ++i)
        q[logratio::format_g(probs[i])] = values.empty() || std::isnan(values[i]) ? nlohmann::ordered_json(nullptr)
                                                                                  : nlohmann::ordered_json(values[i]);
    j["quantiles"] = q;
    if (k) {
        j["k"] = k;
        j["rank_error_bound"] = rank_error_bound;
    }
    return text(j);
}

std::string logits_json_text(const std::vector<logratio::logits_row>& rows) {
    nlohmann::ordered_json j;
    auto column = [&](const char* k, auto get) {
        nlohmann::ordered_json arr = nlohmann::ordered_json::array();
        for (const auto& r : rows) arr.push_back(get(r));
        j[k] = std::move(arr);
    };
    using R = logratio::logits_row;
    column("train_entropy", [](const R& r) { return r.train_entropy; });
    column("rollout_entropy", [](const R& r) { return r.rollout_entropy; });
    column("kl_train_rollout", [](const R& r) { return r.kl_train_rollout; });
    column("kl_rollout_train", [](const R& r) { return r.kl_rollout_train; });
    column("tv", [](const R& r) { return r.tv; });
    column("train_logprob", [](const R& r) { return r.train_logprob; });
    column("rollout_logprob", [](const R& r) { return r.rollout_logprob; });
    column("argmax_match", [](const R& r) { return r.argmax_match; });
    column("sampled_prob_gap", [](const R& r) { return r.sampled_prob_gap; });
    return text(j);
}

std::string diagnosis_json_text(const logratio::doctor::diagnosis& d) { return text(diagnosis_json(d)); }

std::string each_json_text(const std::vector<dump_diagnosis>& ds) {
    nlohmann::ordered_json dumps = nlohmann::ordered_json::array(), summary = nlohmann::ordered_json::array();
    for (const auto& x : ds) {
        nlohmann::ordered_json fs = nlohmann::ordered_json::array();
        for (const auto& f : x.d.findings) fs.push_back(finding_json(f));
        nlohmann::ordered_json j{{"path", x.path}, {"label", x.label}};
        if (!x.run.empty()) {
            j["run"] = x.run;
            j["update"] = x.update;
        }
        j["findings"] = fs;
        dumps.push_back(j);
    }
    for (const auto& c : summarize_checks(ds))
        summary.push_back({{"check", c.check}, {"warn", c.warn}, {"fail", c.fail},
                           {"runs", std::vector<std::string>(c.runs.begin(), c.runs.end())}, {"dumps", c.dumps}});
    return text({{"dumps", dumps}, {"summary", summary}});
}

}  // namespace logratio_cli
