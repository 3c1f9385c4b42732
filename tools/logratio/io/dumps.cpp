#include "dumps.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>
#include <type_traits>

#include <logratio/core/error.hpp>

#include "../kernels.hpp"
#include "mapped_file.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "tensor_names.hpp"

namespace logratio_cli {

std::vector<std::string> list_dumps(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw logratio::error(dir + ": not a directory");
    std::vector<std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".safetensors") out.push_back(it->path().string());
    if (ec) throw logratio::error(dir + ": cannot list: " + ec.message());
    std::sort(out.begin(), out.end());
    if (out.empty()) throw logratio::error(dir + ": no .safetensors files");
    return out;
}

struct path_pattern::compiled {
    std::regex re;
};

path_pattern::path_pattern(const std::string& p) : text_(p) {
    std::string re;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == '{') {
            const auto e = p.find('}', i);
            if (e == std::string::npos) throw logratio::error("--pattern: unclosed '{' in '" + p + "'");
            const std::string f = p.substr(i + 1, e - i - 1);
            if (f != "run" && f != "group" && f != "update")
                throw logratio::error("--pattern: unknown field {" + f + "} (use {run}, {group}, {update})");
            fields_.push_back(f);
            re += f == "update" ? "(-?[0-9]+)" : "([^/]+?)";
            i = e;
        } else {
            if (std::string("\\^$.|?*+()[]").find(p[i]) != std::string::npos) re += '\\';
            re += p[i];
        }
    }
    if (std::find(fields_.begin(), fields_.end(), "update") == fields_.end() ||
        std::find(fields_.begin(), fields_.end(), "run") == fields_.end())
        throw logratio::error("--pattern '" + p + "' must contain {run} and {update}");
    re_ = std::make_shared<const compiled>(compiled{std::regex(re)});
}

bool path_pattern::match(const std::string& rel, dump_panel& d) const {
    std::smatch m;
    if (!std::regex_match(rel, m, re_->re)) return false;
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        const std::string v = m[i + 1].str();
        if (fields_[i] == "run") d.run = v;
        else if (fields_[i] == "group") d.group = v;
        else d.update = std::stod(v);
    }
    return true;
}

dump_panel panel_of_dump(const std::string& path, const std::string& rel, const path_pattern* pattern,
                         const logratio::panel_options& opt) {
    dump_panel d;
    d.path = path;
    mapped_file f(path);
    const auto st = parse_safetensors(f);
    for (const auto& [k, v] : st.metadata)
        if (k != "run" && k != "group" && k != "update") d.attributes[k] = v;
    if (pattern) {
        if (!pattern->match(rel, d))
            throw logratio::error(path + ": path '" + rel + "' does not match --pattern '" + pattern->text() + "'");
    } else {
        auto get = [&](const char* k) -> std::string {
            auto it = st.metadata.find(k);
            return it == st.metadata.end() ? std::string() : it->second;
        };
        d.run = get("run");
        d.group = get("group");
        const std::string u = get("update");
        if (d.run.empty() || u.empty())
            throw logratio::error(path + ": __metadata__ lacks 'run' or 'update' (give --pattern, e.g. "
                                         "'{group}/{run}/update_{update}.safetensors')");
        char* end = nullptr;
        d.update = std::strtod(u.c_str(), &end);
        if (end != u.c_str() + u.size()) throw logratio::error(path + ": __metadata__ update '" + u + "' is not a number");
    }
    if (d.group.empty()) d.group = "all";
    const panel_tensors in = dump_tensors(st, path, "");
    const tensor* old = st.find("old_logprobs");
    try {
        with_panel_view(in, [&](const auto& view) {
            d.panel = kernels::compute_panel_with_quantiles(view, opt, 1);
            if (old) {
                using T = typename std::decay_t<decltype(view)>::value_type;
                if (old->type != in.train->type || old->shape != in.train->shape)
                    throw logratio::shape_error("old_logprobs: dtype or shape differs from train_logprobs");
                std::vector<std::unique_ptr<unsigned char[]>> keep;
                d.split = kernels::compute_mismatch_split(view, input_detail::typed<T>(*old, keep), opt);
            }
        });
    } catch (const logratio::error& e) {
        throw logratio::error(path + ": " + e.what());
    }
    return d;
}

