#pragma once
// The inputs of one dump -- a safetensors file, or .npy files -- as the
// commands name them (panel, quantiles, correct: commands/inputs.hpp
// registers the options), and their loading into validated tensors.
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapped_file.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "tensor.hpp"
#include "tensor_names.hpp"

namespace logratio_cli {

struct input_args {
    std::string file, train, rollout, mask, offsets;
    std::string flavour;  ///< whose tensor names (and metrics): verl | slime | trl, or "" to detect
    tensor_keys keys;     ///< --train-key, --rollout-key, --mask-key: the file's own tensor names
};

/// The mapped files and tensors of one dump, from a safetensors file or .npy flags.
struct loaded_inputs {
    std::vector<std::unique_ptr<mapped_file>> files;
    std::optional<safetensors_file> st;
    std::deque<tensor> npys;  ///< a deque: pointers into it stay valid as it grows
    panel_tensors in;
};

/// Maps and parses the inputs `a` names; says on stderr when a framework's
/// tensor names were read. shape_error when both or neither kind is given.
void load_inputs(const input_args& a, loaded_inputs& L);

/// One more .npy file into L (e.g. --old with --train): its tensor.
const tensor* load_npy(loaded_inputs& L, const std::string& path, const char* name);

}  // namespace logratio_cli
