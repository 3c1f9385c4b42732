#include "dump_inputs.hpp"

#include <cstdio>

#include <logratio/core/error.hpp>

#include "files_read.hpp"
#include "npy.hpp"

namespace logratio_cli {

const tensor* load_npy(loaded_inputs& L, const std::string& path, const char* name) {
    keep_stream_input(path);  // a pipe is mapped from its in-memory copy
    L.files.push_back(std::make_unique<mapped_file>(path));
    L.npys.push_back(parse_npy(*L.files.back(), name));
    return &L.npys.back();
}

void load_inputs(const input_args& a, loaded_inputs& L) {
    if (!a.file.empty()) {
        if (!a.train.empty() || !a.rollout.empty() || !a.mask.empty() || !a.offsets.empty())
            throw logratio::shape_error("give either FILE.safetensors or --train/--rollout .npy files, not both");
        keep_stream_input(a.file);
        L.files.push_back(std::make_unique<mapped_file>(a.file));
        L.st = parse_safetensors(*L.files.back());
        std::string how;
        tensor_names names;
        L.in = dump_tensors(*L.st, a.file, a.flavour, &names, &how, a.keys);
        if (!how.empty())
            std::fprintf(stderr, "logratio: %s's tensor names (%s): %s, %s, %s\n", names.label.c_str(), how.c_str(),
                         L.in.train->name.c_str(), L.in.rollout->name.c_str(),
                         L.in.mask ? L.in.mask->name.c_str() : "cu_seqlens");
        return;
    }
    if (a.train.empty() || a.rollout.empty())
        throw logratio::shape_error("need FILE.safetensors, or --train and --rollout .npy files");
    L.in.train = load_npy(L, a.train, "train_logprobs");
    L.in.rollout = load_npy(L, a.rollout, "rollout_logprobs");
    if (!a.mask.empty()) L.in.mask = load_npy(L, a.mask, "mask");
    if (!a.offsets.empty()) L.in.offsets = load_npy(L, a.offsets, "cu_seqlens");
}

}  // namespace logratio_cli
