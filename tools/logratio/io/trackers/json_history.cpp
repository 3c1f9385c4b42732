#include "json_history.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <logratio/core/error.hpp>

#ifdef LOGRATIO_HAVE_SIMDJSON
#include <cstring>

#include "json_ondemand.hpp"
#endif

#include "../mapped_file.hpp"
#include "../table.hpp"
#include "fs_walk.hpp"
#include "json_scan.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

namespace detail {

/// One value of a record as read: a number (booleans 1/0, Python's NaN and
/// infinities), null, a string, an array, an object (its values are entries
/// of their own), or a W&B media object (an object with `_type`: tables,
/// histograms, images; its values are dropped).
struct json_entry {
    /// skipped: a number the key filter does not keep, checked but not
    /// converted (its key, not copied, is its walk slot's)
    enum kind_t : char { number, null, string, array, object, media, skipped } kind = null;
    bool top = false;  ///< a key of the record itself (not of a nested object)
    std::string key;   ///< nested keys flattened with '/'
    double value = 0;
    std::string str;  ///< a top-level string's text (run names)
};

/// The runs of JSON history records, read in one pass (json_scanner): each
/// record's entries are collected, then its step, run and time decide where
/// the values go.
struct json_records_reader {
    std::string path;
    std::map<std::string, run_builder> runs;
    std::set<std::string> skipped;  ///< keys with nested or text values
    std::size_t verl_nulls = 0;     ///< null values of wanted keys in verl data dicts (read as NaN)
    std::string step_name;
    const key_filter* keys = nullptr;
    std::vector<json_entry> entries;  ///< this record's (capacity reused)
    std::size_t used = 0;
    std::string member;  ///< key buffer
    std::string stem;    ///< file_stem(path): the run of records without a run key

    /// The series an entry's key went to in the previous record, by the
    /// entry's position: records of a history repeat their keys in one
    /// order, so a key is compared once instead of looked up in the run's
    /// map and the key filter (those string compares, memcmp, were a fifth
    /// of the reading time of a W&B JSON Lines file with 50 metrics).
    struct key_slot {
        const run_builder* builder = nullptr;
        std::string key;
        bool wanted = false;                    ///< by the key filter
        run_builder::series* series = nullptr;  ///< made at the key's first value (b.of)
    };
    std::vector<key_slot> slots;

    /// The slot of `key` (entry `i` of the record) in `b`; wants() asked once
    /// per key and run (it notes the unwanted keys as unread).
    key_slot& slot_of(run_builder& b, std::size_t i, std::string_view key) {
        if (i >= slots.size()) slots.resize(i + 1);
        key_slot& c = slots[i];
        if (c.builder != &b || c.key != key) {
            c.builder = &b;
            c.key.assign(key);
            c.wanted = b.wants(c.key);
            c.series = nullptr;
        }
        return c;
    }
    /// The series of a wanted key, null for one the filter does not want.
    run_builder::series* series_of(run_builder& b, std::size_t i, std::string_view key) {
        key_slot& c = slot_of(b, i, key);
        if (c.wanted && !c.series) {
            c.series = &b.of(c.key);
            if (&b == stem_run && reserved + line_count <= run_builder::reserve_limit) {
                run_builder::reserve(*c.series, line_count);
                reserved += line_count;
            }
        }
        return c.wanted ? c.series : nullptr;
    }
    /// The run of the records without a run key (a one-run file, as W&B and
    /// verl write them) and the most records the file can hold (its line
    /// count): that run's series are reserved at once (series_of), not grown.
    const run_builder* stem_run = nullptr;
    std::size_t line_count = 0;
    std::size_t reserved = 0;  ///< points reserved so far (run_builder::reserve_limit)

    json_entry& push(const std::string& key, json_entry::kind_t kind, bool top) {
        if (used == entries.size()) entries.emplace_back();
        auto& e = entries[used++];
        e.key.assign(key);
        e.kind = kind;
        e.top = top;
        return e;
    }

