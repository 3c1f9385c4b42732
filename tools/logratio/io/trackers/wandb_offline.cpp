#include "../files_read.hpp"
#include "wandb_offline.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <logratio/core/error.hpp>

#include "../mapped_file.hpp"
#include "../sha256.hpp"
#include "attributes.hpp"
#include "crc32c.hpp"
#include "history.hpp"
#include "lenient_json.hpp"
#include "protobuf_wire.hpp"

namespace logratio_cli::trackers {

namespace wandb_detail {

namespace pb = logratio_cli::protobuf;

inline constexpr std::size_t block_size = 32768;
inline constexpr std::size_t chunk_header = 7;

/// What a value_json holds.
enum class json_kind { number, skipped };

/// Parses a JSON scalar as wandb writes it: a number, NaN, Infinity or
/// -Infinity; anything else (string, bool, null, object, array) is skipped.
/// A malformed number is reported by returning skipped with `malformed`.
json_kind parse_json_number(std::string_view s, double& out, bool& malformed) {
    malformed = false;
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    if (s == "NaN") return out = std::numeric_limits<double>::quiet_NaN(), json_kind::number;
    if (s == "Infinity") return out = std::numeric_limits<double>::infinity(), json_kind::number;
    if (s == "-Infinity") return out = -std::numeric_limits<double>::infinity(), json_kind::number;
    if (s.empty() || !(s.front() == '-' || (s.front() >= '0' && s.front() <= '9'))) return json_kind::skipped;
    // JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    std::size_t i = (s[0] == '-') ? 1 : 0;
    const auto digits = [&](std::size_t& k) {
        const std::size_t start = k;
        while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
        return k > start;
    };
    bool ok = i < s.size() && (s[i] == '0' ? (++i, true) : digits(i));
    if (ok && i < s.size() && s[i] == '.') ok = digits(++i);
    if (ok && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        ok = digits(i);
    }
    if (!ok || i != s.size()) return malformed = true, json_kind::skipped;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    if (r.ec == std::errc::result_out_of_range) {  // beyond double: +-inf as JSON readers do
        out = (s[0] == '-') ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    } else if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
        return malformed = true, json_kind::skipped;
    }
    return json_kind::number;
}

/// A history step: a JSON integer in int64 range (wandb writes _step as one).
bool parse_json_step(std::string_view s, std::int64_t& out) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

struct pending_value {
    std::size_t key_begin, key_end;
    double value;
};

/// One run while reading (the buffers are reused from record to record).
struct run_builder {
    std::string file;
    std::string run_id, display_name, group;
    std::map<std::string, std::vector<point>> metrics;
    std::unordered_map<std::string_view, std::vector<point>*> index;  // views into metrics' keys
    std::map<std::string, std::size_t> skipped;  // key -> skipped values (not numbers)
    std::string item_key, keys;
    std::vector<pending_value> values;
    std::string cut_off;  ///< a note when the log's last record is cut off
    std::map<std::string, std::string> attributes;  ///< the config, flattened
    std::map<std::string, std::string> changed;     ///< config keys set twice with different values
    bool has_config = false;                        ///< a config record was read (else files/config.yaml)
    std::vector<std::pair<std::string, std::string>> flat;  ///< one config item's attributes (reused)

