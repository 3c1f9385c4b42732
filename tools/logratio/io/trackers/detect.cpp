#include "detect.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "../files_read.hpp"
#include "attributes.hpp"
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
    text.erase(0, utf8_bom_size(text));
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

std::string sniff_file(const std::string& path, text_table& table, bool whole = true);

/// The kinds of history file a directory-of-files reader takes, each with
/// its label (in errors and notes) and the reader's --format.
struct history_kind {
    const char* label;
    const char* plural;  ///< the reader's name for a directory of them
    const char* format;
};
const std::map<std::string, history_kind>& history_kinds() {
    static const std::map<std::string, history_kind> k{
        {"trl", {"TRL trainer_state.json", "TRL trainer_state.json files", "trl"}},
        {"verl", {"verl file-logger history (.jsonl)", "verl file-logger histories", "json"}},
        {"wandb-json", {"W&B JSON history", "W&B JSON histories", "json"}},
        {"wandb-csv", {"W&B history CSV export", "W&B history CSV exports", "wandb-history"}},
        {"long", {"long table", "long tables", "long"}},
        {"chart", {"W&B chart export", "W&B chart exports", "wandb-chart"}},
    };
    return k;
}

/// The kind of one candidate file ("" if it is no history: a config, a
/// summary, an unknown table). A .json file is a candidate only as an array
/// of records: W&B and transformers keep single-object .json files (config,
/// wandb-summary.json, tokenizer) beside their histories.
std::string history_file_kind(const fs::path& file) {
    if (file.filename() == "trainer_state.json") return "trl";
    const std::string ext = file.extension().string();
    const std::string head = head_bytes(file.string());
    const char c = first_significant_byte(head);
    if (ext == ".json" && c != '[') return "";
    if (ext != ".json" && ext != ".jsonl" && ext != ".csv") return "";
    text_table t;
    std::string f;
    try {
        f = sniff_file(file.string(), t);
    } catch (const logratio::error&) {
        return "";  // not a table logratio reads (a cut or malformed CSV): not a history file
    }
    if (f == "json") {  // verl's file logger: {"step": N, "data": {...}} lines
        const std::string first = head.substr(0, head.find('\n'));
        const bool verl = c == '{' && first.find("\"data\"") != std::string::npos && first.find("\"step\"") != std::string::npos;
        return verl ? "verl" : "wandb-json";
    }
    if (f == "wandb-history") return "wandb-csv";
    if (f == "long") return "long";
    if (f == "wandb-chart") return "chart";
    return f == "trl" ? "trl" : "";
}

/// The history files under a directory (6 levels), by kind.
std::map<std::string, std::vector<fs::path>> history_file_kinds(const std::string& dir) {
    std::vector<fs::path> files;
    find_files(dir, 6, [](const fs::path& p) {
        const auto e = p.extension();
        return p.filename() == "trainer_state.json" || e == ".json" || e == ".jsonl" || e == ".csv";
    }, files);
    std::map<std::string, std::vector<fs::path>> out;
    for (const auto& f : files)
        if (const std::string k = history_file_kind(f); !k.empty()) out[k].push_back(f);
    return out;
}

/// What a directory turned out to be: the --format, the path to read (a
/// project's mlruns/, wandb/ or MLflow database), notes for the user.
struct sniffed_directory {
    std::string format;
    std::string path;
    std::vector<std::string> notes;
};

/// The note for W&B run directories whose files/ hold the TensorBoard copy
/// sync_tensorboard makes of the history: the .wandb logs are read.
std::string tensorboard_copy_note(const std::string& dir, const std::vector<fs::path>& copies) {
    return dir + ": W&B run directories with a TensorBoard copy (sync_tensorboard) of their history: read the .wandb "
                 "logs, skipped " + std::to_string(copies.size()) + " event file(s) such as " + copies.front().string();
}

/// The tracker store one level down in a project directory (mlruns/,
/// mlflow.db / mlruns.db, wandb/), opened with a note; format "" if none.
sniffed_directory project_store(const std::string& dir) {
    const fs::path d(dir);
    sniffed_directory out;
    if (is_dir(d / "mlruns") && !mlflow_run_dirs(d / "mlruns").empty()) out = {"mlflow", (d / "mlruns").string(), {}};
    else if (is_file(d / "mlflow.db")) out = {"mlflow-sqlite", (d / "mlflow.db").string(), {}};
    else if (is_file(d / "mlruns.db")) out = {"mlflow-sqlite", (d / "mlruns.db").string(), {}};
    else if (is_dir(d / "wandb")) {
        std::vector<fs::path> logs;
        find_files(d / "wandb", 3, wandb_log_name, logs);
        if (!logs.empty()) out = {"wandb-offline", (d / "wandb").string(), {}};
    }
    if (!out.format.empty()) out.notes.push_back(dir + ": a project directory: opened " + out.path);
    if (out.format == "wandb-offline") {  // the run directories' sync_tensorboard copies are skipped: said
        std::vector<fs::path> copies;
        find_files(d / "wandb", 5, tfevents_name, copies);
        if (!copies.empty()) out.notes.push_back(tensorboard_copy_note(out.path, copies));
    }
    return out;
}