void for_each_item(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& work,
                   const std::function<void(std::size_t)>& finished) {
    std::atomic<std::size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::string first_error;
    std::mutex mu;
    auto run = [&] {
        for (std::size_t i; (i = next++) < n && !failed;) {
            try {
                work(i);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> g(mu);
                if (!failed.exchange(true)) first_error = e.what();
                return;
            }
            const std::size_t k = ++done;
            if (finished) {
                std::lock_guard<std::mutex> g(mu);
                finished(k);
            }
        }
    };
    threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, n)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run);
    run();
    for (auto& t : pool) t.join();
    if (failed) throw logratio::error(first_error);
}

std::vector<dump_panel> panels_of_directory(const std::string& dir, const std::string& pattern,
                                            const logratio::panel_options& opt, unsigned threads) {
    const auto files = list_dumps(dir);
    std::optional<path_pattern> pat;
    if (!pattern.empty()) pat.emplace(pattern);
    std::vector<dump_panel> out(files.size());
    const bool tty = ::isatty(2) != 0;
    const std::string base = std::filesystem::path(dir).lexically_normal().string();
    auto rel_of = [&](const std::string& p) { return std::filesystem::path(p).lexically_relative(base).string(); };
    auto progress = [&](std::size_t k) {
        const int w = 40, fill = static_cast<int>(w * k / files.size());
        std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu dumps", fill, "========================================", w - fill,
                     "", k, files.size());
        if (k == files.size()) std::fprintf(stderr, "\n");
    };
    try {
        for_each_item(
            files.size(), threads,
            [&](std::size_t i) { out[i] = panel_of_dump(files[i], rel_of(files[i]), pat ? &*pat : nullptr, opt); },
            tty ? std::function<void(std::size_t)>(progress) : nullptr);
    } catch (const logratio::error&) {
        if (tty) std::fprintf(stderr, "\n");
        throw;
    }
    std::vector<std::pair<std::string, double>> seen;
    std::sort(out.begin(), out.end(), [](const dump_panel& a, const dump_panel& b) {
        return a.run != b.run ? a.run < b.run : a.update < b.update;
    });
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i].run == out[i - 1].run && out[i].update == out[i - 1].update)
            throw logratio::error(logratio::detail::concat("run '", out[i].run, "' update ", out[i].update,
                                                           " appears twice: ", out[i - 1].path, " and ", out[i].path));
    return out;
}

std::vector<std::pair<std::string, std::optional<double>>> dump_columns(const dump_panel& d, bool split) {
    auto cols = logratio::panel_entries(d.panel);
    if (!split) return cols;
    const std::pair<const char*, const logratio::mismatch_part*> parts[] = {
        {"total", d.split ? &d.split->total : nullptr},
        {"numeric", d.split ? &d.split->numeric : nullptr},
        {"lag", d.split ? &d.split->lag : nullptr}};
    for (const auto& [name, m] : parts) {
        const std::pair<const char*, std::optional<double>> vals[] = {
            {"delta_mean", m ? std::optional<double>(m->delta_mean) : std::nullopt},
            {"delta_abs_mean", m ? std::optional<double>(m->delta_abs_mean) : std::nullopt},
            {"delta_std", m ? std::optional<double>(m->delta_std) : std::nullopt},
            {"kl_k3", m ? std::optional<double>(m->kl_k3) : std::nullopt}};
        for (const auto& [metric, v] : vals) cols.emplace_back(std::string(name) + "_" + metric, v);
    }
    return cols;
}

}  // namespace logratio_cli