    std::vector<point>& metric(std::string_view key) {
        const auto it = index.find(key);
        if (it != index.end()) return *it->second;
        auto& m = *metrics.emplace(std::string(key), std::vector<point>{}).first;
        index.emplace(std::string_view(m.first), &m.second);
        return m.second;
    }
};

/// A HistoryItem's key (nested keys joined with '.') and value_json.
void read_item(pb::reader r, std::string& key, std::string_view& value) {
    key.clear();
    value = {};
    bool nested = false;
    pb::field f;
    while (r.next(f)) {
        if (f.number == 1 && f.type == pb::wire_type::length_delimited && !nested) {
            key.assign(f.data, f.data + f.size);
        } else if (f.number == 2 && f.type == pb::wire_type::length_delimited) {
            if (!nested) key.clear();
            else key.push_back('.');
            nested = true;
            key.append(f.bytes());
        } else if (f.number == 16 && f.type == pb::wire_type::length_delimited) {
            value = f.bytes();
        }
    }
}

/// One HistoryRecord: its step, wall time and numeric items, into the run.
void read_history(pb::reader r, run_builder& run, std::size_t record_offset) {
    std::int64_t step = 0;
    bool has_step = false, has_record_step = false;
    std::int64_t record_step = 0;
    double wall_time = std::numeric_limits<double>::quiet_NaN();
    std::string& keys = run.keys;  // the numeric items' keys, back to back
    std::vector<pending_value>& values = run.values;
    keys.clear();
    values.clear();
    std::string& key = run.item_key;
    pb::field f;
    while (r.next(f)) {
        if (f.number == 2 && f.type == pb::wire_type::length_delimited) {
            pb::reader s = r.nested(f);
            pb::field g;
            while (s.next(g))
                if (g.number == 1 && g.type == pb::wire_type::varint) record_step = g.as_int64();
            has_record_step = true;
            continue;
        }
        if (f.number != 1 || f.type != pb::wire_type::length_delimited) continue;
        std::string_view value;
        read_item(r.nested(f), key, value);
        if (key == "_step") {
            if (!parse_json_step(value, step))
                throw logratio::format_error(logratio::detail::concat(run.file, ": byte ", f.offset, ": W&B history _step is not an integer: ", value));
            has_step = true;
        } else if (key == "_timestamp") {
            bool malformed = false;
            if (parse_json_number(value, wall_time, malformed) != json_kind::number) wall_time = std::numeric_limits<double>::quiet_NaN();
        } else if (!key.empty() && key[0] != '_') {
            double v = 0;
            bool malformed = false;
            if (parse_json_number(value, v, malformed) == json_kind::number) {
                values.push_back({keys.size(), keys.size() + key.size(), v});
                keys += key;
            } else if (malformed) {
                throw logratio::format_error(logratio::detail::concat(run.file, ": byte ", f.offset, ": W&B history value of '", key,
                                                                      "' is not valid JSON: ", value));
            } else {
                ++run.skipped[key];
            }
        }
    }
    if (!has_step && has_record_step) step = record_step, has_step = true;
    if (values.empty()) return;
    if (!has_step)
        throw logratio::format_error(logratio::detail::concat(run.file, ": byte ", record_offset,
                                                              ": W&B history record has neither a _step item nor a step (a run logged in W&B's shared mode has no step: "
                                                              "sync it with `wandb sync` and read an export of its history)"));
    for (const pending_value& v : values) {
        auto& pts = run.metric(std::string_view(keys).substr(v.key_begin, v.key_end - v.key_begin));
        if (!pts.empty() && pts.back().step >= step) {
            const auto it = std::lower_bound(pts.begin(), pts.end(), step, [](const point& p, std::int64_t s) { return p.step < s; });
            if (it != pts.end() && it->step == step) {
                const bool same = (it->value == v.value) || (std::isnan(it->value) && std::isnan(v.value));
                if (!same)
                    throw logratio::format_error(logratio::detail::concat(
                        run.file, ": byte ", record_offset, ": W&B history logs '", keys.substr(v.key_begin, v.key_end - v.key_begin),
                        "' twice at _step ", step, " with different values (", it->value, " and ", v.value, ")"));
                continue;
            }
            pts.insert(it, point{step, v.value, wall_time});
        } else {
            pts.push_back(point{step, v.value, wall_time});
        }
    }
}

/// A ConfigItem (key = 1, nested_key = 2, value_json = 16, per
/// wandb/proto/wandb_internal.proto @b6e29505): its key, nested keys joined
/// with '.', and its JSON value.
void read_config_item(pb::reader r, std::string& key, std::string_view& value) {
    read_item(r, key, value);  // HistoryItem and ConfigItem share these field numbers
}

/// Whether an attribute key is W&B's own (_wandb: the SDK's settings and telemetry).
bool is_wandb_internal(const std::string& key) { return key == "_wandb" || key.rfind("_wandb.", 0) == 0; }

/// A ConfigRecord (update = 1, remove = 2: repeated ConfigItem) into the
/// run's attributes: values flattened (json_config_attributes), the last
/// value of a key wins, as in W&B's config; removed keys are dropped.
void read_config(pb::reader r, run_builder& run, std::size_t record_offset) {
    run.has_config = true;
    std::string key;
    pb::field f;
    while (r.next(f)) {
        if (f.type != pb::wire_type::length_delimited || (f.number != 1 && f.number != 2)) continue;
        std::string_view value;
        read_config_item(r.nested(f), key, value);
        if (key.empty() || is_wandb_internal(key)) continue;
        if (f.number == 2) {  // remove: the key and what was nested under it
            for (auto it = run.attributes.lower_bound(key); it != run.attributes.end() &&
                                                            (it->first == key || it->first.rfind(key + ".", 0) == 0);)
                it = run.attributes.erase(it);
            continue;
        }
        run.flat.clear();
        json_config_attributes(std::string(value), logratio::detail::concat(run.file, ": byte ", record_offset, ": config '", key, "'"),
                               key, run.flat);
        for (auto& [k, v] : run.flat) set_attribute(run.attributes, k, std::move(v), &run.changed);
    }
}

/// A RunRecord: the id, display name, group (later records override) and
/// the config given to wandb.init (config = 4).
void read_run(pb::reader r, run_builder& run, std::size_t record_offset) {
    pb::field f;
    while (r.next(f)) {
        if (f.type != pb::wire_type::length_delimited || f.size == 0) continue;
        if (f.number == 4) read_config(r.nested(f), run, record_offset);
        else if (f.number == 1) run.run_id.assign(f.bytes());
        else if (f.number == 6) run.group.assign(f.bytes());
        else if (f.number == 8) run.display_name.assign(f.bytes());
    }
}

/// One Record: history, config (= 5) or run; every other record type is skipped.
void read_record(const unsigned char* data, std::size_t size, std::size_t offset, run_builder& run) {
    pb::reader r(data, size, pb::origin{&run.file, offset});
    pb::field f;
    while (r.next(f)) {
        if (f.type != pb::wire_type::length_delimited) continue;
        if (f.number == 2) read_history(r.nested(f), run, offset);
        else if (f.number == 5) read_config(r.nested(f), run, offset);
        else if (f.number == 17) read_run(r.nested(f), run, offset);
    }
}

[[noreturn]] void fail_log(const std::string& file, std::size_t at, const std::string& what) {
    throw logratio::format_error(logratio::detail::concat(file, ": byte ", at, ": W&B log ", what));
}

bool all_zero(const unsigned char* p, std::size_t n) {
    return std::all_of(p, p + n, [](unsigned char c) { return c == 0; });
}

/// Checks the 7-byte header (":W&B", magic 0xBEE1, version 0).
void check_header(const unsigned char* p, std::size_t size, const std::string& file) {
    if (size < chunk_header) fail_log(file, 0, logratio::detail::concat("header is truncated (", size, " of 7 bytes)"));
    if (std::string_view(reinterpret_cast<const char*>(p), 4) != ":W&B") fail_log(file, 0, "header does not start with ':W&B' (not a .wandb log)");
    if ((p[4] | p[5] << 8) != 0xBEE1) fail_log(file, 4, "header magic is not 0xBEE1");
    if (p[6] != 0) fail_log(file, 6, logratio::detail::concat("header version ", int(p[6]), " is not 0 (a newer W&B format?)"));
}

/// A .wandb log whose last record is cut off (a run killed or still
/// writing: wandb-core writes a block when it is full) keeps the records
/// before it, as `wandb sync` does (wandb/wandb: wandb/sync/sync.py warns
/// ".wandb file is incomplete" and syncs what it read), with a note.
void note_cut_off(run_builder& run, std::size_t at, const std::string& what) {
    run.cut_off = logratio::detail::concat(run.file, ": byte ", at, ": the log's last record is cut off (", what,
                                           "; a run killed or still writing?): the records before it read");
}

/// Every record of a .wandb log's bytes (chunks verified and joined); a
/// record cut off by the end of the file ends it with a note.
void read_log(const unsigned char* p, std::size_t size, run_builder& run) {
    const std::string& file = run.file;
    check_header(p, size, file);
    std::size_t pos = chunk_header, record_start = 0;
    std::string joined;  // a record split over chunks (FIRST MIDDLE* LAST)
    bool in_record = false;
    while (pos < size) {
        const std::size_t block_left = block_size - pos % block_size;
        if (block_left < chunk_header || (size - pos >= chunk_header && p[pos + 6] == 0 && all_zero(p + pos, chunk_header))) {
            const std::size_t n = std::min(block_left, size - pos);  // padding: zeros to the block's end
            if (!all_zero(p + pos, n)) fail_log(file, pos, "block trailer is not zero padding");
            pos += n;
            continue;
        }
        if (size - pos < chunk_header)
            return note_cut_off(run, in_record ? record_start : pos,
                                logratio::detail::concat("a chunk header of ", size - pos, " of 7 bytes"));
        const std::uint32_t crc = pb::load_le32(p + pos);
        const std::size_t length = std::size_t(p[pos + 4]) | std::size_t(p[pos + 5]) << 8;
        const unsigned type = p[pos + 6];
        if (chunk_header + length > block_left) fail_log(file, pos, "chunk crosses a 32 KiB block boundary (corrupt length)");
        if (chunk_header + length > size - pos)
            return note_cut_off(run, in_record ? record_start : pos,
                                logratio::detail::concat("a chunk of ", length, " data bytes with ", size - pos - chunk_header, " left"));
        if (type < 1 || type > 4) fail_log(file, pos, logratio::detail::concat("chunk type ", type, " is not FULL/FIRST/MIDDLE/LAST"));
        const unsigned char type_byte = static_cast<unsigned char>(type);
        if (crc32_zlib(p + pos + chunk_header, length, crc32_zlib(&type_byte, 1)) != crc) fail_log(file, pos, "chunk CRC-32 mismatch (corrupt file)");
        const unsigned char* data = p + pos + chunk_header;
        if ((type == 1 || type == 2) == in_record)
            fail_log(file, pos, in_record ? "record is not finished before the next one starts" : "chunk continues a record that was never started");
        if (type == 1) {
            read_record(data, length, pos + chunk_header, run);
        } else if (type == 2) {
            joined.assign(data, data + length);
            record_start = pos;
            in_record = true;
        } else {
            joined.append(data, data + length);
            if (type == 4) {
                read_record(reinterpret_cast<const unsigned char*>(joined.data()), joined.size(), record_start + chunk_header, run);
                in_record = false;
            }
        }
        pos += chunk_header + length;
    }
    if (in_record) note_cut_off(run, record_start, "its last chunk is missing");
}

/// A log without a config record: the config.yaml W&B keeps in the run
/// directory's files/ (what `wandb sync` uploads as the run's config), if any.
void config_yaml_fallback(const std::filesystem::path& log, run_builder& b, std::vector<std::string>& notes) {
    if (b.has_config) return;
    const auto yaml = log.parent_path() / "files" / "config.yaml";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(yaml, ec)) return;
    b.attributes = read_wandb_config_yaml(yaml.string());
    notes.push_back(b.file + ": no config record in the log: the run's attributes read from " + yaml.string());
}