    /// The value at `js` under `key` (flattened); objects are descended.
    void read_value(json_scanner& js, std::string& key, bool top, int depth) {
        switch (js.peek()) {
        case '{': {
            if (depth >= json_scanner::max_depth) js.fail("nested more than 256 levels deep");
            const std::size_t mark = used;
            push(key, json_entry::object, top);
            const std::size_t base = key.size();
            bool first = true, media = false;
            while (js.next_member(first, member)) {
                media = media || member == "_type";  // W&B media, tables, histograms
                key.resize(base);
                key += '/';
                key += member;
                read_value(js, key, false, depth + 1);
            }
            key.resize(base);
            if (media && !(top && key == "data")) {  // a verl data dict is decided per record
                used = mark;
                push(key, json_entry::media, top);
            } else if (media) {
                entries[mark].kind = json_entry::media;
            }
            return;
        }
        case '"': {
            auto& e = push(key, json_entry::string, top);
            js.string(e.str);
            return;
        }
        case '[':
            js.skip_value(depth);
            push(key, json_entry::array, top);
            return;
        case 't': js.literal("true"); push(key, json_entry::number, top).value = 1; return;
        case 'f': js.literal("false"); push(key, json_entry::number, top).value = 0; return;
        case 'n': js.literal("null"); push(key, json_entry::null, top); return;
        default: {
            const double x = js.number();
            push(key, json_entry::number, top).value = x;
        }
        }
    }

    /// The record's own keys that place it: its step, time, run and verl
    /// data dict. A JSON object may repeat a name, and readers then differ
    /// (Python's json keeps the last, a lookup finds the first); W&B and verl
    /// write each once, so one of these twice in a record is an error, on
    /// both paths (repeated_placing_key), and the key filter never skips
    /// them (skip_number: a skipped entry has no key to be found by).
    static constexpr std::string_view placing_keys[] = {"_step", "step", "_timestamp", "data", "run_id", "run", "name"};
    static bool places_record(std::string_view key) {
        for (const std::string_view p : placing_keys)
            if (key == p) return true;
        return false;
    }
    /// The first placing key met twice among the record's top-level entries,
    /// or null. (A metric key met twice is two points at the record's step:
    /// run_builder keeps equal ones once and names both lines otherwise.)
    const std::string_view* repeated_placing_key() const {
        unsigned seen = 0;
        for (std::size_t i = 0; i < used; ++i) {
            const json_entry& e = entries[i];
            if (!e.top || e.kind == json_entry::skipped || e.key.size() > 10) continue;
            for (unsigned p = 0; p < std::size(placing_keys); ++p) {
                if (e.key != placing_keys[p]) continue;
                if (seen & 1u << p) return &placing_keys[p];
                seen |= 1u << p;
            }
        }
        return nullptr;
    }
    /// (string_view keys: a size compare first, no strlen; the const char*
    /// compares were a tenth of a W&B JSON Lines read)
    const json_entry* top_entry(std::string_view key) const {
        for (std::size_t i = 0; i < used; ++i)
            if (entries[i].top && entries[i].key == key) return &entries[i];
        return nullptr;
    }
    static std::optional<double> number_of(const json_entry& e) {
        if (e.kind == json_entry::number) return e.value;
        if (e.kind == json_entry::null) return std::numeric_limits<double>::quiet_NaN();
        return std::nullopt;
    }
    /// The run key: the first of run_id, run, name holding a string.
    const json_entry* run_key() const {
        for (const std::string_view k : {"run_id", "run", "name"})
            if (const auto* e = top_entry(k); e && e->kind == json_entry::string) return e;
        return nullptr;
    }

#ifdef LOGRATIO_HAVE_SIMDJSON
    /// simdjson's On-Demand parser (json_ondemand.hpp): the values are read
    /// as the record is walked, no DOM tape (its stage 2 was a fifth of a
    /// JSON Lines read); numbers exactly rounded by simdjson, as from_chars.
    od::sj::parser simd{simdjson::SIMDJSON_MAXSIZE_BYTES};
    std::string padded_copy;  ///< a line without SIMDJSON_PADDING bytes after it, copied

