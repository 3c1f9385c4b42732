#pragma once
// A directory of token dumps (one safetensors file per run and update) to
// the long panel table: every file's panel, computed in parallel, with the
// run, group and update taken from the file's __metadata__ (keys run, group,
// update) or from a path pattern such as "{group}/{run}/update_{update}.safetensors".
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <logratio/logratio.hpp>

#include "atomic_file.hpp"
#include "mapped_file.hpp"
#include "kernels.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "tensor_names.hpp"
#include "table.hpp"

namespace logratio_cli {

struct dump_panel {
    std::string path, run, group;
    double update = 0;
    logratio::panel panel;
    std::optional<logratio::mismatch_split> split;  ///< when the dump has old_logprobs
};

/// Every *.safetensors file under dir (recursively), sorted by path.
inline std::vector<std::string> list_dumps(const std::string& dir) {
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

/// A path pattern with {run}, {group} and {update} fields, as a regex over
/// the path relative to the dump directory.
class path_pattern {
public:
    explicit path_pattern(const std::string& p) : text_(p) {
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
        re_ = std::regex(re);
    }
    /// Fills run/group/update from rel; false when it does not match.
    bool match(const std::string& rel, dump_panel& d) const {
        std::smatch m;
        if (!std::regex_match(rel, m, re_)) return false;
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            const std::string v = m[i + 1].str();
            if (fields_[i] == "run") d.run = v;
            else if (fields_[i] == "group") d.group = v;
            else d.update = std::stod(v);
        }
        return true;
    }
    const std::string& text() const { return text_; }

private:
    std::string text_;
    std::vector<std::string> fields_;
    std::regex re_;
};

/// The panel (with quantiles) of one dump, and its identity.
inline dump_panel panel_of_dump(const std::string& path, const std::string& rel, const path_pattern* pattern,
                                const logratio::panel_options& opt) {
    dump_panel d;
    d.path = path;
    mapped_file f(path);
    const auto st = parse_safetensors(f);
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
            d.panel = kernels::compute_panel(view, opt, 1);
            kernels::add_panel_quantiles(d.panel, view, opt.nonfinite);
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

/// Panels of every dump under dir, `threads` files at a time; a progress bar
/// on stderr when it is a terminal. The first error stops the work and is
/// rethrown (naming its file).
inline std::vector<dump_panel> panels_of_directory(const std::string& dir, const std::string& pattern,
                                                   const logratio::panel_options& opt, unsigned threads) {
    const auto files = list_dumps(dir);
    std::optional<path_pattern> pat;
    if (!pattern.empty()) pat.emplace(pattern);
    std::vector<dump_panel> out(files.size());
    std::atomic<std::size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::string first_error;
    std::mutex mu;
    const bool tty = ::isatty(2) != 0;
    const std::string base = std::filesystem::path(dir).lexically_normal().string();
    auto rel_of = [&](const std::string& p) { return std::filesystem::path(p).lexically_relative(base).string(); };
    auto work = [&] {
        for (;;) {
            const std::size_t i = next++;
            if (i >= files.size() || failed) return;
            try {
                out[i] = panel_of_dump(files[i], rel_of(files[i]), pat ? &*pat : nullptr, opt);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> g(mu);
                if (!failed.exchange(true)) first_error = e.what();
                return;
            }
            const std::size_t k = ++done;
            if (tty) {
                std::lock_guard<std::mutex> g(mu);
                const int w = 40, fill = static_cast<int>(w * k / files.size());
                std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu dumps", fill, "========================================",
                             w - fill, "", k, files.size());
                if (k == files.size()) std::fprintf(stderr, "\n");
            }
        }
    };
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(files.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (failed) {
        if (tty) std::fprintf(stderr, "\n");
        throw logratio::error(first_error);
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

inline std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

inline std::string number_cell(std::optional<double> v) {
    if (!v || std::isnan(*v)) return "";
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", *v);
    return b;
}

/// One dump's values after run/group/update/file: SPEC's keys, then with
/// `split` the numeric-vs-lag parts as <total|numeric|lag>_<metric> (absent
/// when the dump has no old_logprobs). The one list of these column names.
inline std::vector<std::pair<std::string, std::optional<double>>> dump_columns(const dump_panel& d, bool split) {
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

/// The long table as CSV: run, group, update, file, SPEC's keys, and the
/// numeric-vs-lag split columns when any dump has old_logprobs.
inline std::string panel_table_csv(const std::vector<dump_panel>& ds) {
    std::string s = "run,group,update,file";
    const bool split = std::any_of(ds.begin(), ds.end(), [](const dump_panel& d) { return d.split.has_value(); });
    for (const auto& k : dump_columns(ds.empty() ? dump_panel{} : ds.front(), split)) s += "," + k.first;
    s += "\n";
    for (const auto& d : ds) {
        s += csv_cell(d.run) + "," + csv_cell(d.group) + "," + number_cell(d.update) + "," + csv_cell(d.path);
        for (const auto& e : dump_columns(d, split)) s += "," + number_cell(e.second);
        s += "\n";
    }
    return s;
}

}  // namespace logratio_cli