/// Whether an event file is the TensorBoard copy W&B's sync_tensorboard
/// keeps in a run directory: a directory above it (run-*/, files/ below it)
/// holds a .wandb log.
bool in_wandb_run_dir(const fs::path& file, const fs::path& root) {
    for (fs::path d = file.parent_path(); !d.empty(); d = d.parent_path()) {
        for (const auto& e : sorted_entries(d))
            if (wandb_log_name(e) && is_file(e)) return true;
        if (d == root || d == d.parent_path()) break;
    }
    return false;
}

/// The --format a directory's layout asks for ("" if none).
sniffed_directory sniff_directory(const std::string& dir) {
    if (!mlflow_run_dirs(dir).empty()) return {"mlflow", dir, {}};
    if (auto p = project_store(dir); !p.format.empty()) return p;
    std::vector<fs::path> f;
    find_files(dir, 5, tfevents_name, f);
    if (!f.empty()) {
        const fs::path root(dir);
        if (!std::all_of(f.begin(), f.end(), [&](const fs::path& e) { return in_wandb_run_dir(e, root); }))
            return {"tensorboard", dir, {}};
        return {"wandb-offline", dir, {tensorboard_copy_note(dir, f)}};
    }
    const auto kinds = history_file_kinds(dir);
    if (kinds.count("trl")) return {kinds.size() == 1 ? "trl" : "history-files", dir, {}};
    find_files(dir, 4, wandb_log_name, f);
    if (!f.empty()) return {"wandb-offline", dir, {}};
    find_files(dir, 8, [](const fs::path& p) { return p.extension() == ".safetensors"; }, f);
    if (!f.empty()) return {"dumps", dir, {}};
    if (!kinds.empty()) return {"history-files", dir, {}};
    return {"", dir, {}};
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
                 ".safetensors dumps, no verl / W&B history files; it holds: " + (files.empty() ? std::string("nothing") : files) +
           "); give a file, or --format";
}

/// The --format a file's bytes ask for ("" if none); `table` is filled
/// when the file was parsed as CSV to look at its header. Unless `whole`
/// (a directory's files: a CSV that does not parse is no history file), a
/// CSV whose header makes it a long table is not parsed here.
std::string sniff_file(const std::string& path, text_table& table, bool whole) {
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
    if (!whole) {  // a long table by its header: its reader parses the rest (once, and with the same errors)
        const auto columns = csv_header(path);
        const auto has = [&](const char* c) { return std::find(columns->begin(), columns->end(), c) != columns->end(); };
        text_table header;
        if (columns) header.columns = *columns;
        if (columns && !looks_like_chart_export(header) && has("run") && has("update")) return "long";
        // a W&B history by its header: read_one parses it once, storing only the columns the call reads
        if (columns && !looks_like_chart_export(header) && has("_step")) return "wandb-history";
    }
    table = read_csv_file(path);
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

/// A single-run history file's attributes: the config.yaml beside it (W&B
/// keeps one in each run's files/ directory, beside its history).
void attach_config_yaml(history_set& set, const std::string& path) {
    if (set.runs.size() != 1) return;
    const fs::path yaml = fs::path(path).parent_path() / "config.yaml";
    if (!is_file(yaml)) return;
    for (auto& [k, v] : read_wandb_config_yaml(yaml.string())) set.runs[0].attributes.emplace(k, v);
    set.notes.push_back(set.runs[0].name + ": attributes read from " + yaml.string());
}

/// One input read with the reader `format` names (`sniffed`: its CSV, if
/// sniff_file parsed it).
detected_input read_one(const std::string& path, const std::string& format, const key_filter& keys, text_table& sniffed,
                        unsigned threads) {
    detected_input d;
    if (format == "long") {  // the one long-table path (io/table_stream.hpp)
        d.kind = detected_input::long_table;
        const std::string head = head_bytes(path);
        char c = first_significant_byte(head);
        if (c == '\0' && head.size() == 4096) c = first_significant_byte(read_text_file(path));  // 4 KiB of spaces
        if (c == '{') d.streamed = long_table_of(parse_jsonl(read_text_file_without_bom(path), path));
        else if (!sniffed.columns.empty()) d.streamed = long_table_of(sniffed);  // sniff_file parsed it already
        else d.streamed = read_long_csv(path, threads);
        return d;
    }
    auto table = [&] { return sniffed.columns.empty() ? read_csv_file(path) : std::move(sniffed); };
    if (format == "dumps") d.kind = detected_input::dumps;
    else if (format == "history" || format == "wandb-history") {
        const std::string head = head_bytes(path);
        const char c = first_significant_byte(head);
        const auto history_table = [&] {  // the columns `keys` reads (all for --list-attributes, --metrics all)
            if (!sniffed.columns.empty() || keys.keeps_all()) return table();
            return read_csv_file(path, wandb_history_column_kept, &keys);
        };
        d.set = c == '{' || c == '[' ? read_json_history_file(path, keys)
                                     : read_wandb_history_table(history_table(), keys);
        attach_config_yaml(d.set, path);
    } else if (format == "wandb-chart") d.set = read_wandb_chart(table());
    else if (format == "json") {
        d.set = read_json_history_file(path, keys);
        attach_config_yaml(d.set, path);
    } else if (format == "mlflow") d.set = read_mlflow_files(path, keys);
    else if (format == "mlflow-sqlite") d.set = read_mlflow_sqlite(path, keys);
    else if (format == "trl") d.set = read_trl_states(path, keys);
    else {
        d.set = read_binary(format, path);
        drop_unwanted(d.set, keys);
    }
    return d;
}

}  // namespace

