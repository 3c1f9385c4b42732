#include "npy.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

#include <logratio/core/error.hpp>

#include "mapped_file.hpp"

namespace logratio_cli {

namespace {
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
    const std::string k = "'" + key + "'";
    const auto p = header.find(k);
    if (p == std::string::npos) throw logratio::format_error(path + ": .npy header has no " + k);
    auto c = header.find(':', p + k.size());
    if (c == std::string::npos) throw logratio::format_error(path + ": .npy header: no value for " + k);
    ++c;
    while (c < header.size() && header[c] == ' ') ++c;
    if (c >= header.size()) throw logratio::format_error(path + ": .npy header: no value for " + k);
    std::size_t e;
    if (header[c] == '\'') {
        e = header.find('\'', c + 1);
        if (e == std::string::npos) throw logratio::format_error(path + ": .npy header: unterminated string");
        return header.substr(c + 1, e - c - 1);
    }
    if (header[c] == '(') {
        e = header.find(')', c);
        if (e == std::string::npos) throw logratio::format_error(path + ": .npy header: unterminated shape tuple");
        return header.substr(c + 1, e - c - 1);
    }
    e = header.find_first_of(",}", c);
    if (e == std::string::npos) throw logratio::format_error(path + ": .npy header: malformed value for " + k);
    return header.substr(c, e - c);
}
}  // namespace

tensor parse_npy(const unsigned char* data, std::size_t size, const std::string& path, const std::string& name) {
    using logratio::format_error;
    using logratio::detail::concat;
    if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
        throw format_error(path + ": not a .npy file (bad magic or truncated before offset 10)");
    const unsigned major = data[6];
    std::uint64_t hlen, hstart;
    if (major == 1) {
        hlen = data[8] | (static_cast<std::uint64_t>(data[9]) << 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) throw format_error(path + ": truncated .npy header");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<std::uint64_t>(data[8 + i]) << (8 * i);
        hstart = 12;
    } else {
        throw format_error(concat(path, ": unsupported .npy format version ", major));
    }
    if (hlen > size - hstart)
        throw format_error(concat(path, ": truncated .npy header (", hlen, " bytes at offset ", hstart, ", file has ",
                                  size, ")"));
    const std::string header(reinterpret_cast<const char*>(data + hstart), hlen);
    const std::string descr = dict_value(header, "descr", path);
    const std::string fortran = dict_value(header, "fortran_order", path);
    const std::string shape = dict_value(header, "shape", path);
    if (fortran.find("True") != std::string::npos)
        throw format_error(path + ": Fortran-order .npy arrays are not supported (save with C order)");
    tensor t;
    t.name = name;
    static const std::pair<const char*, dtype> types[] = {
        {"<f4", dtype::f32}, {"<f8", dtype::f64}, {"<f2", dtype::f16}, {"<i4", dtype::i32}, {"<i8", dtype::i64},
        {"|u1", dtype::u8},  {"|i1", dtype::i8},  {"|b1", dtype::boolean}};
    bool known = false;
    for (const auto& ty : types)
        if (descr == ty.first) {
            t.type = ty.second;
            known = true;
        }
    if (!known) throw format_error(path + ": unsupported .npy dtype '" + descr + "'");
    std::uint64_t numel = 1;
    std::size_t p = 0;
    while (p < shape.size()) {
        while (p < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
        if (p >= shape.size()) break;
        std::uint64_t x = 0;
        bool digits = false;
        while (p < shape.size() && shape[p] >= '0' && shape[p] <= '9') {
            if (x > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) throw format_error(path + ": shape overflow");
            x = x * 10 + static_cast<std::uint64_t>(shape[p] - '0');
            ++p;
            digits = true;
        }
        if (!digits) throw format_error(path + ": malformed .npy shape '(" + shape + ")'");
        if (x != 0 && numel > std::numeric_limits<std::uint64_t>::max() / x) throw format_error(path + ": shape overflow");
        numel *= x;
        t.shape.push_back(x);
    }
    const std::uint64_t start = hstart + hlen;
    const std::uint64_t es = dtype_size(t.type);
    if (numel > std::numeric_limits<std::uint64_t>::max() / es || numel * es != size - start)
        throw format_error(concat(path, ": .npy data is ", size - start, " bytes at offset ", start, ", shape ",
                                  t.shape_string(), " needs ", numel * es, " (file truncated or corrupt)"));
    t.data = data + start;
    t.nbytes = numel * es;
    t.file_offset = start;
    return t;
}

tensor parse_npy(const mapped_file& f, const std::string& name) {
    return parse_npy(f.data(), f.size(), f.path(), name);
}

}  // namespace logratio_cli
