#include "../files_read.hpp"
#include "trl_state.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <logratio/core/error.hpp>

#include "../mapped_file.hpp"
#include "../table.hpp"
#include "attributes.hpp"
#include "fs_walk.hpp"
#include "json_scan.hpp"
#include "run_builder.hpp"

#ifdef LOGRATIO_HAVE_SIMDJSON
#include <unistd.h>

#include "json_ondemand.hpp"
#endif

namespace logratio_cli::trackers {

namespace {

/// N of "checkpoint-N", or -1.
long checkpoint_number(const std::string& dir_name) {
    if (dir_name.rfind("checkpoint-", 0) != 0 || dir_name.size() == 11) return -1;
    char* end = nullptr;
    const long n = std::strtol(dir_name.c_str() + 11, &end, 10);
    return *end ? -1 : n;
}

/// The "global_step" a trainer_state.json records, -1 if its first 4 KiB do
/// not say (transformers writes sorted keys: global_step comes before the
/// long log_history).
long recorded_global_step(const fs::path& file) {
    const std::string head = head_bytes(file.string());
    const auto at = head.find("\"global_step\":");
    if (at == std::string::npos) return -1;
    char* end = nullptr;
    const long n = std::strtol(head.c_str() + at + 14, &end, 10);
    return end == head.c_str() + at + 14 ? -1 : n;
}

/// Each run directory's latest trainer_state.json: of output_dir/ and its
/// checkpoint-N/, the one recording the largest global_step (the state
/// trainer.save_state() writes into output_dir at the end of training goes
/// past its last checkpoint), else the largest N.
std::map<fs::path, fs::path> latest_trainer_states(const fs::path& input) {
    std::vector<fs::path> files;
    if (is_file(input)) files.push_back(input);
    else
        find_files(input, 4, [](const fs::path& p) { return p.filename() == "trainer_state.json"; }, files);
    std::map<fs::path, std::pair<std::pair<long, long>, fs::path>> best;  // run -> ((global_step, N), file)
    for (const auto& f : files) {
        const fs::path ck = f.parent_path();
        const long n = checkpoint_number(ck.filename().string());
        const fs::path run = n >= 0 ? ck.parent_path() : ck;  // trainer_state.json also sits in output_dir
        const std::pair<long, long> rank{recorded_global_step(f), n};
        auto it = best.find(run);
        if (it == best.end() || rank > it->second.first) best[run] = {rank, f};
    }
    std::map<fs::path, fs::path> out;
    for (const auto& [run, e] : best) out[run] = e.second;
    return out;
}

/// The series each value of the previous entry went to, by its position in
/// the entry: log_history entries repeat their keys in one order, so one
/// compare finds the series instead of a lookup in the run's map (those
/// string compares were a seventh of a trainer_state.json read).
struct entry_slots {
    std::vector<std::string> keys;
    std::vector<run_builder::series*> series;
    run_builder::series& of(run_builder& b, std::size_t i, const std::string& key) {
        if (i >= keys.size()) {
            keys.resize(i + 1);
            series.resize(i + 1, nullptr);
        }
        if (!series[i] || keys[i] != key) {
            keys[i] = key;
            series[i] = &b.of(key);
        }
        return *series[i];
    }
};

/// One log_history entry (at '{'): its numeric values (booleans 1/0) at its
/// `step`; text, lists and nested values are not metrics and are passed over.
void read_log_entry(json_scanner& js, const std::string& path, std::size_t index, run_builder& b,
                    std::vector<std::pair<std::string, double>>& values, std::string& key, entry_slots& slots) {
    const auto place = [&] { return path + ": log_history[" + std::to_string(index) + "]"; };  // errors only
    if (js.peek() != '{') {
        js.skip_value();
        throw logratio::format_error(place() + ": an entry without 'step'");
    }
    std::size_t used = 0;
    std::optional<double> step;
    bool has_step = false;
    for (bool first = true; js.next_member(first, key);) {
        const char c = js.peek();
        std::optional<double> v;
        if (c == '{' || c == '[' || c == '"' || c == 'n') js.skip_value();  // null: not logged
        else if (c == 't' || c == 'f') {
            js.literal(c == 't' ? "true" : "false");
            v = c == 't' ? 1.0 : 0.0;
        } else {
            v = js.number();
        }
        if (key == "step") {
            has_step = true;
            step = v;
            continue;
        }
        if (!v || !b.wants(key)) continue;
        if (used == values.size()) values.emplace_back();
        values[used].first.assign(key);
        values[used++].second = *v;
    }
    if (!has_step) throw logratio::format_error(place() + ": an entry without 'step'");
    if (!step) throw logratio::format_error(place() + ": 'step' is not a number");
    if (!is_integer_step(*step)) integer_step(*step, place());  // throws, naming the entry
    const auto s = static_cast<std::int64_t>(*step);
    for (std::size_t i = 0; i < used; ++i) b.add(slots.of(b, i, values[i].first), s, values[i].second, std::nan(""), path, 0);
}

/// Whether a top-level field of TrainerState (transformers
/// src/transformers/trainer_callback.py) describes the run rather than its
/// progress (epoch, global_step, total_flos, best_metric, ... change as it
/// trains and are not attributes).
bool is_run_field(const std::string& key) {
    for (const char* k : {"train_batch_size", "num_train_epochs", "max_steps", "logging_steps", "eval_steps", "save_steps",
                          "is_hyper_param_search", "trial_name"})
        if (key == k) return true;
    return false;
}

/// A top-level scalar of the state (at its value) as an attribute: numbers
/// as attributes.hpp writes them, booleans true / false, strings as they
/// are; null, lists and objects are passed over.
void read_state_field(json_scanner& js, const std::string& key, run_history& run) {
    const char c = js.peek();
    if (c == '{' || c == '[' || c == 'n') return js.skip_value();
    std::string v;
    if (c == '"') js.string(v);
    else if (c == 't' || c == 'f') js.literal(c == 't' ? "true" : "false"), v = c == 't' ? "true" : "false";
    else v = number_text(js.number());
    run.attributes[key] = v;
}

/// The log_history of one trainer_state.json (`text`, its byte-order mark
/// skipped) into the run (one pass, json_scanner).
void scan_log_history(std::string_view text, const std::string& path, run_builder& b) {
    json_scanner js(text, path);
    const auto no_history = [&] {
        return logratio::format_error(path + ": no 'log_history' list (not a transformers trainer_state.json)");
    };
    if (js.peek() != '{') {
        js.skip_value();
        throw no_history();
    }
    std::string key, entry_key;
    std::vector<std::pair<std::string, double>> values;
    entry_slots slots;  // one builder per file (b)
    bool found = false;
    for (bool first = true; js.next_member(first, key);) {
        if (key != "log_history" || found) {
            if (is_run_field(key)) read_state_field(js, key, b.run());
            else js.skip_value();
            continue;
        }
        if (js.peek() != '[') {
            js.skip_value();
            throw no_history();
        }
        found = true;
        bool first_entry = true;
        for (std::size_t i = 0; js.next_element(first_entry); ++i) read_log_entry(js, path, i, b, values, entry_key, slots);
    }
    if (!js.at_end()) js.fail("text after the trainer state");
    if (!found) throw no_history();
}

#ifdef LOGRATIO_HAVE_SIMDJSON
/// What simd_log_history keeps per position in a log_history entry (as
/// entry_slots): the key last met there, whether the filter wants it (asked
/// once per key, not per value) and its series.
struct simd_slot {
    std::string key;
    bool wanted = false;
    run_builder::series* series = nullptr;
};
struct simd_entry_reader {
    run_builder& b;
    const std::string& path;
    std::vector<simd_slot> slots;
    std::vector<std::pair<std::size_t, double>> values;  ///< this entry's: (slot, value), capacity reused
    bool keys_all = true;  ///< the filter keeps every key (nothing to skip)

