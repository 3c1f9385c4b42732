#pragma once
// Which tensors of a safetensors dump are the trainer's log-probs, the
// rollout's and the mask: logratio's own names, or a framework's names read
// as they are --
//   logratio  train_logprobs, rollout_logprobs, mask (or cu_seqlens)
//   verl      old_log_probs, rollout_log_probs, response_mask
//   slime     log_probs (else old_log_probs), rollout_log_probs, loss_mask (else loss_masks)
//   TRL       old_per_token_logps, sampling_per_token_logps, completion_mask
// chosen by --flavour (or the mode's framework; logratio's names are read
// when that framework's are absent), else detected: logratio's names if
// present, else the one framework whose names are all present. A missing
// tensor's error lists the tensors present (dump_inputs.cpp load_inputs).
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "panel_input.hpp"
#include "safetensors.hpp"

namespace logratio_cli {

struct tensor_names {
    std::string label;  ///< "logratio", "verl", "slime", "trl"
    std::vector<std::string> train, rollout, mask;  ///< candidates, first present wins
};

/// Tensor names given on the command line (--train-key, --rollout-key,
/// --mask-key): each non-empty one replaces the chosen framework's names.
struct tensor_keys {
    std::string train, rollout, mask;
};

/// logratio's names, then verl's, slime's and TRL's.
std::vector<tensor_names> known_tensor_names();

/// The names to read: `flavour` ("" = detect; verl / slime / trl prefer the
/// framework's names and fall back to logratio's). `how` says which and why.
tensor_names choose_tensor_names(const safetensors_file& st, const std::string& flavour, std::string& how);

/// The trainer / rollout / mask (or cu_seqlens) tensors of a dump under the
/// names choose_tensor_names() picks -- the one reader of a dump's inputs
/// for panel, correct, doctor, runs and report. A missing tensor is a
/// shape_error naming the file and listing the tensors present. `how`
/// (may be null) says why a framework's names were read ("" for logratio's).
panel_tensors dump_tensors(const safetensors_file& st, const std::string& path, const std::string& flavour,
                           tensor_names* chosen = nullptr, std::string* how = nullptr, const tensor_keys& keys = {});

}  // namespace logratio_cli
