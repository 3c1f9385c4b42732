#include "mlflow_files.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include <logratio/core/error.hpp>

#include "run_builder.hpp"
#include "../files_read.hpp"
#include "../number_parse.hpp"

namespace logratio_cli::trackers {

namespace {

bool is_mlflow_run_dir(const fs::path& d) {
    return is_dir(d / "metrics") && (is_file(d / "meta.yaml") || is_dir(d / "tags"));
}

}  // namespace

std::vector<fs::path> mlflow_run_dirs(const fs::path& root) {
    std::vector<fs::path> out;
    if (is_mlflow_run_dir(root)) return {root};
    for (const auto& e : sorted_entries(root)) {
        if (!is_dir(e)) continue;
        if (is_mlflow_run_dir(e)) out.push_back(e);
        else
            for (const auto& r : sorted_entries(e))
                if (is_dir(r) && is_mlflow_run_dir(r)) out.push_back(r);
    }
    return out;
}

namespace {

std::string first_line_of(const fs::path& p) {
    std::ifstream f(p);
    if (f) note_file_read(p.string());
    std::string s;
    std::getline(f, s);
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

/// tags/mlflow.runName, else meta.yaml's run_name, else the run id.
std::string mlflow_run_name(const fs::path& run) {
    if (is_file(run / "tags" / "mlflow.runName")) {
        const std::string n = first_line_of(run / "tags" / "mlflow.runName");
        if (!n.empty()) return n;
    }
    std::ifstream meta(run / "meta.yaml");
    if (meta) note_file_read((run / "meta.yaml").string());
    for (std::string line; std::getline(meta, line);)
        if (line.rfind("run_name: ", 0) == 0) {
            std::string n = line.substr(10);
            while (!n.empty() && (n.back() == '\r' || n.back() == ' ')) n.pop_back();
            if (n.size() >= 2 && (n.front() == '\'' || n.front() == '"') && n.back() == n.front()) n = n.substr(1, n.size() - 2);
            if (!n.empty()) return n;
        }
    return run.filename().string();
}

/// A run directory's id and its experiment's (unique, and it starts with
/// the run id that unique_run_names shows).
std::string run_key(const fs::path& run) {
    return run.filename().string() + " in " + run.parent_path().filename().string();
}

/// Whether meta.yaml says the run was deleted (lifecycle_stage: deleted).
bool is_deleted_run(const fs::path& run) {
    std::ifstream meta(run / "meta.yaml");
    if (meta) note_file_read((run / "meta.yaml").string());
    for (std::string line; std::getline(meta, line);)
        if (line.rfind("lifecycle_stage:", 0) == 0) return line.find("deleted") != std::string::npos;
    return false;
}

/// One metrics/<key> file into the run.
void read_mlflow_metric_file(const fs::path& file, const std::string& key, run_builder& b) {
    using logratio::detail::concat;
    const std::string name = file.string();
    std::ifstream f(file, std::ios::binary);
    if (!f) throw logratio::error(name + ": cannot open: " + std::strerror(errno));
    note_file_read(name);
    auto& series = b.of(key);
    std::string line;
    for (std::size_t n = 1; std::getline(f, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        double field[3] = {0, 0, 0};  // timestamp value step (older stores: no step)
        int k = 0;
        const char* p = line.c_str();
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
            if (!*p) break;
            // from_chars (io/number_parse.hpp: half the store's reading time was strtod);
            // strtod where it stops short of a delimiter ('+', hex: what it read before)
            double x = 0;
            const char* end = parse_double(p, line.c_str() + line.size(), x);
            if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r')) {
                char* e = nullptr;
                x = std::strtod(p, &e);
                end = e;
            }
            if (end == p || k == 3 || (*end && *end != ' ' && *end != '\t' && *end != '\r'))
                throw logratio::format_error(concat(name, ": line ", n, ": want '<timestamp> <value> <step>' numbers, got '",
                                                    line, "'"));
            field[k++] = x;
            p = end;
        }
        if (k < 2) throw logratio::format_error(concat(name, ": line ", n, ": want '<timestamp> <value> <step>', got '", line, "'"));
        const double step = field[2];
        if (!is_integer_step(step))
            integer_step(step, concat(name, ": line ", n));  // throws, naming the place
        b.add(series, static_cast<std::int64_t>(step), field[1], field[0] / 1000.0, name, n);
    }
}

/// A whole params/ or tags/ file: MLflow writes the value alone (no newline;
/// a trailing one from a hand-made store is dropped).
std::string file_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw logratio::error(p.string() + ": cannot open: " + std::strerror(errno));
    note_file_read(p.string());
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!s.empty() && s.back() == '\n') s.pop_back();
    if (!s.empty() && s.back() == '\r') s.pop_back();
    return s;
}