    /// A scalar as read_log_entry reads it: a number (Python's NaN and
    /// infinities), a boolean 1 / 0, nothing for null, text, lists and
    /// objects (validated); false where json_scanner might differ.
    /// (`has`: whether it is a value; `x` is then the value)
    static bool scalar(od::sj::value v, double& x, bool& has) {
        od::sj::json_type t;
        has = true;
        if (v.type().get(t)) return od::non_finite_value(v, '}', x);
        if (t == od::sj::json_type::number) return od::number(v, x, '}');
        if (t == od::sj::json_type::boolean) {
            bool f = false;
            if (v.get_bool().get(f)) return false;
            x = f ? 1.0 : 0.0;
            return true;
        }
        has = false;
        return od::valid(v, 3, '}');  // entry members: depth 3 of the document
    }
    /// Whether `v` (at position `i`, under `key`) is a number the filter
    /// does not want that json_scanner reads without an error
    /// (od::skipped_number): then it is passed over, not converted.
    bool skipped(od::sj::value& v, std::string_view key, std::size_t i) {
        od::sj::json_type t;
        if (keys_all || key == "step" || v.type().get(t) || t != od::sj::json_type::number) return false;
        return !slot(i, key).wanted && od::skipped_number(v, '}');
    }
    simd_slot& slot(std::size_t i, std::string_view key) {
        if (i >= slots.size()) slots.resize(i + 1);
        simd_slot& s = slots[i];
        if (s.key != key) {
            s.key.assign(key);
            s.wanted = b.wants(s.key);
            s.series = nullptr;
        }
        return s;
    }
    /// read_log_entry for one entry; false (nothing added) on anything
    /// json_scanner would read differently or call an error.
    bool entry(od::sj::value x) {
        od::sj::object o;
        if (x.get_object().get(o)) return false;
        values.clear();
        double step = 0, v = 0;
        bool has_step = false, step_number = false, has = false;
        std::size_t used = 0;
        for (auto f : o) {
            od::sj::field m;
            std::string_view key;
            if (std::move(f).get(m) || !od::key_text(m, key)) return false;
            od::sj::value mv = m.value();
            if (skipped(mv, key, used)) {  // a number the filter does not want: checked, not converted
                ++used;
                continue;
            }
            if (!scalar(mv, v, has)) return false;
            if (key == "step") {  // the last one counts, as in read_log_entry
                has_step = true;
                step_number = has;
                step = v;
                continue;
            }
            if (!has) continue;
            if (slot(used, key).wanted) values.emplace_back(used, v);
            ++used;
        }
        if (!has_step || !step_number || !is_integer_step(step)) return false;
        const auto at = static_cast<std::int64_t>(step);
        for (const auto& [i, value] : values) {  // (slots may have grown: indices, not pointers)
            simd_slot& s = slots[i];
            if (!s.series) s.series = &b.of(s.key);
            b.add(*s.series, at, value, std::nan(""), path, 0);
        }
        return true;
    }
};

/// read_state_field by simdjson; false where json_scanner might differ.
bool simd_state_field(od::sj::value v, const std::string& key, run_history& run) {
    od::sj::json_type t;
    double x = 0;
    std::string_view s;
    if (v.type().get(t)) {
        if (!od::non_finite_value(v, '}', x)) return false;
        run.attributes[key] = number_text(x);
        return true;
    }
    switch (t) {
    case od::sj::json_type::string:
        if (!od::string_text(v, s, '}')) return false;
        run.attributes[key] = std::string(s);
        return true;
    case od::sj::json_type::boolean: {
        bool f = false;
        if (v.get_bool().get(f)) return false;
        run.attributes[key] = f ? "true" : "false";
        return true;
    }
    case od::sj::json_type::number:
        if (!od::number(v, x, '}')) return false;
        run.attributes[key] = number_text(x);
        return true;
    default: return od::valid(v, 2, '}');
    }
}

/// scan_log_history by simdjson's On-Demand API (json_ondemand.hpp: no DOM,
/// numbers by simdjson; json_scanner's number() and string() were a third
/// of a trainer_state.json read); false where json_scanner might read the
/// text differently or call it an error: the caller then reads it again
/// with json_scanner, from a fresh builder. SIMDJSON_PADDING readable bytes
/// must follow `text`.
bool simd_log_history(std::string_view text, const std::string& path, run_builder& b) {
    od::sj::parser parser;
    od::sj::document doc;
    od::sj::object top;
    if (parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING).get(doc) ||
        doc.get_object().get(top))
        return false;
    simd_entry_reader r{b, path, {}, {}};
    r.keys_all = b.keeps_all();
    bool found = false;
    std::string key;
    for (auto f : top) {
        od::sj::field m;
        std::string_view k;
        if (std::move(f).get(m) || !od::key_text(m, k)) return false;
        od::sj::value v = m.value();
        key.assign(k);
        if (key != "log_history" || found) {
            if (!(is_run_field(key) ? simd_state_field(v, key, b.run()) : od::valid(v, 2, '}'))) return false;
            continue;
        }
        od::sj::array entries;
        if (v.get_array().get(entries)) return false;
        found = true;
        for (auto e : entries) {
            od::sj::value x;
            if (std::move(e).get(x) || !r.entry(x)) return false;
        }
    }
    return found && od::at_end(doc);
}
#endif

/// The log_history of one trainer_state.json into the run: by simdjson
/// where it reads the file as json_scanner would, else (an error to name,
/// an escape, a token it does not know) by json_scanner alone. The file is
/// mapped, not read into a string, where its last page has room for
/// simdjson's padding (else it is read, as before).
void read_log_history(const fs::path& file, run_builder& b) {
    const std::string path = file.string();
    const auto bom_skipped = [](std::string_view t) { return t.substr(utf8_bom_size(t)); };
#ifdef LOGRATIO_HAVE_SIMDJSON
    std::error_code ec;
    const std::string opened = openable_path(path);
    const auto size = fs::file_size(opened, ec);
    const auto page = static_cast<std::uintmax_t>(::sysconf(_SC_PAGESIZE));
    if (!ec && size > 0 && fs::is_regular_file(opened, ec) && size % page != 0 &&
        page - size % page >= simdjson::SIMDJSON_PADDING) {
        const mapped_file f(path);
        const std::string_view text = bom_skipped(std::string_view(reinterpret_cast<const char*>(f.data()), f.size()));
        run_builder fresh = b;  // nothing read yet: what json_scanner starts from if simdjson gives up
        if (simd_log_history(text, path, b)) return;
        b = std::move(fresh);
        return scan_log_history(text, path, b);
    }
#endif
    const std::string text = read_text_file(path);
    scan_log_history(bom_skipped(text), path, b);
}

}  // namespace

