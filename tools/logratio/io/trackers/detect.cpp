#include "detect.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "fs_walk.hpp"
#include "json_history.hpp"
#include "lenient_json.hpp"
#include "mlflow_files.hpp"
#include "mlflow_sqlite.hpp"
#include "trl_state.hpp"
#include "wandb_chart.hpp"
#include "wandb_history.hpp"

#if __has_include("tensorboard.hpp")
#include "tensorboard.hpp"
#define LOGRATIO_CLI_HAVE_TENSORBOARD 1
#endif
#if __has_include("wandb_offline.hpp")
#include "wandb_offline.hpp"
#define LOGRATIO_CLI_HAVE_WANDB_OFFLINE 1
#endif

namespace logratio_cli::trackers {

namespace {

/// A reader of binary tracker files: `--format` name, what it reads, a
/// sniffer for one file, the reader (nullptr when not built in).
struct binary_reader {
    const char* format;
    const char* what;
    bool (*looks_like)(const std::string& file);
    history_set (*read)(const std::string& path);
};

bool tfevents_name(const fs::path& p) { return p.filename().string().find("tfevents") != std::string::npos; }
bool wandb_log_name(const fs::path& p) { return p.extension() == ".wandb"; }

const std::vector<binary_reader>& binary_readers() {
    static const std::vector<binary_reader> r{
#ifdef LOGRATIO_CLI_HAVE_TENSORBOARD
        {"tensorboard", "TensorBoard", [](const std::string& f) { return tfevents_name(f) || looks_like_tfrecord(f); },
         [](const std::string& p) { return read_tensorboard(p); }},
#else
        {"tensorboard", "TensorBoard", [](const std::string& f) { return tfevents_name(f); }, nullptr},
#endif
#ifdef LOGRATIO_CLI_HAVE_WANDB_OFFLINE
        {"wandb-offline", "W&B offline log", [](const std::string& f) { return looks_like_wandb_log(f); },
         [](const std::string& p) { return read_wandb_offline(p); }},
#else
        {"wandb-offline", "W&B offline log", [](const std::string& f) { return wandb_log_name(f); }, nullptr},
#endif
    };
    return r;
}

}  // namespace

const std::vector<std::string>& format_names() {
    static const std::vector<std::string> f{"auto", "long", "history", "wandb-history", "wandb-chart", "json",
                                            "mlflow", "mlflow-sqlite", "trl", "tensorboard", "wandb-offline", "dumps"};
    return f;
}

namespace {

std::string strip_bom(std::string text) {
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    return text;
}

history_set read_binary(const std::string& format, const std::string& path) {
    for (const auto& b : binary_readers())
        if (format == b.format) {
            if (!b.read)
                throw logratio::error(path + ": a " + b.what + " input, but this build of logratio has no " + b.what +
                                      " reader" +
                                      (format == "wandb-offline" ? std::string("; export it with `wandb sync` and read the W&B history")
                                                                 : std::string()));
            return b.read(path);
        }
    throw logratio::error("no reader '" + format + "'");
}

/// The --format a directory's layout asks for ("" if none).
std::string sniff_directory(const std::string& dir) {
    if (!mlflow_run_dirs(dir).empty()) return "mlflow";
    std::vector<fs::path> f;
    find_files(dir, 5, tfevents_name, f);
    if (!f.empty()) return "tensorboard";
    find_files(dir, 4, [](const fs::path& p) { return p.filename() == "trainer_state.json"; }, f);
    if (!f.empty()) return "trl";
    find_files(dir, 4, wandb_log_name, f);
    if (!f.empty()) return "wandb-offline";
    find_files(dir, 8, [](const fs::path& p) { return p.extension() == ".safetensors"; }, f);
    if (!f.empty()) return "dumps";
    return "";
}

std::string unknown_directory_message(const std::string& dir) {
    std::string files;
    std::size_t n = 0;
    for (const auto& e : sorted_entries(dir)) {
        if (n++ == 8) {
            files += ", ...";
            break;
        }
        files += (files.empty() ? "" : ", ") + e.filename().string() + (is_dir(e) ? "/" : "");
    }
    return dir + ": a directory without a history logratio reads (no MLflow <experiment>/<run>/metrics/, no "
                 "TensorBoard events.out.tfevents.*, no checkpoint-*/trainer_state.json, no W&B offline *.wandb, no "
                 ".safetensors dumps; it holds: " + (files.empty() ? std::string("nothing") : files) +
           "); give a file, or --format";
}

/// The --format a file's bytes ask for ("" if none); `table` is filled
/// when the file was parsed as CSV to look at its header.
std::string sniff_file(const std::string& path, text_table& table) {
    const std::string head = head_bytes(path);
    if (head.compare(0, 16, std::string("SQLite format 3\0", 16)) == 0) return "mlflow-sqlite";
    for (const auto& b : binary_readers())
        if (b.looks_like(path)) return b.format;
    if (fs::path(path).filename() == "trainer_state.json") return "trl";
    const char c = first_significant_byte(head);
    // a trainer_state.json under another name: one object whose keys
    // (sorted by transformers' save_to_json) reach "log_history" early
    if (c == '{' && head.find("\"log_history\":") != std::string::npos && head.find("\n{") == std::string::npos)
        return "trl";
    if (c == '{' || c == '[') {
        if (c == '{') {  // a long table in JSON Lines has run and update keys
            const std::string text = strip_bom(head.find('\n') != std::string::npos ? head : read_text_file(path));
            const auto nl = text.find('\n');
            if (json_object_has(text.substr(0, nl), path, {"run", "update"})) return "long";
        }
        return "json";
    }
    if (head.find('\0') != std::string::npos) return "";
    table = parse_csv(strip_bom(read_text_file(path)), path);
    if (looks_like_chart_export(table)) return "wandb-chart";
    if (table.column("run") && table.column("update")) return "long";
    if (table.column("_step")) return "wandb-history";
    return "";
}

std::string unknown_file_message(const std::string& path, const text_table& t) {
    if (!t.columns.empty())
        return path + ": a CSV table that is neither a long table (needs columns 'run' and 'update'), nor a W&B "
                      "history (needs '_step'), nor a W&B chart export ('Step', '<run> - <metric>' columns); columns: " +
               t.column_list() + "; add the columns, or name the layout with --format";
    const std::string head = head_bytes(path, 16);
    std::string hex;
    for (unsigned char ch : head) {
        char b[4];
        std::snprintf(b, sizeof b, "%02x ", ch);
        hex += b;
    }
    return path + ": a binary file logratio does not recognise (first bytes: " + hex +
           "); logratio reads TensorBoard event files, W&B offline .wandb logs, MLflow SQLite stores and .safetensors dumps";
}

/// Metrics `keys` does not keep become names in run_history::unread (for
/// readers that read everything: the binary formats, fast enough as they are).
void drop_unwanted(history_set& set, const key_filter& keys) {
    if (keys.keeps_all()) return;
    for (auto& r : set.runs)
        for (auto it = r.metrics.begin(); it != r.metrics.end();)
            if (keys.keeps(it->first)) ++it;
            else {
                r.unread.insert(it->first);
                it = r.metrics.erase(it);
            }
}

}  // namespace

detected_input read_input(const std::string& path, std::string format, const key_filter& keys) {
    detected_input d;
    text_table sniffed;
    if (format == "auto") {
        format = is_dir(path) ? sniff_directory(path) : sniff_file(path, sniffed);
        if (format.empty()) throw logratio::error(is_dir(path) ? unknown_directory_message(path) : unknown_file_message(path, sniffed));
    }
    auto table = [&] { return sniffed.columns.empty() ? parse_csv(strip_bom(read_text_file(path)), path) : std::move(sniffed); };
    if (format == "dumps") d.kind = detected_input::dumps;
    else if (format == "long") {
        d.kind = detected_input::long_table;
        const std::string text = strip_bom(read_text_file(path));
        d.table = first_significant_byte(text) == '{' ? parse_jsonl(text, path) : parse_csv(text, path);
    } else if (format == "history" || format == "wandb-history") {
        const std::string head = head_bytes(path);
        const char c = first_significant_byte(head);
        d.set = c == '{' || c == '[' ? read_json_history_text(read_text_file(path), path, keys)
                                     : read_wandb_history_table(table(), keys);
    } else if (format == "wandb-chart") d.set = read_wandb_chart(table());
    else if (format == "json") d.set = read_json_history_text(read_text_file(path), path, keys);
    else if (format == "mlflow") d.set = read_mlflow_files(path, keys);
    else if (format == "mlflow-sqlite") d.set = read_mlflow_sqlite(path, keys);
    else if (format == "trl") d.set = read_trl_states(path, keys);
    else {
        d.set = read_binary(format, path);
        drop_unwanted(d.set, keys);
    }
    return d;
}

}  // namespace logratio_cli::trackers
