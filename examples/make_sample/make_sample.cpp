// make_sample: writes a small dump of paired log-probs from a *real*
// numerical mismatch (not a drawn distribution), deterministic from a seed.
//
// A tiny next-token model (vocabulary 512, width 48, sharp output layer so the
// entropy is ~0.1-1 nat like real models) runs on two execution paths over
// the same weights, the same prefix and the same sampled token:
//   rollout engine: weights and activations rounded to bf16, the output
//                   dot products reduced split-K (4 partial sums, each
//                   rounded to bf16, added in reverse order);
//   trainer:        float32 throughout, sequential reduction.
// Tokens are sampled from the rollout distribution mu; both log-probs of
// the sampled token are recorded. Output: a safetensors file with
// train_logprobs, rollout_logprobs F32 [B, T] and mask U8 [B, T].
//
// With --runs DIR it writes a whole experiment instead: training runs whose
// weights drift from update to update (a random walk whose step grows with
// a learning-rate warmup), one dump per (run, update) at
// DIR/<group>/<run>/update_<u>.safetensors with run, group and update in
// __metadata__:
//   sync runs:  the rollout engine samples with the trainer's current
//               weights: numeric mismatch only;
//   async runs: the engine samples with weights `lag` updates old, so δ
//               mixes policy lag with numeric mismatch; the dump also holds
//               old_logprobs = the trainer's float32 log-probs under the
//               engine's old weights (the numeric-vs-lag split).
//
//   make_sample OUT.safetensors [--rows B] [--cols T] [--seed S]
//   make_sample --runs DIR [--sync 4] [--async 6] [--updates 24] [--rows 8] [--cols 48] [--seed S]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <logratio/core/dtype.hpp>

#include "tiny_model.hpp"

namespace {

using namespace tiny_model;

void write_u64(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

/// One dump: B rows of up to T tokens sampled from the engine's model.
struct dump {
    int B = 0, T = 0;
    std::vector<float> train, rollout, old;  // old: trainer path on the engine's weights
    std::vector<std::uint8_t> mask;
};

dump sample_dump(const model& trainer, const model& engine, bool with_old, int B, int T, std::mt19937_64& g) {
    dump d;
    d.B = B;
    d.T = T;
    const std::size_t n = static_cast<std::size_t>(B) * static_cast<std::size_t>(T);
    d.train.assign(n, 0.0f);
    d.rollout.assign(n, 0.0f);
    if (with_old) d.old.assign(n, 0.0f);
    d.mask.assign(n, 0);
    std::vector<float> lp_t, lp_e, lp_o;
    for (int b = 0; b < B; ++b) {
        const int len = b == 0 ? T : 1 + static_cast<int>(g() % static_cast<std::uint64_t>(T));
        std::vector<float> h(D, 0.0f);
        int token = static_cast<int>(g() % V);  // the prompt's last token
        for (int t = 0; t < len; ++t) {
            step(engine, h, token);  // the prefix is the engine's own sample
            rollout_logprobs(engine, h, lp_e);
            trainer_logprobs(trainer, h, lp_t);
            if (with_old) trainer_logprobs(engine, h, lp_o);
            // sample from mu (the rollout engine's distribution)
            std::uniform_real_distribution<double> u(0.0, 1.0);
            double r = u(g), c = 0.0;
            int a = V - 1;
            for (int v = 0; v < V; ++v) {
                c += std::exp(static_cast<double>(lp_e[v]));
                if (r < c) {
                    a = v;
                    break;
                }
            }
            const std::size_t i = static_cast<std::size_t>(b) * static_cast<std::size_t>(T) + static_cast<std::size_t>(t);
            d.train[i] = lp_t[a];
            d.rollout[i] = lp_e[a];
            if (with_old) d.old[i] = lp_o[a];
            d.mask[i] = 1;
            token = a;
        }
    }
    return d;
}

/// safetensors bytes: header JSON padded to 8 bytes, then the tensors.
std::string safetensors_bytes(const dump& d, const std::string& metadata) {
    const std::size_t n = d.train.size();
    const std::string shape = "[" + std::to_string(d.B) + "," + std::to_string(d.T) + "]";
    std::string header = "{\"__metadata__\":{" + metadata + "}";
    std::size_t off = 0;
    auto entry = [&](const char* name, const char* dtype, std::size_t bytes) {
        header += std::string(",\"") + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
                  ",\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + bytes) + "]}";
        off += bytes;
    };
    entry("train_logprobs", "F32", 4 * n);
    entry("rollout_logprobs", "F32", 4 * n);
    if (!d.old.empty()) entry("old_logprobs", "F32", 4 * n);
    entry("mask", "U8", n);
    header += "}";
    while (header.size() % 8) header += ' ';
    std::string bytes;
    write_u64(bytes, header.size());
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(d.train.data()), 4 * n);
    bytes.append(reinterpret_cast<const char*>(d.rollout.data()), 4 * n);
    if (!d.old.empty()) bytes.append(reinterpret_cast<const char*>(d.old.data()), 4 * n);
    bytes.append(reinterpret_cast<const char*>(d.mask.data()), n);
    return bytes;
}