history_set read_trl_states(const std::string& input, const key_filter& keys) {
    const auto states = latest_trainer_states(input);
    if (states.empty()) throw logratio::format_error(input + ": no checkpoint-*/trainer_state.json");
    const fs::path base = is_file(input) ? fs::path(input).parent_path() : fs::path(input);
    std::map<std::string, run_builder> runs;
    history_set out;
    out.reader = "TRL trainer_state.json";
    out.input = input;
    const auto name_of = [](const fs::path& run_dir) {  // the run directory's name ("" and "." resolved)
        std::string n = run_dir.filename().string();
        if (!n.empty() && n != ".") return n;
        return fs::absolute(run_dir.empty() ? fs::path(".") : run_dir).lexically_normal().parent_path().filename().string();
    };
    std::map<std::string, int> uses;  // a name shared by runs of two groups: each named by its relative path
    for (const auto& st : states) ++uses[name_of(st.first)];
    for (const auto& [run_dir, file] : states) {
        const std::string rel = relative_name(run_dir, base);
        std::string name = name_of(run_dir);
        if (uses[name] > 1 && rel != ".") name = rel;
        if (runs.count(name))
            throw logratio::format_error(run_dir.string() + ": run name '" + name + "' is also the name of " +
                                         runs[name].run().source + " (two runs never merge)");
        auto& b = runs.emplace(name, run_builder(name, file.string(), "TRL log_history step", &keys)).first->second;
        const auto slash = rel.find('/');
        if (slash != std::string::npos && rel.find('/', slash + 1) == std::string::npos) b.run().group = rel.substr(0, slash);
        read_log_history(file, b);
        if (file.parent_path() != run_dir) out.notes.push_back(name + ": read " + relative_name(file, base) + " (latest checkpoint)");
    }
    out.runs = finish_runs(runs);
    return out;
}

}  // namespace logratio_cli::trackers