namespace {

/// Runs of several files sharing a name: each named by its file's path under
/// the directory (never merged), with a note.
void unique_file_run_names(history_set& out, const std::vector<std::string>& rel_of_run) {
    std::map<std::string, int> uses;
    for (const auto& r : out.runs) ++uses[r.name];
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
        auto& r = out.runs[i];
        if (uses[r.name] < 2) continue;
        const std::string stem_rel = rel_of_run[i].substr(0, rel_of_run[i].size() - fs::path(rel_of_run[i]).extension().string().size());
        const std::string name = fs::path(rel_of_run[i]).stem().string() == r.name ? stem_rel : stem_rel + " / " + r.name;
        out.notes.push_back(out.input + ": run '" + r.name + "' of " + rel_of_run[i] + " is named '" + name +
                            "' (another file has a run of the same name; runs of two files never merge)");
        r.name = name;
    }
}

}  // namespace

/// A directory of history files of one kind (verl file-logger .jsonl, W&B
/// history CSV or JSON exports, trainer_state.json): one run per file (as
/// each file alone reads: named by its stem, grouped by its directory);
/// files of two kinds are an error naming one of each.
history_set read_history_files(const std::string& dir, const key_filter& keys) {
    const auto kinds = history_file_kinds(dir);
    if (kinds.empty()) throw logratio::error(unknown_directory_message(dir));
    if (kinds.size() > 1) {
        std::string list;
        for (const auto& [k, files] : kinds)
            list += (list.empty() ? "" : ", ") + std::string(history_kinds().at(k).label) + " (" + relative_name(files.front(), dir) + ")";
        throw logratio::error(dir + ": a directory without a history logratio reads as one: it mixes kinds of history files: " + list +
                              "; give a directory holding one kind, or the files one by one");
    }
    const auto& [kind, files] = *kinds.begin();
    const history_kind& hk = history_kinds().at(kind);
    if (kind == "trl") return read_trl_states(dir, keys);
    if (kind == "long" || kind == "chart")
        throw logratio::error(dir + ": a directory of " + hk.plural + " (such as " + relative_name(files.front(), dir) +
                              "): give the files one by one");
    history_set out;
    out.reader = hk.plural;
    out.input = dir;
    std::vector<std::string> rel_of_run;
    for (const auto& f : files) {
        detected_input d = read_input(f.string(), hk.format, keys);
        for (auto& r : d.set.runs) {
            out.runs.push_back(std::move(r));
            rel_of_run.push_back(relative_name(f, dir));
        }
        out.notes.insert(out.notes.end(), d.set.notes.begin(), d.set.notes.end());
    }
    unique_file_run_names(out, rel_of_run);
    return out;
}

detected_input read_input(const std::string& path, std::string format, const key_filter& keys, unsigned long_table_threads) {
    keep_stream_input(path);  // a pipe: sniffed, then read, from one copy
    detected_input d;
    text_table sniffed;
    std::string where = path;  // a project directory's store
    std::vector<std::string> notes;
    if (format == "auto") {
        if (is_dir(path)) {
            sniffed_directory s = sniff_directory(path);
            format = s.format;
            where = s.path;
            notes = std::move(s.notes);
        } else {
            format = sniff_file(path, sniffed, false);
        }
        if (format.empty()) throw logratio::error(is_dir(path) ? unknown_directory_message(path) : unknown_file_message(path, sniffed));
    }
    if (is_dir(where) && (format == "history-files" || format == "json" || format == "history" || format == "wandb-history")) {
        d.set = read_history_files(where, keys);
    } else {
        d = read_one(where, format, keys, sniffed, long_table_threads);
    }
    d.set.notes.insert(d.set.notes.begin(), notes.begin(), notes.end());
    return d;
}

}  // namespace logratio_cli::trackers
