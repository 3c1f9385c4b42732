#include "safetensors_writer.hpp"

#include <nlohmann/json.hpp>

#include "atomic_file.hpp"

namespace logratio_cli {

void write_safetensors(const std::string& path, const std::vector<output_tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json h;
    if (!metadata.empty()) h["__metadata__"] = metadata;
    std::uint64_t off = 0;
    for (const auto& t : tensors) {
        h[t.name] = {{"dtype", dtype_label(t.type)}, {"shape", t.shape}, {"data_offsets", {off, off + t.nbytes}}};
        off += t.nbytes;
    }
    std::string header = h.dump();
    while ((8 + header.size()) % 8 != 0) header.push_back(' ');  // data starts 8-byte aligned
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
    atomic_file f(path);
    f.write(len, 8);
    f.write(header);
    for (const auto& t : tensors) f.write(t.data, t.nbytes);
    f.commit();
}

}  // namespace logratio_cli
