// Checks a `logratio correct --out` file against verl's outputs in a
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
#include <string>

#include "mapped_file.hpp"
#include "npy.hpp"
#include "safetensors.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: verify_correct_out OUT.safetensors VERL_CONFIG_DIR\n");
        return 2;
    }
    try {
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