/// The run's params/<key> and tags/<key> files as attributes (keys with '/'
/// are subdirectories); tags keep their names ("mlflow.runName"); a key both
/// a param and a tag keeps the param's value, with a note.
void read_mlflow_attributes(const fs::path& run, run_history& r, std::vector<std::string>& notes) {
    std::vector<fs::path> files;
    find_files(run / "params", 16, [](const fs::path&) { return true; }, files);
    for (const auto& f : files) r.attributes[relative_name(f, run / "params")] = file_text(f);
    files.clear();
    find_files(run / "tags", 16, [](const fs::path&) { return true; }, files);
    for (const auto& f : files) {
        const std::string key = relative_name(f, run / "tags");
        const auto [it, added] = r.attributes.emplace(key, file_text(f));
        if (!added) notes.push_back(run.string() + ": '" + key + "' is both a param and a tag: the param's value kept");
    }
}

}  // namespace

history_set read_mlflow_files(const std::string& path, const key_filter& keys) {
    const auto dirs = mlflow_run_dirs(path);
    if (dirs.empty())
        throw logratio::format_error(path + ": no MLflow run directories (<experiment>/<run>/metrics/ with meta.yaml)");
    history_set out;
    out.reader = "MLflow file store";
    out.input = path;
    // "<run id> in <experiment id>" (the directories' names) -> name, for the
    // live runs with metrics (MLflow hides deleted runs; a launch that
    // crashed before logging has no metric files): a name two of them share
    // gets each one's id
    std::map<std::string, std::string> live;
    std::map<std::string, std::vector<fs::path>> metric_files;  // by run key: each metrics/ walked once
    std::size_t deleted = 0;
    for (const auto& d : dirs) {
        if (is_deleted_run(d)) {
            ++deleted;
            continue;
        }
        std::vector<fs::path> files;
        find_files(d / "metrics", 16, [](const fs::path&) { return true; }, files);
        if (files.empty()) continue;
        live[run_key(d)] = mlflow_run_name(d);
        metric_files[run_key(d)] = std::move(files);
    }
    std::map<std::string, std::string> names = unique_run_names(live, path, out.notes);
    if (deleted)
        out.notes.push_back(logratio::detail::concat(path, ": ", deleted, " deleted run(s) not read (as MLflow hides them)"));
    std::map<std::string, run_builder> runs;
    for (const auto& d : dirs) {
        const auto n = names.find(run_key(d));
        if (n == names.end()) continue;
        const std::string& name = n->second;
        auto& b = runs.emplace(name, run_builder(name, d.string(), "MLflow step", &keys)).first->second;
        b.run().id = d.filename().string();  // the run_uuid
        b.keep_latest_by_time();
        read_mlflow_attributes(d, b.run(), out.notes);
        for (const auto& f : metric_files.at(run_key(d))) {
            const std::string key = relative_name(f, d / "metrics");
            if (b.wants(key)) read_mlflow_metric_file(f, key, b);
        }
    }
    if (runs.empty()) throw logratio::format_error(path + ": no live MLflow run has metrics (metrics/<key> files)");
    out.runs = finish_runs(runs, &out.notes);
    return out;
}

}  // namespace logratio_cli::trackers