/// The run_history of a builder; notes for skipped keys.
run_history finish_run(run_builder& b, const std::string& dir_name, std::vector<std::string>& notes) {
    run_history run;
    run.name = !b.display_name.empty() ? b.display_name : !b.run_id.empty() ? b.run_id : dir_name;
    run.group = b.group;
    run.source = b.file;
    run.step_name = "_step";
    b.index.clear();
    run.metrics = std::move(b.metrics);
    run.attributes = std::move(b.attributes);
    if (!b.changed.empty()) notes.push_back(changed_attributes_note("W&B run '" + run.name + "' (" + b.file + ")", b.changed));
    if (!b.cut_off.empty()) notes.push_back(b.cut_off);
    for (const auto& [key, n] : b.skipped)
        notes.push_back(logratio::detail::concat("W&B run '", run.name, "': skipped ", n, " value(s) of '", key,
                                                 "' (not a number: media, tables, text or booleans are not read)"));
    if (run.metrics.empty()) notes.push_back("W&B run '" + run.name + "' (" + b.file + ") has no numeric history");
    return run;
}

/// The .wandb logs of a path: the file itself, or every *.wandb file in the
/// directory and below (a run directory, a wandb/ directory of runs, or a
/// project holding wandb/), sorted. Symbolic links (wandb/latest-run) are not
/// followed, so no run is read twice.
std::vector<std::filesystem::path> wandb_logs(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return {path};
    std::vector<fs::path> logs;
    fs::recursive_directory_iterator it(path, ec), end;
    for (; !ec && it != end; it.increment(ec))
        if (!it->is_symlink() && it->is_regular_file() && it->path().extension() == ".wandb") logs.push_back(it->path());
    if (ec) throw logratio::error(path.string() + ": cannot list: " + ec.message());
    if (logs.empty())
        throw logratio::error(path.string() + ": no W&B offline logs (run-*.wandb) in this directory or below");
    std::sort(logs.begin(), logs.end());
    // a committed copy of wandb/latest-run/ last: its twin run-* directory is the one read
    std::stable_partition(logs.begin(), logs.end(),
                          [](const fs::path& p) { return p.parent_path().filename() != "latest-run"; });
    return logs;
}

