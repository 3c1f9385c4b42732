#include "safetensors.hpp"

#include <limits>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>

#include "mapped_file.hpp"

namespace logratio_cli {

const tensor* safetensors_file::find(const std::string& name) const {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
}

dtype parse_safetensors_dtype(const std::string& s, const std::string& where) {
    static const std::pair<const char*, dtype> names[] = {
        {"F32", dtype::f32}, {"F64", dtype::f64}, {"F16", dtype::f16}, {"BF16", dtype::bf16}, {"I32", dtype::i32},
        {"I64", dtype::i64}, {"U8", dtype::u8},   {"I8", dtype::i8},   {"BOOL", dtype::boolean}};
    for (const auto& n : names)
        if (s == n.first) return n.second;
    throw logratio::format_error(where + ": unsupported dtype '" + s + "'");
}

safetensors_file parse_safetensors(const unsigned char* data, std::size_t size, const std::string& path) {
    using logratio::format_error;
    using logratio::detail::concat;
    if (size < 8)
        throw format_error(concat(path, ": truncated safetensors file: ", size,
                                  " bytes, the 8-byte header length is missing"));
    std::uint64_t header_len = 0;
    for (int i = 0; i < 8; ++i) header_len |= static_cast<std::uint64_t>(data[i]) << (8 * i);
    if (header_len > size - 8)
        throw format_error(concat(path, ": truncated or corrupt safetensors header: header length ", header_len,
                                  " at offset 0 exceeds the ", size - 8, " bytes after it"));
    const char* h = reinterpret_cast<const char*>(data + 8);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(h, h + header_len);
    } catch (const nlohmann::json::exception& e) {
        throw format_error(concat(path, ": corrupt safetensors header (JSON at offsets 8..", 8 + header_len,
                                  "): ", e.what()));
    }
    if (!j.is_object()) throw format_error(path + ": corrupt safetensors header: not a JSON object");
    const std::uint64_t data_start = 8 + header_len;
    const std::uint64_t data_size = size - data_start;
    safetensors_file out;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& name = it.key();
        const auto& v = it.value();
        if (name == "__metadata__") {
            if (!v.is_object()) throw format_error(path + ": __metadata__ is not an object");
            for (auto m = v.begin(); m != v.end(); ++m)
                out.metadata[m.key()] = m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
            continue;
        }
        const std::string where = path + ": tensor '" + name + "'";
        if (!v.is_object()) throw format_error(where + ": header entry is not an object");
        auto dt = v.find("dtype");
        auto sh = v.find("shape");
        auto off = v.find("data_offsets");
        if (dt == v.end() || !dt->is_string()) throw format_error(where + ": missing or non-string dtype");
        if (sh == v.end() || !sh->is_array()) throw format_error(where + ": missing or non-array shape");
        if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
            !(*off)[1].is_number_unsigned())
            throw format_error(where + ": data_offsets must be two non-negative integers");
        tensor t;
        t.name = name;
        t.type = parse_safetensors_dtype(dt->get<std::string>(), where);
        std::uint64_t numel = 1;
        for (const auto& d : *sh) {
            if (!d.is_number_unsigned()) throw format_error(where + ": shape entries must be non-negative integers");
            const std::uint64_t x = d.get<std::uint64_t>();
            if (x != 0 && numel > std::numeric_limits<std::uint64_t>::max() / x)
                throw format_error(where + ": shape overflows 64 bits");
            numel *= x;
            t.shape.push_back(x);
        }
        const std::uint64_t b = (*off)[0].get<std::uint64_t>(), e = (*off)[1].get<std::uint64_t>();
        if (b > e || e > data_size)
            throw format_error(concat(where, ": data_offsets [", b, ", ", e, "] outside the ", data_size,
                                      "-byte data section (file truncated or corrupt)"));
        const std::uint64_t es = dtype_size(t.type);
        if (numel > std::numeric_limits<std::uint64_t>::max() / es || e - b != numel * es)
            throw format_error(concat(where, ": data_offsets hold ", e - b, " bytes but shape ", t.shape_string(),
                                      " of ", dtype_label(t.type), " needs ", numel * es));
        t.data = data + data_start + b;
        t.nbytes = e - b;
        t.file_offset = data_start + b;
        out.tensors.emplace(name, std::move(t));
    }
    return out;
}

safetensors_file parse_safetensors(const mapped_file& f) {
    return parse_safetensors(f.data(), f.size(), f.path());
}

}  // namespace logratio_cli
