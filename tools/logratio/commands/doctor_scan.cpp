#include "doctor_scan.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <type_traits>

#include <logratio/core/error.hpp>

#include "../io/mapped_file.hpp"
#include "../io/safetensors.hpp"
#include "../io/tensor_names.hpp"
#include "../kernels.hpp"
#include "../output/runs_output.hpp"

namespace logratio_cli {

logratio::doctor::diagnosis diagnose_tensors(const panel_tensors& in, const tensor* old, unsigned threads) {
    if (old && in.train && (old->type != in.train->type || old->shape != in.train->shape))
        throw logratio::shape_error("old_logprobs is " + std::string(dtype_label(old->type)) + " " +
                                    old->shape_string() + ", train_logprobs is " + dtype_label(in.train->type) + " " +
                                    in.train->shape_string() + ": they must match");
    logratio::doctor::diagnosis d;
    with_panel_view(in, [&](const auto& view) {
        using T = typename std::decay_t<decltype(view)>::value_type;
        std::vector<std::unique_ptr<unsigned char[]>> keep;
        logratio::doctor::diagnose_options o;
        o.threads = threads;
        if (old) o.old_logprobs = input_detail::typed<T>(*old, keep);
        d = kernels::diagnose(view, o);
    });
    return d;
}

logratio::doctor::diagnosis diagnose_file(const std::string& path, const std::string& old_name, unsigned threads) {
    mapped_file f(path);
    const auto st = parse_safetensors(f);
    const panel_tensors in = dump_tensors(st, path, "");
    const tensor* old = st.find(old_name.empty() ? std::string("old_logprobs") : old_name);
    if (!old && !old_name.empty()) throw logratio::shape_error(path + ": --old: no tensor '" + old_name + "'");
    try {
        return diagnose_tensors(in, old, threads);
    } catch (const logratio::error& e) {
        throw logratio::error(path + ": " + e.what());
    }
}

namespace {

/// Identity of a dump: --pattern, else __metadata__ run/update, else its path.
void identify_dump(dump_diagnosis& x, const std::string& rel, const path_pattern* pattern) {
    dump_panel id;
    bool have = false;
    if (pattern) {
        if (!pattern->match(rel, id))
            throw logratio::error(x.path + ": path '" + rel + "' does not match --pattern '" + pattern->text() + "'");
        have = true;
    } else {
        mapped_file f(x.path);
        const auto st = parse_safetensors(f);
        const auto r = st.metadata.find("run"), u = st.metadata.find("update");
        if (r != st.metadata.end() && u != st.metadata.end()) {
            char* end = nullptr;
            id.run = r->second;
            id.update = std::strtod(u->second.c_str(), &end);
            have = end == u->second.c_str() + u->second.size() && !u->second.empty();
        }
    }
    if (have) {
        x.run = id.run;
        x.update = id.update;
        x.label = id.run + "@" + fmt(id.update, "%g");
    } else {
        x.label = rel;
    }
}

}  // namespace

std::vector<dump_diagnosis> diagnose_directory(const std::string& dir, const std::string& pattern,
                                               const std::string& old, unsigned threads) {
    const auto files = list_dumps(dir);
    std::optional<path_pattern> pat;
    if (!pattern.empty()) pat.emplace(pattern);
    const std::string base = std::filesystem::path(dir).lexically_normal().string();
    std::vector<dump_diagnosis> out(files.size());
    for_each_item(files.size(), threads, [&](std::size_t i) {
        out[i].path = files[i];
        identify_dump(out[i], std::filesystem::path(files[i]).lexically_relative(base).string(), pat ? &*pat : nullptr);
        out[i].d = diagnose_file(files[i], old);
    });
    return out;
}

std::vector<dump_diagnosis> diagnose_dumps(const std::vector<dump_panel>& dumps, unsigned threads) {
    std::vector<dump_diagnosis> out(dumps.size());
    for_each_item(dumps.size(), threads, [&](std::size_t i) {
        out[i].path = dumps[i].path;
        out[i].run = dumps[i].run;
        out[i].update = dumps[i].update;
        out[i].label = dumps[i].run + "@" + fmt(dumps[i].update, "%g");
        out[i].d = diagnose_file(dumps[i].path, "");
    });
    return out;
}

}  // namespace logratio_cli