/// A log read before that holds the same bytes as `file` (a committed copy
/// of wandb/latest-run/ next to its run-* directory), "" if none; `file` is
/// remembered. Digests are taken only of logs of equal size.
std::string identical_log_read_before(const std::string& file, std::uintmax_t size,
                                      std::multimap<std::uintmax_t, std::string>& sizes) {
    const auto [lo, hi] = sizes.equal_range(size);
    std::string digest;
    for (auto it = lo; it != hi; ++it) {
        if (digest.empty()) digest = digest_file(file).sha256;
        if (digest_file(it->second).sha256 == digest) return it->second;
    }
    sizes.emplace(size, file);
    return "";
}

}  // namespace wandb_detail

/// One .wandb log held in memory (one run; `name` names it in errors and
/// is its name if the log has no RunRecord); the entry point of fuzz/fuzz_wandb.cpp.
history_set read_wandb_bytes(const unsigned char* data, std::size_t size, const std::string& name) {
    wandb_detail::run_builder b;
    b.file = name;
    wandb_detail::read_log(data, size, b);
    history_set out;
    out.reader = "W&B offline log";
    out.input = name;
    out.runs.push_back(wandb_detail::finish_run(b, name, out.notes));
    return out;
}

/// The history of W&B offline runs: a run-*.wandb file, an offline-run-* /
/// run-* directory holding one, or a directory with such run directories
/// below it (wandb/, or the project holding wandb/).
/// Each log is one run, named by its RunRecord's display name, else its run
/// id, else its directory; runs that would share a name get their run id
/// added, then their directory (a run resumed offline twice: three logs, one
/// id, kept apart with a note -- `wandb sync` would append them to one run).
history_set read_wandb_offline(const std::string& path) {
    namespace fs = std::filesystem;
    history_set out;
    out.reader = "W&B offline log";
    out.input = path;
    std::map<std::string, std::size_t> names;
    std::map<std::string, std::string> first_of_id;  // run id -> the first log's run name
    std::multimap<std::uintmax_t, std::string> sizes;  // logs read, by size
    for (const fs::path& log : wandb_detail::wandb_logs(path)) {
        wandb_detail::run_builder b;
        b.file = log.string();
        std::error_code ec;
        const auto size = fs::file_size(openable_path(log.string()), ec);
        if (ec) throw logratio::error(b.file + ": cannot read: " + ec.message());
        if (size == 0) throw logratio::format_error(b.file + ": byte 0: W&B log is empty (no header)");
        if (const std::string twin = wandb_detail::identical_log_read_before(b.file, size, sizes); !twin.empty()) {
            out.notes.push_back(b.file + ": byte-identical to " + twin + " (a copied wandb/latest-run/?): read once");
            continue;
        }
        const mapped_file m(b.file);
        wandb_detail::read_log(m.data(), m.size(), b);
        wandb_detail::config_yaml_fallback(log, b, out.notes);
        const std::string dir = fs::absolute(log).parent_path().filename().string();
        run_history run = wandb_detail::finish_run(b, dir, out.notes);
        run.id = b.run_id.empty() ? b.file : b.run_id;
        const std::string base = run.name;
        if (names.count(run.name) && !b.run_id.empty()) run.name = base + " (" + b.run_id + ")";
        if (names.count(run.name)) run.name = base + " (" + dir + ")";
        if (names.count(run.name)) throw logratio::error(path + ": two W&B runs are both named '" + run.name + "'");
        if (!b.run_id.empty()) {
            const auto first = first_of_id.emplace(b.run_id, run.name);
            if (!first.second)
                out.notes.push_back("W&B runs '" + first.first->second + "' and '" + run.name + "' share the run id " +
                                    b.run_id + " (a resumed run?): read as separate runs, never merged");
        }
        names[run.name] = out.runs.size();
        out.runs.push_back(std::move(run));
    }
    return out;
}

/// True if the file starts with the W&B log header (":W&B", 0xBEE1).
bool looks_like_wandb_log(const std::string& file) {
    std::ifstream in(openable_path(file), std::ios::binary);
    unsigned char h[7];
    if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return false;
    return std::string_view(reinterpret_cast<const char*>(h), 4) == ":W&B" && (h[4] | h[5] << 8) == 0xBEE1;
}

}  // namespace logratio_cli::trackers
