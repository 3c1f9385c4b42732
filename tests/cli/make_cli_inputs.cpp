// Writes the good and bad input files the CLI tests run `logratio panel` on
// (into the directory given as argv[1]).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct entry {
    std::string name, dtype;
    std::vector<std::uint64_t> shape;
    std::vector<unsigned char> bytes;
};

template <class T>
entry make(const std::string& name, const std::string& dtype, std::vector<std::uint64_t> shape,
           const std::vector<T>& v) {
    entry e{name, dtype, std::move(shape), {}};
    e.bytes.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(e.bytes.data(), v.data(), e.bytes.size());
    return e;
}

std::string header_of(const std::vector<entry>& es) {
    std::string h = "{";
    std::uint64_t off = 0;
    for (std::size_t i = 0; i < es.size(); ++i) {
        std::string shape;
        for (std::size_t k = 0; k < es[i].shape.size(); ++k) shape += (k ? "," : "") + std::to_string(es[i].shape[k]);
        h += (i ? "," : "") + std::string("\"") + es[i].name + "\":{\"dtype\":\"" + es[i].dtype + "\",\"shape\":[" +
             shape + "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + es[i].bytes.size()) +
             "]}";
        off += es[i].bytes.size();
    }
    h += "}";
    while (h.size() % 8) h += ' ';
    return h;
}

void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string safetensors(const std::vector<entry>& es, const std::string& header) {
    std::string out(8, '\0');
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    out += header;
    for (const auto& e : es) out.append(reinterpret_cast<const char*>(e.bytes.data()), e.bytes.size());
    return out;
}

void write_st(const std::string& path, const std::vector<entry>& es) { write_raw(path, safetensors(es, header_of(es))); }

