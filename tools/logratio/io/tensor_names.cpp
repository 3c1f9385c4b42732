#include "tensor_names.hpp"

#include <logratio/core/error.hpp>

namespace logratio_cli {

std::vector<tensor_names> known_tensor_names() {
    return {{"logratio", {"train_logprobs"}, {"rollout_logprobs"}, {"mask"}},
            {"verl", {"old_log_probs"}, {"rollout_log_probs"}, {"response_mask"}},
            {"slime", {"log_probs", "old_log_probs"}, {"rollout_log_probs"}, {"loss_mask", "loss_masks"}},
            {"trl", {"old_per_token_logps"}, {"sampling_per_token_logps"}, {"completion_mask"}}};
}

namespace {

const tensor* first_present(const safetensors_file& st, const std::vector<std::string>& names) {
    for (const auto& n : names)
        if (const tensor* t = st.find(n)) return t;
    return nullptr;
}

std::string present_list(const safetensors_file& st) {
    std::string s;
    for (const auto& e : st.tensors) s += (s.empty() ? "" : ", ") + e.first;
    return s.empty() ? "none" : s;
}

}  // namespace

tensor_names choose_tensor_names(const safetensors_file& st, const std::string& flavour, std::string& how) {
    const auto all = known_tensor_names();
    auto complete = [&](const tensor_names& n) {
        return first_present(st, n.train) && first_present(st, n.rollout) &&
               (first_present(st, n.mask) || st.find("cu_seqlens"));
    };
    if (!flavour.empty()) {  // the flavour's names, else logratio's, else name what is missing
        for (const auto& n : all)
            if (n.label == flavour && complete(n)) {
                how = "flavour " + flavour;
                return n;
            }
        if (complete(all[0])) return all[0];
        for (const auto& n : all)
            if (n.label == flavour) return n;
        return all[0];
    }
    if (complete(all[0])) return all[0];
    std::vector<const tensor_names*> found;
    for (std::size_t k = 1; k < all.size(); ++k)
        if (complete(all[k])) found.push_back(&all[k]);
    if (found.size() > 1)
        throw logratio::shape_error("the tensors match several frameworks' names (" + present_list(st) +
                                    "): give --flavour verl|slime|trl");
    if (found.empty()) return all[0];  // the caller names what is missing
    how = "detected";
    return *found[0];
}

panel_tensors dump_tensors(const safetensors_file& st, const std::string& path, const std::string& flavour,
                           tensor_names* chosen, std::string* how, const tensor_keys& keys) {
    std::string why;
    tensor_names names = choose_tensor_names(st, flavour, why);
    if (!keys.train.empty()) names.train = {keys.train};
    if (!keys.rollout.empty()) names.rollout = {keys.rollout};
    if (!keys.mask.empty()) names.mask = {keys.mask};
    panel_tensors in;
    in.train = first_present(st, names.train);
    in.rollout = first_present(st, names.rollout);
    in.mask = first_present(st, names.mask);
    in.offsets = st.find("cu_seqlens");
    const std::string present =
        " (tensors present: " + present_list(st) + "; choose with --train-key, --rollout-key, --mask-key)";
    if (!in.train) throw logratio::shape_error(path + ": missing tensor '" + names.train[0] + "'" + present);
    if (!in.rollout) throw logratio::shape_error(path + ": missing tensor '" + names.rollout[0] + "'" + present);
    if (!in.mask && !in.offsets)
        throw logratio::shape_error(path + ": missing tensor: need '" + names.mask[0] +
                                    "' (padded layout) or 'cu_seqlens' (packed layout)" + present);
    if (chosen) *chosen = names;
    if (how) *how = why;
    return in;
}

}  // namespace logratio_cli