    /// parse_record's entries for one JSON Lines record, by simdjson; false
    /// (nothing decided) where simdjson might differ from json_scanner:
    /// any error (json_scanner then names it), a key or string with a
    /// backslash (escapes: json_scanner's surrogate rules; outside strings a
    /// backslash is a syntax error, so every one is found there), a token
    /// other than Python's NaN / Infinity / -Infinity that simdjson does not
    /// read, nesting past od::max_depth. `padded`: SIMDJSON_PADDING readable
    /// bytes follow the line (else it is copied).
    bool simd_parse_record(std::string_view line, bool padded) {
        if (!padded) {
            padded_copy.assign(line);
            padded_copy.append(simdjson::SIMDJSON_PADDING, ' ');
            line = std::string_view(padded_copy.data(), line.size());
        }
        od::sj::document doc;
        od::sj::object obj;
        if (simd.iterate(line.data(), line.size(), line.size() + simdjson::SIMDJSON_PADDING).get(doc) ||
            doc.get_object().get(obj))
            return false;
        used = 0;
        std::string key;
        for (auto f : obj) {
            od::sj::field m;
            std::string_view k;
            if (std::move(f).get(m) || !od::key_text(m, k)) return false;
            if (skip_number(m.value(), key, k, true)) continue;
            key.assign(k);
            if (!simd_value(m.value(), key, true, 1)) return false;
        }
        return od::at_end(doc);
    }
    /// read_value for a simdjson value (same entries, same order).
    bool simd_value(od::sj::value v, std::string& key, bool top, int depth) {
        using type = od::sj::json_type;
        type t;
        if (v.type().get(t)) {  // Python's NaN / Infinity (or an error)
            double x;
            if (!od::non_finite_value(v, '}', x)) return false;
            push(key, json_entry::number, top).value = x;
            return true;
        }
        switch (t) {
        case type::object: return simd_object(v, key, top, depth);
        case type::string: {
            std::string_view s;
            if (!od::string_text(v, s, '}')) return false;
            push(key, json_entry::string, top).str.assign(s);
            return true;
        }
        case type::array:  // validated, dropped
            if (!od::valid(v, depth, '}')) return false;
            push(key, json_entry::array, top);
            return true;
        case type::boolean: {
            bool b;
            if (v.get_bool().get(b)) return false;
            push(key, json_entry::number, top).value = b ? 1 : 0;
            return true;
        }
        case type::null: {
            bool n = false;
            if (v.is_null().get(n) || !n) return false;
            push(key, json_entry::null, top);
            return true;
        }
        case type::number: {
            double x = 0;
            if (!od::number(v, x, '}')) return false;
            push(key, json_entry::number, top).value = x;
            return true;
        }
        }
        return false;
    }
    /// What the walk knows of entry position `used` (records repeat their
    /// keys in one order): its flattened key, whether its number may be
    /// read (a step or time key, or a key the filter keeps: as a W&B key,
    /// or under a verl data dict without its "data/"), and the run whose
    /// unread list has it (note_unread). A number not needed is checked
    /// (od::skipped_number), not converted, and its entry gets no key copy:
    /// under `logratio runs --metric M` that is all but a few keys.
    struct walk_slot {
        std::string key;
        bool top = false;
        bool needed = true;
        const run_builder* noted = nullptr;
    };
    std::vector<walk_slot> walk_slots;
    /// Whether walk slot `w` is for key `prefix`/`k` (`k` alone at the top).
    static bool same_key(const walk_slot& w, const std::string& prefix, std::string_view k, bool top) {
        if (w.top != top) return false;
        if (top) return w.key == k;
        const std::string_view wk = w.key;
        return wk.size() == prefix.size() + 1 + k.size() && wk.compare(0, prefix.size(), prefix) == 0 &&
               wk[prefix.size()] == '/' && wk.substr(prefix.size() + 1) == k;
    }
    /// Member `k` (of the record: `prefix` is not looked at; or of the
    /// object flattened as `prefix`) with value `v`: pushed as a skipped entry, true, when it is a number
    /// the call does not need; false (nothing done) otherwise.
    bool skip_number(od::sj::value v, const std::string& prefix, std::string_view k, bool top) {
        if (keys->keeps_all()) return false;
        if (used >= walk_slots.size()) walk_slots.resize(used + 1);
        walk_slot& w = walk_slots[used];
        if (!same_key(w, prefix, k, top)) {
            w.key.assign(top ? std::string_view() : std::string_view(prefix));
            if (!top) w.key += '/';
            w.key.append(k);
            w.top = top;
            w.noted = nullptr;
            const std::string_view f = w.key;
            w.needed = (top && places_record(f)) || keys->keeps(f) ||
                       (!top && f.size() > 5 && f.compare(0, 5, "data/") == 0 && keys->keeps(f.substr(5)));
        }
        od::sj::json_type t;
        if (w.needed || v.type().get(t) || t != od::sj::json_type::number || !od::skipped_number(v, '}')) return false;
        if (used == entries.size()) entries.emplace_back();
        json_entry& e = entries[used++];
        e.key.clear();  // top_entry never finds it (it is no placing key: places_record)
        e.kind = json_entry::skipped;
        e.top = top;
        return true;
    }
    /// A skipped entry's key in run `b`'s unread list, once per run and key.
    void note_unread(run_builder& b, std::size_t i, std::string_view key) {
        walk_slot& w = walk_slots[i];
        if (w.noted == &b) return;
        w.noted = &b;
        b.wants(std::string(key));  // false: the filter does not keep it; noted as unread
    }
    /// An object value: its members are entries of their own (read_value's '{').
    bool simd_object(od::sj::value v, std::string& key, bool top, int depth) {
        od::sj::object o;
        if (depth >= od::max_depth || v.get_object().get(o)) return false;
        const std::size_t mark = used;
        push(key, json_entry::object, top);
        const std::size_t base = key.size();
        bool media = false;
        for (auto f : o) {
            od::sj::field m;
            std::string_view k;
            if (std::move(f).get(m) || !od::key_text(m, k)) return false;
            media = media || k == "_type";
            key.resize(base);
            if (skip_number(m.value(), key, k, false)) continue;
            key += '/';
            key.append(k);
            if (!simd_value(m.value(), key, false, depth + 1)) return false;
        }
        key.resize(base);
        if (media && !(top && key == "data")) {
            used = mark;
            push(key, json_entry::media, top);
        } else if (media) {
            entries[mark].kind = json_entry::media;
        }
        return true;
    }
#endif

