#include "doctor_json.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include <logratio/doctor/diagnose.hpp>

namespace logratio_cli {

nlohmann::ordered_json finding_json(const logratio::doctor::finding& f) {
    nlohmann::ordered_json ev = nlohmann::ordered_json::object();
    for (const auto& e : f.evidence) {
        if (!e.text.empty()) ev[e.key] = e.text;
        else if (std::isfinite(e.value)) ev[e.key] = e.value;
        else ev[e.key] = nullptr;
    }
    ev["what_to_check"] = f.what_to_check;
    return {{"check", f.check}, {"severity", logratio::doctor::severity_name(f.level)}, {"summary", f.summary},
            {"evidence", ev}};
}

nlohmann::ordered_json stats_json(const logratio::doctor::delta_stats& s) {
    auto num = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); };
    return {{"count", s.count}, {"mean_delta", num(s.mean_delta())}, {"mean_abs_delta", num(s.mean_abs())},
            {"max_abs_delta", num(s.max_abs)}, {"kl_k3", num(s.kl_k3())}};
}

/// The breakdowns as JSON: non-empty position and probability buckets, and
/// the 64 x 64 (p_T rows, p_E columns) count matrix on its logit axis.
nlohmann::ordered_json breakdowns_json(const logratio::doctor::breakdowns& b) {
    namespace dr = logratio::doctor;
    nlohmann::ordered_json pos = nlohmann::ordered_json::array(), prob = nlohmann::ordered_json::array();
    for (int k = 0; k < dr::breakdowns::position_buckets; ++k) {
        if (!b.by_position[k].count) continue;
        auto j = stats_json(b.by_position[k]);
        j["first_position"] = dr::breakdowns::position_lo(k);
        j["last_position"] = dr::breakdowns::position_hi(k);
        pos.push_back(j);
    }
    for (int k = 0; k < dr::breakdowns::prob_buckets; ++k) {
        if (!b.by_rollout_prob[k].count) continue;
        auto j = stats_json(b.by_rollout_prob[k]);
        j["logit_lo"] = k == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(dr::breakdowns::prob_bucket_logit_lo(k));
        j["logit_hi"] = k + 1 == dr::breakdowns::prob_buckets ? nlohmann::ordered_json(nullptr)
                                                              : nlohmann::ordered_json(dr::breakdowns::prob_bucket_logit_hi(k));
        prob.push_back(j);
    }
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int i = 0; i < dr::prob_axis::bins; ++i) {
        const auto* r = b.joint.data() + static_cast<std::size_t>(i) * dr::prob_axis::bins;
        rows.push_back(std::vector<std::uint64_t>(r, r + dr::prob_axis::bins));
    }
    return {{"by_position", pos},
            {"by_rollout_prob", prob},
            {"joint", {{"axis", "logit(p) = l - log1p(-exp(l)); outer bins take the rest"},
                       {"logit_lo", dr::prob_axis::lo},
                       {"bin_width", dr::prob_axis::width},
                       {"bins", dr::prob_axis::bins},
                       {"rows", "p_T"},
                       {"columns", "p_E"},
                       {"counts", rows}}}};
}

/// {"findings": [...], "breakdowns": {...}}
nlohmann::ordered_json diagnosis_json(const logratio::doctor::diagnosis& d) {
    nlohmann::ordered_json fs = nlohmann::ordered_json::array();
    for (const auto& f : d.findings) fs.push_back(finding_json(f));
    return {{"findings", fs}, {"breakdowns", breakdowns_json(d.bd)}};
}

}  // namespace logratio_cli
