// Checks a `logratio correct --out` file against slime's / TRL's outputs
// (verify_flavour below) or verl's outputs in a
// fixture's verl/<config>/ directory: response_mask byte for byte, and
// rollout_is_weights (when verl wrote them) bit for bit -- within one float32
// ulp when the config batch-normalises (its args.json has --batch-normalize:
// verl divides by a mean summed in another order).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "mapped_file.hpp"
#include "npy.hpp"
#include "safetensors.hpp"

namespace {

float f32_at(const unsigned char* p, std::uint64_t i) {
    float x;
    std::memcpy(&x, p + 4 * i, 4);
    return x;
}

/// The slime / TRL form: `verify_correct_out OUT CONFIG INPUT WEIGHTS_NAME MASK_NAME`.
/// OUT must hold WEIGHTS_NAME (F32, the input's shape) equal to the
/// framework's weights.npy on the input's masked-in tokens (relative 5e-6:
/// the frameworks' float32, tests/test_flavours.cpp) and 0 elsewhere, and
/// MASK_NAME (U8) equal to its mask.npy (or the input's mask where the
/// framework left it unchanged).
int verify_flavour(char** argv) {
    const std::string dir = argv[2];
    logratio_cli::mapped_file out(argv[1]), in(argv[3]);
    const auto st = logratio_cli::parse_safetensors(out);
    const auto input = logratio_cli::parse_safetensors(in);
    const auto* w = st.find(argv[4]);
    const auto* m = st.find(argv[5]);
    const auto* im = input.find("mask");
    if (!w || w->type != logratio_cli::dtype::f32) throw std::runtime_error(std::string("no F32 ") + argv[4]);
    if (!m || m->type != logratio_cli::dtype::u8) throw std::runtime_error(std::string("no U8 ") + argv[5]);
    if (st.tensors.size() != 2) throw std::runtime_error("expected exactly the weights and the mask");
    if (w->shape != im->shape || m->shape != im->shape) throw std::runtime_error("shapes differ from the input's");
    logratio_cli::mapped_file wf(dir + "/weights.npy");
    const auto ref = logratio_cli::parse_npy(wf, "weights");
    const std::uint64_t cols = im->shape[1];
    const bool per_row = ref.numel() == im->shape[0];
    for (std::uint64_t i = 0; i < w->numel(); ++i) {
        const double got = f32_at(w->data, i), want = f32_at(ref.data, per_row ? i / cols : i);
        const bool ok = im->data[i] ? std::fabs(got - want) <= 5e-6 * std::fabs(want) : got == 0.0;
        if (!ok) throw std::runtime_error(std::string(argv[4]) + " differs at flat index " + std::to_string(i));
    }
    const std::string mpath = dir + "/mask.npy";
    std::unique_ptr<logratio_cli::mapped_file> mf;
    const unsigned char* want_mask = im->data;
    if (std::filesystem::exists(mpath)) {
        mf = std::make_unique<logratio_cli::mapped_file>(mpath);
        want_mask = logratio_cli::parse_npy(*mf, "mask").data;
    }
    for (std::uint64_t i = 0; i < m->numel(); ++i)
        if ((m->data[i] != 0) != (want_mask[i] != 0))
            throw std::runtime_error(std::string(argv[5]) + " differs at flat index " + std::to_string(i));
    std::printf("ok: %s matches %s\n", argv[1], argv[2]);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 && argc != 6) {
        std::fprintf(stderr, "usage: verify_correct_out OUT.safetensors VERL_CONFIG_DIR\n"
                             "       verify_correct_out OUT.safetensors CONFIG_DIR INPUT WEIGHTS_NAME MASK_NAME\n");
        return 2;
    }
    try {
        if (argc == 6) return verify_flavour(argv);
        const std::string dir = argv[2];
        logratio_cli::mapped_file out(argv[1]);
        const auto st = logratio_cli::parse_safetensors(out);
        const auto* mask = st.find("response_mask");
        if (!mask || mask->type != logratio_cli::dtype::u8) throw std::runtime_error("no U8 response_mask");
        logratio_cli::mapped_file mf(dir + "/response_mask.npy");
        const auto want = logratio_cli::parse_npy(mf, "response_mask");
        if (want.shape != mask->shape) throw std::runtime_error("response_mask shape differs");
        if (std::memcmp(want.data, mask->data, mask->nbytes) != 0) throw std::runtime_error("response_mask differs");
        const std::string wpath = dir + "/rollout_is_weights.npy";
        const auto* w = st.find("rollout_is_weights");
        if (std::filesystem::exists(wpath)) {
            if (!w || w->type != logratio_cli::dtype::f32) throw std::runtime_error("no F32 rollout_is_weights");
            logratio_cli::mapped_file wf(wpath);
            const auto ww = logratio_cli::parse_npy(wf, "rollout_is_weights");
            if (ww.shape != w->shape) throw std::runtime_error("rollout_is_weights shape differs");
            std::ifstream af(dir + "/args.json");
            const std::string args((std::istreambuf_iterator<char>(af)), std::istreambuf_iterator<char>());
            const std::int64_t max_ulps = args.find("\"--batch-normalize\"") != std::string::npos ? 1 : 0;
            for (std::uint64_t i = 0; i < w->numel(); ++i) {
                std::int32_t a, b;
                std::memcpy(&a, w->data + 4 * i, 4);
                std::memcpy(&b, ww.data + 4 * i, 4);
                if (std::llabs(std::int64_t(a) - std::int64_t(b)) > max_ulps)
                    throw std::runtime_error("rollout_is_weights differ at flat index " + std::to_string(i) + " by more than " +
                                             std::to_string(max_ulps) + " float32 ulp");
            }
        } else if (w) {
            throw std::runtime_error("rollout_is_weights written without --is");
        }
        std::printf("ok: %s matches %s\n", argv[1], argv[2]);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "verify_correct_out: %s\n", e.what());
        return 1;
    }
}