void write_npy(const std::string& path, const std::string& descr, const std::vector<std::uint64_t>& shape,
               const void* data, std::size_t nbytes) {
    std::string s;
    for (auto d : shape) s += std::to_string(d) + ",";
    std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + s + "), }";
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(h.size() & 0xFF);
    out += static_cast<char>(h.size() >> 8);
    out += h;
    out.append(static_cast<const char*>(data), nbytes);
    write_raw(path, out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_cli_inputs DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    const std::uint64_t B = 4, T = 8;
    std::vector<float> tr(B * T), ro(B * T);
    std::vector<std::uint8_t> mask(B * T, 1);
    for (std::uint64_t i = 0; i < B * T; ++i) {
        ro[i] = -0.5f - 0.01f * static_cast<float>(i);
        tr[i] = ro[i] + 0.001f * static_cast<float>(static_cast<int>(i % 5) - 2);
    }
    auto good = [&](std::vector<float> t, std::vector<float> r) {
        return std::vector<entry>{make("train_logprobs", "F32", {B, T}, t), make("rollout_logprobs", "F32", {B, T}, r),
                                  make("mask", "U8", {B, T}, mask)};
    };
    write_st(dir + "/good.safetensors", good(tr, ro));
    {
        // old_logprobs = l_T under the rollout's weights: numeric part = old - ro, lag part = tr - old
        std::vector<float> old(B * T);
        for (std::uint64_t i = 0; i < B * T; ++i) old[i] = ro[i] + 0.0005f;
        auto es = good(tr, ro);
        es.push_back(make("old_logprobs", "F32", {B, T}, old));
        write_st(dir + "/lag.safetensors", es);
        std::vector<float> old7(B * 7, -1.0f);
        auto bad = good(tr, ro);
        bad.push_back(make("old_logprobs", "F32", {B, 7}, old7));
        write_st(dir + "/lag_bad_shape.safetensors", bad);
    }
    {
        auto r = ro;
        r[2 * T + 5] = std::nanf("");
        write_st(dir + "/nan.safetensors", good(tr, r));
    }
    {
        auto t = tr;
        t[1 * T + 3] = 0.25f;
        write_st(dir + "/positive.safetensors", good(t, ro));
    }
    {
        auto t = tr;
        t[3 * T + 7] = -INFINITY;
        write_st(dir + "/inf.safetensors", good(t, ro));
    }
    {
        std::vector<float> r7(B * 7, -1.0f);
        write_st(dir + "/shape_mismatch.safetensors",
                 {make("train_logprobs", "F32", {B, T}, tr), make("rollout_logprobs", "F32", {B, 7}, r7),
                  make("mask", "U8", {B, T}, mask)});
    }
    {
        std::vector<double> r64(ro.begin(), ro.end());
        write_st(dir + "/dtype_mismatch.safetensors",
                 {make("train_logprobs", "F32", {B, T}, tr), make("rollout_logprobs", "F64", {B, T}, r64),
                  make("mask", "U8", {B, T}, mask)});
    }
    {
        std::vector<std::uint8_t> m3(3 * T, 1);
        write_st(dir + "/mask_mismatch.safetensors",
                 {make("train_logprobs", "F32", {B, T}, tr), make("rollout_logprobs", "F32", {B, T}, ro),
                  make("mask", "U8", {3, T}, m3)});
    }
    {
        std::vector<std::int64_t> cu{0, 10, 5, 32};
        write_st(dir + "/bad_offsets.safetensors",
                 {make("train_logprobs", "F32", {B * T}, tr), make("rollout_logprobs", "F32", {B * T}, ro),
                  make("cu_seqlens", "I64", {4}, cu)});
        std::vector<std::int32_t> cu2{0, 10, 40};
        write_st(dir + "/offsets_out_of_range.safetensors",
                 {make("train_logprobs", "F32", {B * T}, tr), make("rollout_logprobs", "F32", {B * T}, ro),
                  make("cu_seqlens", "I32", {3}, cu2)});
        std::vector<std::int32_t> cu3{0, 10, 32};
        write_st(dir + "/packed_good.safetensors",
                 {make("train_logprobs", "F32", {B * T}, tr), make("rollout_logprobs", "F32", {B * T}, ro),
                  make("cu_seqlens", "I32", {3}, cu3)});
    }
    write_st(dir + "/missing_rollout.safetensors",
             {make("train_logprobs", "F32", {B, T}, tr), make("mask", "U8", {B, T}, mask)});
    write_st(dir + "/missing_mask.safetensors",
             {make("train_logprobs", "F32", {B, T}, tr), make("rollout_logprobs", "F32", {B, T}, ro)});
    {
        std::vector<std::uint8_t> none(B * T, 0);
        write_st(dir + "/all_masked.safetensors",
                 {make("train_logprobs", "F32", {B, T}, tr), make("rollout_logprobs", "F32", {B, T}, ro),
                  make("mask", "U8", {B, T}, none)});
    }
    {
        const auto es = good(tr, ro);
        const std::string full = safetensors(es, header_of(es));
        write_raw(dir + "/truncated_data.safetensors", full.substr(0, full.size() - 17));
        write_raw(dir + "/truncated_header.safetensors", full.substr(0, 40));
        write_raw(dir + "/tiny.safetensors", full.substr(0, 5));
        std::string corrupt = full;
        corrupt[8] = '#';  // the header's opening brace
        write_raw(dir + "/corrupt_header.safetensors", corrupt);
        write_raw(dir + "/empty.safetensors", "");
    }
    write_npy(dir + "/train.npy", "<f4", {B, T}, tr.data(), tr.size() * 4);
    write_npy(dir + "/rollout.npy", "<f4", {B, T}, ro.data(), ro.size() * 4);
    write_npy(dir + "/mask.npy", "|u1", {B, T}, mask.data(), mask.size());
    write_npy(dir + "/truncated.npy", "<f4", {B, T}, ro.data(), ro.size() * 4 - 3);
    write_raw(dir + "/bad.csv", "run,group,update,delta_abs_mean\nr1,sync,1,0.01\nr1,sync,2,oops\n");
    return 0;
}
