#pragma once
// TRL / transformers trainer state: every checkpoint-<N>/ directory holds
// trainer_state.json whose `log_history` lists the logged dicts, each with
// `step` = the trainer's global step (huggingface/transformers
// src/transformers/trainer.py Trainer.log appends {**logs, "step":
// global_step}; trainer_callback.py TrainerState.save_to_json). TRL's GRPO
// logs sampling/sampling_logp_difference/{mean,max} there (huggingface/trl
// trl/trainer/grpo_trainer.py @f2cd5771). The run is the directory above
// checkpoint-*; its latest checkpoint (largest N) holds the whole history
// and wins. Input: a directory of runs (<run>/ or <group>/<run>/), one run,
// one checkpoint directory or one trainer_state.json. The state's top-level
// fields that describe the run (train_batch_size, num_train_epochs,
// max_steps, logging_steps, eval_steps, save_steps, is_hyper_param_search,
// trial_name; not epoch, global_step or best_metric, which describe its
// progress) are the run's attributes.
#include <string>

#include <logratio/core/error.hpp>

#include "../table.hpp"
#include "fs_walk.hpp"
#include "history.hpp"
#include "json_scan.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// `keys`: the metrics read (the others are listed as unread).
history_set read_trl_states(const std::string& input, const key_filter& keys = key_filter());

}  // namespace logratio_cli::trackers