    /// One record (an object) read from `js`.
    void record(json_scanner& js, std::size_t line, std::size_t index) {
        parse_record(js, line, index);
        finish_record(line, index);
    }
    /// The entries of one record (an object) read from `js`; nothing added yet.
    void parse_record(json_scanner& js, std::size_t line, std::size_t index) {
        if (js.peek() != '{') {
            js.skip_value();
            throw logratio::format_error(place(line, index) + ": not a JSON object");
        }
        used = 0;
        std::string key;
        bool first = true;
        while (js.next_member(first, member)) {
            key = member;
            read_value(js, key, true, 1);
        }
    }
    /// The entries parse_record read go to their run.
    void finish_record(std::size_t line, std::size_t index) {
        add_record([&] { return place(line, index); }, line);
    }
    std::string place(std::size_t line, std::size_t index) const {
        using logratio::detail::concat;
        return line ? concat(path, ": line ", line) : concat(path, ": record ", index);
    }

    /// The entries of the record just read go to their run at its step.
    template <class Place>
    void add_record(const Place& place, std::size_t line) {
        if (const auto* k = repeated_placing_key())
            throw logratio::format_error(place() + ": key '" + std::string(*k) + "' appears twice in the record");
        const json_entry* data = top_entry("data");
        std::string_view step_key;
        std::string sname;
        bool verl = false;
        if (top_entry("_step")) {
            step_key = "_step";
            sname = "_step";
        } else if (top_entry("step") && data && (data->kind == json_entry::object || data->kind == json_entry::media)) {
            step_key = "step";
            sname = "step (verl file logger)";
            verl = true;
        } else if (top_entry("step")) {
            step_key = "step";
            sname = "step";
        } else {
            throw logratio::format_error(place() + ": a history record needs '_step' (W&B) or 'step' (verl, TRL)");
        }
        if (step_name.empty()) step_name = sname;
        else if (step_name != sname)
            throw logratio::format_error(place() + ": record has '" + std::string(step_key) + "' but earlier records used " + step_name);
        const auto s = number_of(*top_entry(step_key));
        if (!s || std::isnan(*s)) throw logratio::format_error(place() + ": '" + std::string(step_key) + "' is not a number");
        const std::int64_t step = integer_step(*s, place());
        const json_entry* rk = run_key();
        if (!rk && stem.empty()) stem = file_stem(path);
        const std::string& name = rk ? rk->str : stem;
        auto it = runs.find(name);
        if (it == runs.end()) {
            it = runs.emplace(name, run_builder(name, path, step_name, keys)).first;
            if (!rk) stem_run = &it->second;
        }
        double wall = std::nan("");
        if (const auto* t = top_entry("_timestamp"))
            if (const auto w = number_of(*t)) wall = *w;
        const bool data_is_media = data && data->kind == json_entry::media;
        const std::uint64_t where = it->second.where_of(path, line);
        for (std::size_t i = 0; i < used; ++i) {
            const json_entry& e = entries[i];
            std::string_view k = e.kind == json_entry::skipped ? std::string_view(walk_slots[i].key) : e.key;
            const bool in_data = !e.top && k.size() >= 5 && k.compare(0, 5, "data/") == 0;
            if (verl) {  // only the data dict's values, without the "data/" prefix
                if (!in_data) continue;
                k.remove_prefix(5);
            } else if (e.top && (k == step_key || k == "_runtime" || k == "_timestamp" || &e == rk)) {
                continue;
            } else if (in_data && data_is_media) {
                continue;  // inside a top-level media object named data
            }
            add_entry(it->second, e, i, k, step, wall, where, verl);
        }
    }

