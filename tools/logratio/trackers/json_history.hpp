#pragma once
// JSON run histories:
//  - W&B scan_history() / history(pandas=False) records (wandb/wandb
//    wandb/apis/public/runs.py @00ff1266): one object per logging event with
//    `_step` (W&B's event counter), `_runtime`, `_timestamp` and the logged
//    keys; saved as JSON Lines or as one JSON array per run. Several runs in
//    one file carry a `run_id`, `run` or `name` key; runs are never merged.
//  - verl's `file` logger (volcengine/verl verl/utils/tracking.py @1dda039b,
//    FileLogger): lines {"step": N, "data": {...}}, N = verl's global step;
//    nested `data` objects are flattened with '/'.
//  - records with a plain `step` (e.g. TRL's log_history entries).
// Python's NaN / Infinity / -Infinity are accepted (lenient_json.hpp); null
// is "not logged"; nested values (W&B tables, histograms, media) and strings
// are skipped with a note naming their keys.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <logratio/error.hpp>

#include "history.hpp"
#include "lenient_json.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

namespace detail {

struct json_records_reader {
    std::string path;
    std::map<std::string, run_builder> runs;
    std::set<std::string> skipped;  ///< keys with nested or text values
    std::string step_name;
    const key_filter* keys = nullptr;

    static const char* run_key_of(const nlohmann::json& rec) {
        for (const char* k : {"run_id", "run", "name"})
            if (rec.contains(k) && rec[k].is_string()) return k;
        return nullptr;
    }

    void add_value(run_builder& b, const std::string& key, const nlohmann::json& v, std::int64_t step, double wall,
                   std::size_t line) {
        if (v.is_object()) {  // verl data dicts may nest; W&B media/histograms are objects with "_type"
            if (v.contains("_type")) {
                skipped.insert(key);
                return;
            }
            for (auto it = v.begin(); it != v.end(); ++it) add_value(b, key + "/" + it.key(), it.value(), step, wall, line);
            return;
        }
        if (v.is_null() || !b.wants(key)) return;
        const auto x = number_of(v);
        if (!x) {
            skipped.insert(key);
            return;
        }
        b.add(key, step, *x, wall, path, line);
    }

    void record(const nlohmann::json& rec, std::size_t line, std::size_t index) {
        using logratio::detail::concat;
        const std::string place = line ? concat(path, ": line ", line) : concat(path, ": record ", index);
        if (!rec.is_object()) throw logratio::format_error(place + ": not a JSON object");
        const nlohmann::json* data = &rec;
        std::string sname;
        const char* step_key = nullptr;
        if (rec.contains("_step")) {
            step_key = "_step";
            sname = "_step";
        } else if (rec.contains("step") && rec.contains("data") && rec["data"].is_object()) {
            step_key = "step";
            sname = "step (verl file logger)";
            data = &rec["data"];
        } else if (rec.contains("step")) {
            step_key = "step";
            sname = "step";
        } else {
            throw logratio::format_error(place + ": a history record needs '_step' (W&B) or 'step' (verl, TRL)");
        }
        if (step_name.empty()) step_name = sname;
        else if (step_name != sname)
            throw logratio::format_error(place + ": record has '" + step_key + "' but earlier records used " + step_name);
        const auto s = number_of(rec[step_key]);
        if (!s || std::isnan(*s)) throw logratio::format_error(place + ": '" + step_key + "' is not a number");
        const std::int64_t step = integer_step(*s, place);
        const char* rk = run_key_of(rec);
        const std::string name = rk ? rec[rk].get<std::string>() : file_stem(path);
        auto it = runs.find(name);
        if (it == runs.end()) it = runs.emplace(name, run_builder(name, path, step_name, keys)).first;
        double wall = std::nan("");
        if (rec.contains("_timestamp"))
            if (const auto w = number_of(rec["_timestamp"])) wall = *w;
        for (auto kv = data->begin(); kv != data->end(); ++kv) {
            const std::string& k = kv.key();
            if (data == &rec && (k == step_key || k == "_runtime" || k == "_timestamp" || (rk && k == rk))) continue;
            add_value(it->second, k, kv.value(), step, wall, line);
        }
    }
};

}  // namespace detail

/// Leading whitespace and a UTF-8 byte-order mark skipped: the first byte.
inline char first_significant_byte(const std::string& text) {
    std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
    return i < text.size() ? text[i] : '\0';
}

/// The runs of a JSON history (`text` is the file's content); `keys`: the
/// metrics read (the others are listed as unread).
inline history_set read_json_history_text(const std::string& text, const std::string& path,
                                          const key_filter& keys = key_filter()) {
    detail::json_records_reader r;
    r.path = path;
    r.keys = &keys;
    const std::size_t bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    history_set out;
    out.input = path;
    if (first_significant_byte(text) == '[') {
        const auto j = parse_python_json(text.substr(bom), path);
        for (std::size_t i = 0; i < j.size(); ++i) r.record(j[i], 0, i);
        out.reader = "JSON history (array)";
    } else {
        std::size_t line = 1, pos = bom;
        while (pos <= text.size()) {
            std::size_t nl = text.find('\n', pos);
            if (nl == std::string::npos) nl = text.size();
            const std::string s = text.substr(pos, nl - pos);
            if (s.find_first_not_of(" \t\r") != std::string::npos) r.record(parse_python_json(s, path, line), line, 0);
            pos = nl + 1;
            ++line;
        }
        out.reader = "JSON Lines history";
    }
    if (r.runs.empty()) throw logratio::format_error(path + ": no history records");
    if (r.step_name == "step (verl file logger)") out.reader = "verl file-logger history";
    out.runs = finish_runs(r.runs);
    // A one-run file (no run key): the directory holding it is its group.
    if (out.runs.size() == 1 && out.runs[0].name == file_stem(path)) out.runs[0].group = parent_dir_name(path);
    if (!r.skipped.empty()) {
        std::string keys;
        for (const auto& k : r.skipped) keys += (keys.empty() ? "" : ", ") + k;
        out.notes.push_back(path + ": skipped non-scalar values (tables, histograms, media, text) of: " + keys);
    }
    return out;
}

}  // namespace logratio_cli::trackers
