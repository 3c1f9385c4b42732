// `logratio correct`: IS weights (TIS), rejection masks (MIS) and veto with
// verl's metrics, or slime's / TRL's modes (--mode), optionally written to
// a safetensors file.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <logratio/correction/correction.hpp>
#include <logratio/core/version.hpp>

#include "../kernels.hpp"
#include "../output/command_json.hpp"
#include "../output/safetensors_writer.hpp"
#include "command.hpp"
#include "correct_options.hpp"
#include "inputs.hpp"

namespace logratio_cli {
namespace {

/// The names --out writes the weights and the mask under: each framework's
/// own (see docs/correction.md).
///   verl  rollout_is_weights, response_mask (verl's DataProto keys)
///   TRL   importance_sampling_ratio (grpo_trainer.py f2cd5771 line 2826,
///         output["importance_sampling_ratio"], the factor line 3118 multiplies
///         per_token_loss by), completion_mask (unchanged: TRL never edits it)
///   slime tis_weights (loss.py 624b824a vanilla_tis_function), ice_weight
///         (icepop_function), is_weights (mis.py compute_mis_weights_with_cp),
///         each the factor pg_loss is multiplied by; modified_response_masks
///         (loss.py line 1078, what every slime TIS function returns)
struct out_names {
    const char* weights;
    const char* mask;
};

out_names out_names_of(const logratio::correction_options& o) {
    if (!o.mode) return {"rollout_is_weights", "response_mask"};
    if (o.mode->fw == logratio::framework::trl) return {"importance_sampling_ratio", "completion_mask"};
    switch (o.mode->slime) {
        case logratio::slime_kind::tis: return {"tis_weights", "modified_response_masks"};
        case logratio::slime_kind::icepop: return {"ice_weight", "modified_response_masks"};
        case logratio::slime_kind::mis: return {"is_weights", "modified_response_masks"};
        case logratio::slime_kind::metrics_only: break;
    }
    return {"rollout_is_weights", "modified_response_masks"};  // slime without a mode: no weights
}

int run_correct(correct_args a) {
    a.flavour = flavour_of(a);
    const logratio::correction_options o = correction_options_of(a);
    loaded_inputs L;
    load_inputs(a, L);
    logratio::correction_result r;
    std::vector<float> weights;
    std::vector<std::uint8_t> mask;
    // TRL and slime modes always have weights; slime without a mode reports
    // metrics only (mis.py with use_tis off returns no weights).
    const bool has_weights = o.is || (o.mode && (o.mode->fw == logratio::framework::trl ||
                                                 o.mode->slime != logratio::slime_kind::metrics_only));
    logratio_cli::with_panel_view(L.in, [&](const auto& view) {
        if (has_weights) weights.resize(view.size());
        mask.resize(view.size());
        r = logratio_cli::kernels::correct(view, o, has_weights ? weights.data() : nullptr, mask.data(), a.threads);
    });
    if (!a.out.empty()) {
        const auto& shape = L.in.train->shape;
        const out_names names = out_names_of(o);
        std::vector<logratio_cli::output_tensor> t;
        if (has_weights) t.push_back({names.weights, logratio_cli::dtype::f32, shape, weights.data(), 4 * weights.size()});
        t.push_back({names.mask, logratio_cli::dtype::u8, shape, mask.data(), mask.size()});
        logratio_cli::write_safetensors(a.out, t, {{"producer", std::string("logratio ") + LOGRATIO_VERSION_STRING}});
    }
    auto entries = logratio::correction_entries(r, a.prefix);
    if (o.nonfinite == logratio::nonfinite_policy::omit)  // the NaN/Inf tokens left out (not a verl metric)
        entries.emplace_back(a.prefix + "nonfinite_tokens", static_cast<double>(r.nonfinite_tokens));
    if (a.json) {
        std::cout << metrics_json_text(entries) << "\n";
        return 0;
    }
    std::printf("correction of %llu tokens in %llu sequences\n", static_cast<unsigned long long>(r.tokens),
                static_cast<unsigned long long>(r.sequences));
    std::printf("%-50s %s\n", "metric", "value");
    for (const auto& e : entries) std::printf("%-50s % .10g\n", e.first.c_str(), e.second);
    if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
    return 0;
}

}  // namespace

command_runner setup_correct(CLI::App& c) {
    auto args = std::make_shared<correct_args>();
    add_correct_options(c, *args);
    return [args] { return run_correct(*args); };
}

}  // namespace logratio_cli
