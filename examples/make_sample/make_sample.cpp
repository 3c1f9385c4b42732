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
//   make_sample OUT.safetensors [--rows B] [--cols T] [--seed S]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <logratio/dtype.hpp>

namespace {

constexpr int V = 512, D = 48;

float bf16(float x) { return logratio::to_float(logratio::to_bfloat16(x)); }

struct model {
    std::vector<float> embed, mix, out;  // [V, D], [D, D], [V, D]
    explicit model(std::uint64_t seed) : embed(V * D), mix(D * D), out(V * D) {
        std::mt19937_64 g(seed);
        std::normal_distribution<float> n(0.0f, 1.0f);
        for (auto& x : embed) x = n(g);
        for (auto& x : mix) x = n(g) / std::sqrt(static_cast<float>(D)) * 0.9f;
        for (auto& x : out) x = n(g) * 0.9f;  // sharp: large logit spread
    }
};

// Next hidden state (shared by both paths: the prefix is the same).
void step(const model& m, std::vector<float>& h, int token) {
    std::vector<float> nh(D);
    for (int i = 0; i < D; ++i) {
        float s = m.embed[token * D + i];
        for (int j = 0; j < D; ++j) s += m.mix[i * D + j] * h[j];
        nh[i] = std::tanh(s);
    }
    h = nh;
}

// log-softmax of the logits on one path.
void log_softmax(const std::vector<float>& z, std::vector<float>& out) {
    const float mx = *std::max_element(z.begin(), z.end());
    float s = 0.0f;
    for (float x : z) s += std::exp(x - mx);
    const float lse = mx + std::log(s);
    out.resize(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) out[i] = z[i] - lse;
}

void trainer_logprobs(const model& m, const std::vector<float>& h, std::vector<float>& lp) {
    std::vector<float> z(V);
    for (int v = 0; v < V; ++v) {
        float s = 0.0f;
        for (int j = 0; j < D; ++j) s += m.out[v * D + j] * h[j];
        z[v] = s;
    }
    log_softmax(z, lp);
}

void rollout_logprobs(const model& m, const std::vector<float>& h, std::vector<float>& lp) {
    std::vector<float> z(V);
    constexpr int K = 4, chunk = D / K;
    for (int v = 0; v < V; ++v) {
        float part[K];
        for (int k = 0; k < K; ++k) {
            float s = 0.0f;
            for (int j = k * chunk; j < (k + 1) * chunk; ++j) s += bf16(m.out[v * D + j]) * bf16(h[j]);
            part[k] = bf16(s);
        }
        float s = 0.0f;
        for (int k = K - 1; k >= 0; --k) s += part[k];
        z[v] = bf16(s);
    }
    log_softmax(z, lp);
    for (auto& x : lp) x = bf16(x);  // the engine returns bf16 log-probs
    for (auto& x : lp) x = std::min(x, 0.0f);
}

void write_u64(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

int main(int argc, char** argv) {
    std::string out_path;
    int B = 24, T = 96;
    std::uint64_t seed = 20261202;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rows" && i + 1 < argc) B = std::atoi(argv[++i]);
        else if (a == "--cols" && i + 1 < argc) T = std::atoi(argv[++i]);
        else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
        else if (out_path.empty() && a[0] != '-') out_path = a;
        else {
            std::fprintf(stderr, "usage: make_sample OUT.safetensors [--rows B] [--cols T] [--seed S]\n");
            return 2;
        }
    }
    if (out_path.empty() || B <= 0 || T <= 0) {
        std::fprintf(stderr, "usage: make_sample OUT.safetensors [--rows B] [--cols T] [--seed S]\n");
        return 2;
    }
    const model m(seed);
    std::mt19937_64 g(seed + 1);
    std::vector<float> train(static_cast<std::size_t>(B) * T, 0.0f), rollout(train.size(), 0.0f);
    std::vector<std::uint8_t> mask(train.size(), 0);
    std::vector<float> lp_t, lp_e;
    for (int b = 0; b < B; ++b) {
        const int len = b == 0 ? T : 1 + static_cast<int>(g() % static_cast<std::uint64_t>(T));
        std::vector<float> h(D, 0.0f);
        int token = static_cast<int>(g() % V);  // the prompt's last token
        for (int t = 0; t < len; ++t) {
            step(m, h, token);
            rollout_logprobs(m, h, lp_e);
            trainer_logprobs(m, h, lp_t);
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
            const std::size_t i = static_cast<std::size_t>(b) * T + t;
            train[i] = lp_t[a];
            rollout[i] = lp_e[a];
            mask[i] = 1;
            token = a;
        }
    }
    // safetensors: header JSON padded to 8 bytes, then the three tensors.
    const std::size_t n = train.size();
    const std::string shape = "[" + std::to_string(B) + "," + std::to_string(T) + "]";
    std::string header = "{\"__metadata__\":{\"generator\":\"logratio make_sample\",\"seed\":\"" + std::to_string(seed) +
                         "\"},\"train_logprobs\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[0," +
                         std::to_string(4 * n) + "]},\"rollout_logprobs\":{\"dtype\":\"F32\",\"shape\":" + shape +
                         ",\"data_offsets\":[" + std::to_string(4 * n) + "," + std::to_string(8 * n) +
                         "]},\"mask\":{\"dtype\":\"U8\",\"shape\":" + shape + ",\"data_offsets\":[" +
                         std::to_string(8 * n) + "," + std::to_string(9 * n) + "]}}";
    while (header.size() % 8) header += ' ';
    std::string bytes;
    write_u64(bytes, header.size());
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(train.data()), 4 * n);
    bytes.append(reinterpret_cast<const char*>(rollout.data()), 4 * n);
    bytes.append(reinterpret_cast<const char*>(mask.data()), n);
    // write to a temporary name, then rename: never a half-written output
    const std::string tmp = out_path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.flush();
        if (!f) {
            std::fprintf(stderr, "make_sample: cannot write %s\n", tmp.c_str());
            std::remove(tmp.c_str());
            return 1;
        }
    }
    if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
        std::fprintf(stderr, "make_sample: cannot rename %s to %s\n", tmp.c_str(), out_path.c_str());
        std::remove(tmp.c_str());
        return 1;
    }
    std::printf("wrote %s: %d x %d tokens\n", out_path.c_str(), B, T);
    return 0;
}