// Write to a temporary name, then rename: never a half-written output.
bool write_file(const std::string& path, const std::string& bytes) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.flush();
        if (!f) {
            std::fprintf(stderr, "make_sample: cannot write %s\n", tmp.c_str());
            std::remove(tmp.c_str());
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "make_sample: cannot rename %s to %s\n", tmp.c_str(), path.c_str());
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

/// One training run: `updates` optimizer steps with a warmup learning rate;
/// the engine samples with the weights of `lag` updates ago (0: sync).
bool write_run(const std::string& dir, const std::string& group, const std::string& run, int lag, int updates,
               int B, int T, std::uint64_t seed) {
    const std::string rdir = dir + "/" + group + "/" + run;
    std::filesystem::create_directories(rdir);
    std::vector<model> history{model(seed)};  // weights after each update
    std::mt19937_64 walk(seed ^ 0x9e3779b97f4a7c15ULL), data(seed + 7);
    for (int u = 1; u <= updates; ++u) {
        model next = history.back();
        next.update(walk, 0.0012f * static_cast<float>(std::min(u, 16)));  // warmup over 16 updates
        history.push_back(std::move(next));
        const model& trainer = history.back();
        const model& engine = history[static_cast<std::size_t>(std::max(0, u - lag))];
        const dump d = sample_dump(trainer, engine, lag > 0, B, T, data);
        char name[64];
        std::snprintf(name, sizeof name, "/update_%03d.safetensors", u);
        const std::string meta = "\"generator\":\"logratio make_sample\",\"seed\":\"" + std::to_string(seed) +
                                 "\",\"run\":\"" + run + "\",\"group\":\"" + group + "\",\"update\":\"" +
                                 std::to_string(u) + "\",\"lag\":\"" + std::to_string(lag) + "\"";
        if (!write_file(rdir + name, safetensors_bytes(d, meta))) return false;
    }
    return true;
}

int usage() {
    std::fprintf(stderr,
                 "usage: make_sample OUT.safetensors [--rows B] [--cols T] [--seed S]\n"
                 "       make_sample --runs DIR [--sync N] [--async N] [--updates U] [--rows B] [--cols T] [--seed S]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string out_path, runs_dir;
    int B = -1, T = -1, n_sync = 4, n_async = 6, updates = 24;
    std::uint64_t seed = 20261202;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rows" && i + 1 < argc) B = std::atoi(argv[++i]);
        else if (a == "--cols" && i + 1 < argc) T = std::atoi(argv[++i]);
        else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--runs" && i + 1 < argc) runs_dir = argv[++i];
        else if (a == "--sync" && i + 1 < argc) n_sync = std::atoi(argv[++i]);
        else if (a == "--async" && i + 1 < argc) n_async = std::atoi(argv[++i]);
        else if (a == "--updates" && i + 1 < argc) updates = std::atoi(argv[++i]);
        else if (out_path.empty() && a[0] != '-') out_path = a;
        else return usage();
    }
    if (!runs_dir.empty()) {
        if (!out_path.empty() || n_sync < 0 || n_async < 0 || updates < 2) return usage();
        B = B < 0 ? 8 : B;
        T = T < 0 ? 48 : T;
        if (B <= 0 || T <= 0) return usage();
        for (int r = 0; r < n_sync + n_async; ++r) {
            const bool sync = r < n_sync;
            const int lag = sync ? 0 : 1 + (r - n_sync) % 2;  // async runs lag 1 or 2 updates
            const std::string group = sync ? "sync" : "async";
            const std::string run = group + "-" + std::to_string(sync ? r : r - n_sync);
            if (!write_run(runs_dir, group, run, lag, updates, B, T, seed + 1000 * static_cast<std::uint64_t>(r)))
                return 1;
        }
        std::printf("wrote %d runs x %d updates under %s\n", n_sync + n_async, updates, runs_dir.c_str());
        return 0;
    }
    B = B < 0 ? 24 : B;
    T = T < 0 ? 96 : T;
    if (out_path.empty() || B <= 0 || T <= 0) return usage();
    const model m(seed);
    std::mt19937_64 g(seed + 1);
    const dump d = sample_dump(m, m, false, B, T, g);
    if (!write_file(out_path, safetensors_bytes(d, "\"generator\":\"logratio make_sample\",\"seed\":\"" +
                                                       std::to_string(seed) + "\""))) return 1;
    std::printf("wrote %s: %d x %d tokens\n", out_path.c_str(), B, T);
    return 0;
}