    /// null is "not logged" in a W&B record, but a point in a verl data
    /// dict: verl's file logger writes with orjson, which writes NaN and
    /// +-Infinity as null (counted for a note: which one it was is lost).
    /// `where`: the record's file and line, packed once (run_builder::where_of).
    void add_entry(run_builder& b, const json_entry& e, std::size_t i, std::string_view key, std::int64_t step,
                   double wall, std::uint64_t where, bool verl) {
        switch (e.kind) {
        case json_entry::null:
            if (!verl) return;
            if (auto* s = series_of(b, i, key)) {
                ++verl_nulls;
                b.add_at(*s, step, std::numeric_limits<double>::quiet_NaN(), wall, where);
            }
            return;
        case json_entry::object: return;  // an object's values are entries of their own
        case json_entry::skipped: note_unread(b, i, key); return;
        case json_entry::media: skipped.emplace(key); return;
        case json_entry::string:
        case json_entry::array:
            if (slot_of(b, i, key).wanted) skipped.emplace(key);
            return;
        case json_entry::number:
            if (auto* s = series_of(b, i, key)) b.add_at(*s, step, e.value, wall, where);
        }
    }
};

/// The last line of a JSON Lines file when no newline ends it: a writer
/// appends "record\n", so such a line may be a record cut off mid-write.
/// False (nothing added) when it is not one whole JSON record.
bool last_line_read(json_records_reader& r, json_scanner& js, std::size_t line) {
    try {
        r.parse_record(js, line, 0);
        if (!js.at_end()) js.fail("text after the record");
    } catch (const logratio::format_error& e) {
        // cut off: the text ended inside the record; any other syntax error
        // (and a whole record's own errors: no step, ...) stays an error
        if (js.at_end() || std::string_view(e.what()).find("unexpected end of text") != std::string_view::npos)
            return false;
        throw;
    }
    r.finish_record(line, 0);
    return true;
}

}  // namespace detail

namespace {
/// first_significant_byte of a view.
char first_byte(std::string_view text) {
    std::size_t i = utf8_bom_size(text);
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
    return i < text.size() ? text[i] : '\0';
}
}  // namespace

