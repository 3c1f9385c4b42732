// make_doctor_dumps DIR [--print]: writes DIR/<bug>.safetensors for every
// planted bug of planted.hpp, and healthy_bf16 / drift (the clean dump's
// mismatch scaled x1.55 and x8) (train_logprobs, rollout_logprobs F32 [B, T],
// mask U8 [B, T]); with --print, also each dump's doctor findings with
// their evidence (the measurements quoted in include/logratio/doctor/checks).
#include <cstdio>
#include <filesystem>
#include <string>

#include <logratio/doctor/diagnose.hpp>

#include "planted.hpp"
#include "safetensors_writer.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_doctor_dumps DIR [--print]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const bool print = argc > 2 && std::string(argv[2]) == "--print";
    try {
        std::filesystem::create_directories(dir);
        // the planted bugs, then two numeric levels of the clean dump at another
        // seed and size: a healthy bf16 engine (mean |delta| ~0.022) and a drift (x8)
        std::vector<std::pair<std::string, planted::dump>> dumps;
        for (const auto& [b, name] : planted::all_bugs()) dumps.emplace_back(name, planted::sample(b));
        for (const auto& [name, k] : {std::pair<std::string, double>{"healthy_bf16", 1.55}, {"drift", 8.0}}) {
            planted::dump d = planted::sample(planted::bug::clean, 220, 96, 777);
            planted::scale_mismatch(d, k);
            dumps.emplace_back(name, std::move(d));
        }
        for (const auto& [name, d] : dumps) {
            const std::uint64_t B = static_cast<std::uint64_t>(d.B), T = static_cast<std::uint64_t>(d.T);
            using logratio_cli::dtype;
            logratio_cli::write_safetensors(dir + "/" + name + ".safetensors",
                                            {{"train_logprobs", dtype::f32, {B, T}, d.train.data(), 4 * B * T},
                                             {"rollout_logprobs", dtype::f32, {B, T}, d.rollout.data(), 4 * B * T},
                                             {"mask", dtype::u8, {B, T}, d.mask.data(), B * T}},
                                            {{"generator", "logratio make_doctor_dumps"}, {"bug", name}});
            if (!print) continue;
            const auto dx = logratio::doctor::diagnose(logratio::padded(d.train, d.rollout, d.mask, B, T));
            std::printf("== %s: %llu tokens\n", name.c_str(), static_cast<unsigned long long>(dx.tokens));
            for (const auto& f : dx.findings) {
                std::printf("  %-18s %-4s %s\n   ", f.check.c_str(), logratio::doctor::severity_name(f.level),
                            f.summary.c_str());
                for (const auto& e : f.evidence)
                    if (e.text.empty()) std::printf(" %s=%.4g", e.key.c_str(), e.value);
                    else std::printf(" %s=%s", e.key.c_str(), e.text.c_str());
                std::printf("\n");
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_doctor_dumps: %s\n", e.what());
        return 1;
    }
    return 0;
}