/// Leading whitespace and a UTF-8 byte-order mark skipped: the first byte.
char first_significant_byte(const std::string& text) { return first_byte(text); }

/// The runs of a JSON history (`text` is the file's content); `keys`: the
/// metrics read (the others are listed as unread).
history_set read_json_history_text(std::string_view text, const std::string& path, const key_filter& keys,
                                   json_lines_parser parser) {
    detail::json_records_reader r;
    r.path = path;
    r.keys = &keys;
    const std::size_t bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    history_set out;
    out.input = path;
    const std::string_view all = text.substr(bom);
    if (first_byte(text) == '[') {  // one array of records
        json_scanner js(all, path);
        bool first = true;
        for (std::size_t i = 0; js.next_element(first); ++i) r.record(js, 0, i);
        if (!js.at_end()) js.fail("text after the array");
        out.reader = "JSON history (array)";
    } else {  // JSON Lines: one record per line
        std::size_t line = 1;
        json_scanner js(std::string_view(), path);
        r.line_count = static_cast<std::size_t>(std::count(all.begin(), all.end(), '\n')) + 1;
        for (std::size_t pos = 0; pos <= all.size(); ++line) {
            std::size_t nl = all.find('\n', pos);
            if (nl == std::string_view::npos) nl = all.size();
            const std::string_view s = all.substr(pos, nl - pos);
            if (s.find_first_not_of(" \t\r") != std::string_view::npos) {
                js.reset(s, line);
                if (nl < all.size()) {
#ifdef LOGRATIO_HAVE_SIMDJSON
                    const bool simd = parser == json_lines_parser::fastest &&
                                      r.simd_parse_record(s, nl + simdjson::SIMDJSON_PADDING <= all.size());
#else
                    const bool simd = false;
                    (void)parser;
#endif
                    if (simd) r.finish_record(line, 0);
                    else r.record(js, line, 0);
                    if (!js.at_end() && !simd) js.fail("text after the record");
                } else if (!detail::last_line_read(r, js, line)) {  // no newline: maybe cut off by a writer
                    out.notes.push_back(logratio::detail::concat(path, ": line ", line, ": the last line has no newline ",
                                                                 "and is not a whole JSON record (a run still writing?): ",
                                                                 "skipped"));
                }
            }
            pos = nl + 1;
        }
        out.reader = "JSON Lines history";
    }
    if (r.runs.empty()) throw logratio::format_error(path + ": no history records");
    if (r.step_name == "step (verl file logger)") out.reader = "verl file-logger history";
    out.runs = finish_runs(r.runs);
    // A one-run file (no run key): the directory holding it is its group.
    if (out.runs.size() == 1 && out.runs[0].name == file_stem(path)) out.runs[0].group = parent_dir_name(path);
    if (r.verl_nulls)
        out.notes.push_back(logratio::detail::concat(path, ": ", r.verl_nulls, " null value(s) in verl data dicts read ",
                                                     "as NaN (verl's file logger writes NaN and +-Infinity as null)"));
    if (!r.skipped.empty()) {
        std::string keys;
        for (const auto& k : r.skipped) keys += (keys.empty() ? "" : ", ") + k;
        out.notes.push_back(path + ": skipped non-scalar values (tables, histograms, media, text) of: " + keys);
    }
    return out;
}

/// The file mapped rather than read into a string: reading 100 MB of
/// JSON Lines into a string first zeroed, then copied, every page (a fifth
/// of the reading time, clear_page and copy_to_user); the page cache's own
/// pages are read instead (the writers append: a file truncated while it
/// is read would fault). A file that is not regular or is empty (a pipe,
/// /dev/stdin) is read as before.
history_set read_json_history_file(const std::string& path, const key_filter& keys) {
    if (mappable(path)) {
        const mapped_file f(path);
        return read_json_history_text(std::string_view(reinterpret_cast<const char*>(f.data()), f.size()), path, keys);
    }
    return read_json_history_text(read_text_file(path), path, keys);
}

}  // namespace logratio_cli::trackers
