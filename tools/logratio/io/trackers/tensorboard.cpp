#include "../files_read.hpp"
#include "tensorboard.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <logratio/core/error.hpp>

#include "../mapped_file.hpp"
#include "attributes.hpp"
#include "crc32c.hpp"
#include "history.hpp"
#include "protobuf_wire.hpp"

namespace logratio_cli::trackers {

namespace tb_detail {

namespace pb = logratio_cli::protobuf;

/// One tag of one run while reading: its points in reading order, the plugin
/// its first metadata named, and why values were skipped (first reason).
struct tag_series {
    std::string name;
    std::string plugin;
    bool plugin_known = false;
    std::vector<point> points;
    std::size_t skipped = 0;
    std::string skip_reason;
};

/// One run while reading: tags by name, looked up without allocating.
class run_builder {
public:
    std::string name, source;
    std::vector<std::string> notes;  ///< files whose last record was cut off
    std::map<std::string, std::string> attributes;  ///< hparams
    std::map<std::string, std::string> changed;     ///< hparams given twice with different values

    tag_series& tag(std::string_view t) {
        const auto it = index_.find(t);
        if (it != index_.end()) return *it->second;
        tags_.push_back(tag_series{std::string(t), {}, false, {}, 0, {}});
        tag_series& s = tags_.back();
        index_.emplace(std::string_view(s.name), &s);
        return s;
    }
    std::deque<tag_series>& tags() noexcept { return tags_; }

private:
    std::deque<tag_series> tags_;  // stable addresses: index_ keys view into them
    std::unordered_map<std::string_view, tag_series*> index_;
};

/// What a Value's tensor holds, as far as a scalar reader cares.
struct tensor_scalar {
    bool ok = false;
    double value = 0;
    const char* reason = nullptr;  // why not a scalar, when !ok
};

/// The number of elements of a TensorShapeProto (dim = 2 -> size = 1);
/// saturates at 2 (all a scalar test needs); -1 for an unknown rank.
std::int64_t shape_elements(pb::reader r) {
    std::int64_t n = 1;
    pb::field f;
    while (r.next(f)) {
        if (f.number == 3 && f.type == pb::wire_type::varint && f.number_bits) return -1;  // unknown_rank
        if (f.number != 2) continue;
        r.expect(f, pb::wire_type::length_delimited, "TensorShapeProto.dim is not a message");
        pb::reader d = r.nested(f);
        pb::field g;
        std::int64_t size = 0;
        while (d.next(g))
            if (g.number == 1 && g.type == pb::wire_type::varint) size = g.as_int64();
        if (size != 1) n = (size == 0) ? 0 : 2;
        if (n == 0) return 0;
    }
    return n;
}

/// A scalar from a TensorProto: DT_FLOAT / DT_DOUBLE with one element, in
/// tensor_content or float_val / double_val (packed or not).
tensor_scalar read_tensor(pb::reader r) {
    std::uint64_t dtype = 0;
    std::int64_t elements = 1;
    std::size_t n_float = 0, n_double = 0;
    float first_float = 0;
    double first_double = 0;
    std::string_view content;
    pb::field f;
    while (r.next(f)) {
        switch (f.number) {
        case 1:
            if (f.type == pb::wire_type::varint) dtype = f.number_bits;
            break;
        case 2:
            if (f.type == pb::wire_type::length_delimited) elements = shape_elements(r.nested(f));
            break;
        case 4:
            if (f.type == pb::wire_type::length_delimited) content = f.bytes();
            break;
        case 5:
            if (f.type == pb::wire_type::fixed32) {
                if (n_float++ == 0) first_float = f.as_float();
            } else if (f.type == pb::wire_type::length_delimited) {
                if (f.size % 4) pb::fail(r.where(), f.offset, "packed float_val length is not a multiple of 4");
                if (f.size && n_float == 0) std::memcpy(&first_float, f.data, 4);
                n_float += f.size / 4;
            }
            break;
        case 6:
            if (f.type == pb::wire_type::fixed64) {
                if (n_double++ == 0) first_double = f.as_double();
            } else if (f.type == pb::wire_type::length_delimited) {
                if (f.size % 8) pb::fail(r.where(), f.offset, "packed double_val length is not a multiple of 8");
                if (f.size && n_double == 0) std::memcpy(&first_double, f.data, 8);
                n_double += f.size / 8;
            }
            break;
        default:
            break;
        }
    }
    static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE float and double");
    if (elements != 1) return {false, 0, "a tensor of more than one element"};
    if (dtype == 1) {  // DT_FLOAT
        if (content.size() == 4) {
            float v;
            std::memcpy(&v, content.data(), 4);
            return {true, v, nullptr};
        }
        if (content.empty() && n_float == 1) return {true, first_float, nullptr};
    } else if (dtype == 2) {  // DT_DOUBLE
        if (content.size() == 8) {
            double v;
            std::memcpy(&v, content.data(), 8);
            return {true, v, nullptr};
        }
        if (content.empty() && n_double == 1) return {true, first_double, nullptr};
    } else {
        return {false, 0, "a tensor that is neither float nor double"};
    }
    return {false, 0, "a float tensor without exactly one value"};
}

/// The plugin name of a SummaryMetadata (plugin_data = 1 -> plugin_name = 1).
std::string_view plugin_name(pb::reader r) {
    pb::field f;
    std::string_view name;
    while (r.next(f)) {
        if (f.number != 1 || f.type != pb::wire_type::length_delimited) continue;
        pb::reader d = r.nested(f);
        pb::field g;
        while (d.next(g))
            if (g.number == 1 && g.type == pb::wire_type::length_delimited) name = g.bytes();
    }
    return name;
}

/// A google.protobuf.Value (google/protobuf/struct.proto: null_value = 1,
/// number_value = 2, string_value = 3, bool_value = 4, struct_value = 5,
/// list_value = 6) as attribute text; false for null, structs and lists
/// (an hparam is a string, number or bool: tensorboard/plugins/hparams/api.proto).
bool hparam_value(pb::reader r, std::string& out) {
    pb::field f;
    bool has = false;
    while (r.next(f)) {
        if (f.number == 2 && f.type == pb::wire_type::fixed64) out = number_text(f.as_double()), has = true;
        else if (f.number == 3 && f.type == pb::wire_type::length_delimited) out.assign(f.bytes()), has = true;
        else if (f.number == 4 && f.type == pb::wire_type::varint) out = f.as_int64() ? "true" : "false", has = true;
        else if (f.number == 1 || f.number == 5 || f.number == 6) has = false;
    }
    return has;
}

/// The hparams of an hparams plugin value's content (HParamsPluginData,
/// tensorboard/plugins/hparams/plugin_data.proto @70b76c92:
/// session_start_info = 3 -> SessionStartInfo hparams = 1, a
/// map<string, google.protobuf.Value>: entries key = 1, value = 2) into the
/// run's attributes; the experiment and session-end data carry none.
void read_hparams(pb::reader r, run_builder& run) {
    pb::field f;
    while (r.next(f)) {
        if (f.number != 3 || f.type != pb::wire_type::length_delimited) continue;
        pb::reader info = r.nested(f);
        pb::field e;
        while (info.next(e)) {
            if (e.number != 1 || e.type != pb::wire_type::length_delimited) continue;
            pb::reader entry = info.nested(e);
            pb::field g;
            std::string key, value;
            bool has = false;
            while (entry.next(g)) {
                if (g.number == 1 && g.type == pb::wire_type::length_delimited) key.assign(g.bytes());
                else if (g.number == 2 && g.type == pb::wire_type::length_delimited) has = hparam_value(entry.nested(g), value);
            }
            if (has && !key.empty()) set_attribute(run.attributes, key, std::move(value), &run.changed);
        }
    }
}

/// The hparams in a SummaryMetadata whose plugin is "hparams" (plugin_data
/// = 1 -> content = 2: the serialized HParamsPluginData).
void read_hparams_metadata(pb::reader r, run_builder& run) {
    pb::field f;
    while (r.next(f)) {
        if (f.number != 1 || f.type != pb::wire_type::length_delimited) continue;
        pb::reader d = r.nested(f);
        pb::field g;
        while (d.next(g))
            if (g.number == 2 && g.type == pb::wire_type::length_delimited) read_hparams(d.nested(g), run);
    }
}

void skip_value(tag_series& s, const char* reason) {
    if (s.skipped++ == 0) s.skip_reason = reason;
}

/// One Summary.Value: a scalar point on its tag, or a counted skip.
void read_value(pb::reader r, double wall_time, std::int64_t step, run_builder& run) {
    std::string_view tag;
    bool has_simple = false, has_tensor = false, has_metadata = false;
    float simple = 0;
    pb::field tensor_field, metadata_field;
    const char* other = nullptr;
    pb::field f;
    while (r.next(f)) {
        switch (f.number) {
        case 1:
            r.expect(f, pb::wire_type::length_delimited, "Summary.Value.tag is not a string");
            tag = f.bytes();
            break;
        case 2:
            r.expect(f, pb::wire_type::fixed32, "Summary.Value.simple_value is not a float");
            has_simple = true;
            simple = f.as_float();
            break;
        case 3: other = "an old-style histogram"; break;
        case 4: other = "an image"; break;
        case 5: other = "a histogram"; break;
        case 6: other = "audio"; break;
        case 8:
            r.expect(f, pb::wire_type::length_delimited, "Summary.Value.tensor is not a message");
            has_tensor = true;
            tensor_field = f;
            break;
        case 9:
            r.expect(f, pb::wire_type::length_delimited, "Summary.Value.metadata is not a message");
            has_metadata = true;
            metadata_field = f;
            break;
        default:
            break;
        }
    }
    tag_series& s = run.tag(tag);
    if (has_metadata && !s.plugin_known) {  // the plugin name parsed once per tag, not per value
        s.plugin = std::string(plugin_name(r.nested(metadata_field)));
        s.plugin_known = true;
    }
    if (s.plugin == "hparams") {  // the run's hyperparameters, not a series (no points: no metric, no note)
        if (has_metadata) read_hparams_metadata(r.nested(metadata_field), run);
        return;
    }
    if (has_simple) {
        s.points.push_back(point{step, static_cast<double>(simple), wall_time});
    } else if (other) {
        skip_value(s, other);
    } else if (!has_tensor) {
        skip_value(s, "no value (metadata only)");
    } else if (!s.plugin.empty() && s.plugin != "scalars") {
        skip_value(s, "data of a plugin other than scalars");
    } else {
        const tensor_scalar t = read_tensor(r.nested(tensor_field));
        if (t.ok)
            s.points.push_back(point{step, t.value, wall_time});
        else
            skip_value(s, t.reason);
    }
}

/// One Event record: wall_time, step and the values of its summary.
void read_event(const unsigned char* data, std::size_t size, pb::origin where, run_builder& run) {
    pb::reader r(data, size, where);
    double wall_time = 0;
    std::int64_t step = 0;
    pb::field f, summary;
    bool has_summary = false;
    while (r.next(f)) {
        if (f.number == 1) {
            r.expect(f, pb::wire_type::fixed64, "Event.wall_time is not a double");
            wall_time = f.as_double();
        } else if (f.number == 2) {
            r.expect(f, pb::wire_type::varint, "Event.step is not a varint");
            step = f.as_int64();
        } else if (f.number == 5) {
            r.expect(f, pb::wire_type::length_delimited, "Event.summary is not a message");
            summary = f;
            has_summary = true;
        }
    }
    if (!has_summary) return;
    pb::reader s = r.nested(summary);
    while (s.next(f))
        if (f.number == 1) {
            s.expect(f, pb::wire_type::length_delimited, "Summary.value is not a message");
            read_value(s.nested(f), wall_time, step, run);
        }
}

[[noreturn]] void fail_record(const std::string& file, std::size_t at, const std::string& what) {
    throw logratio::format_error(logratio::detail::concat(file, ": byte ", at, ": TFRecord ", what));
}

/// A note for an event file whose last record is cut off: a writer still
/// running or killed mid-record. TensorBoard keeps the records before it
/// (tensorflow/tensorboard @70b76c92: data/server/run.rs stops reading the
/// file at a truncated record; event_file_loader.py ignores DataLossError);
/// so do we, and say so.
void note_truncated(run_builder& run, const std::string& file, std::size_t at, std::size_t records,
                    const std::string& what) {
    run.notes.push_back(logratio::detail::concat(file, ": byte ", at, ": the last TFRecord is cut off (", what,
                                                 "; a writer still running or killed?): the ", records,
                                                 " record(s) before it read"));
}

/// Every TFRecord of one event file's bytes, CRCs verified, into `run`; a
/// record cut off by the end of the file ends it with a note, a CRC
/// mismatch is an error.
void read_records(const unsigned char* p, std::size_t size, const std::string& file, run_builder& run) {
    std::size_t pos = 0, records = 0;
    while (pos < size) {
        const std::size_t left = size - pos;
        if (left < 12)
            return note_truncated(run, file, pos, records, logratio::detail::concat(left, " of its 12 header bytes"));
        const std::uint64_t length = pb::load_le64(p + pos);
        if (masked_crc32c(p + pos, 8) != pb::load_le32(p + pos + 8))
            fail_record(file, pos, "length CRC-32C mismatch (corrupt file)");
        if (length > left - 12 || left - 12 - length < 4)
            return note_truncated(run, file, pos, records,
                                  logratio::detail::concat(length, " data bytes + 4 CRC bytes declared, ", left - 12, " left"));
        const unsigned char* data = p + pos + 12;
        const auto n = static_cast<std::size_t>(length);
        if (masked_crc32c(data, n) != pb::load_le32(data + n))
            fail_record(file, pos, "data CRC-32C mismatch (corrupt file)");
        read_event(data, n, pb::origin{&file, pos + 12}, run);
        pos += 16 + n;
        ++records;
    }
}

/// Sorts a tag's points by step; a step logged twice keeps the later wall
/// time (the later point on a tie). Returns how many points were replaced.
std::size_t merge_steps(std::vector<point>& pts) {
    const auto by_step = [](const point& a, const point& b) { return a.step < b.step; };
    if (!std::is_sorted(pts.begin(), pts.end(), by_step)) std::stable_sort(pts.begin(), pts.end(), by_step);
    std::size_t out = 0, replaced = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        if (out > 0 && pts[out - 1].step == pts[i].step) {
            ++replaced;
            if (!(pts[i].wall_time < pts[out - 1].wall_time)) pts[out - 1] = pts[i];
        } else {
            pts[out++] = pts[i];
        }
    }
    pts.resize(out);
    return replaced;
}

/// The run_history of a builder; notes for skipped values and merged steps.
run_history finish_run(run_builder& b, std::vector<std::string>& notes) {
    run_history run;
    run.name = b.name;
    run.source = b.source;
    run.id = b.source;  // TensorBoard has no run id: the run directory is one
    run.step_name = "TensorBoard step";
    run.attributes = std::move(b.attributes);
    if (!b.changed.empty()) notes.push_back(changed_attributes_note("TensorBoard run '" + b.name + "'", b.changed));
    notes.insert(notes.end(), b.notes.begin(), b.notes.end());
    for (tag_series& s : b.tags()) {
        if (s.skipped)
            notes.push_back(logratio::detail::concat("TensorBoard run '", b.name, "': skipped ", s.skipped, " value(s) of tag '", s.name,
                                                     "' (", s.skip_reason, "; only scalars are read)"));
        if (s.points.empty()) continue;
        if (const std::size_t replaced = merge_steps(s.points))
            notes.push_back(logratio::detail::concat("TensorBoard run '", b.name, "': tag '", s.name, "': ", replaced,
                                                     " step(s) logged more than once; kept the value with the later wall time"));
        run.metrics.emplace(s.name, std::move(s.points));
    }
    if (run.metrics.empty()) notes.push_back("TensorBoard run '" + b.name + "' has no scalars");
    return run;
}

bool is_event_file_name(const std::filesystem::path& p) {
    return p.filename().string().find("tfevents") != std::string::npos;
}

/// Reads one event file (possibly empty: a writer that never flushed).
void read_event_file(const std::string& file, run_builder& run) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(openable_path(file), ec);
    if (ec) throw logratio::error(file + ": cannot read: " + ec.message());
    if (size == 0) return;
    const mapped_file m(file);
    read_records(m.data(), m.size(), file, run);
}

/// Every event file under a logdir, grouped by the directory holding it
/// (sorted: runs by relative path, files by name).
std::map<std::string, std::vector<std::filesystem::path>> event_files_by_run(const std::filesystem::path& logdir) {
    std::map<std::string, std::vector<std::filesystem::path>> runs;
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(logdir, ec), end;
    if (ec) throw logratio::error(logdir.string() + ": cannot list: " + ec.message());
    for (; it != end; it.increment(ec)) {
        if (ec) throw logratio::error(logdir.string() + ": cannot list: " + ec.message());
        if (!it->is_regular_file() || !is_event_file_name(it->path())) continue;
        auto rel = it->path().parent_path().lexically_relative(logdir).generic_string();
        if (rel.empty()) rel = ".";
        runs[rel].push_back(it->path());
    }
    if (ec) throw logratio::error(logdir.string() + ": cannot list: " + ec.message());
    for (auto& r : runs) std::sort(r.second.begin(), r.second.end());
    return runs;
}

/// torch's SummaryWriter.add_hparams (which transformers' TensorBoardCallback
/// calls at the start of training) writes the hparams into a directory of
/// their own below the run's (<run>/<time.time()>/, pytorch/pytorch
/// torch/utils/tensorboard/writer.py): such a run's hparams become the
/// attributes of the run above it (the run's own hparams win); one holding
/// nothing else is no run of its own. Both with a note.
void fold_hparams_runs(history_set& out) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < out.runs.size(); ++i) index[out.runs[i].name] = i;
    std::vector<bool> drop(out.runs.size(), false);
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
        const run_history& child = out.runs[i];
        const auto slash = child.name.rfind('/');
        if (child.attributes.empty() || slash == std::string::npos) continue;
        const auto parent = index.find(child.name.substr(0, slash));
        if (parent == index.end()) continue;
        run_history& p = out.runs[parent->second];
        for (const auto& [k, v] : child.attributes) p.attributes.emplace(k, v);
        drop[i] = child.metrics.empty();
        out.notes.push_back("TensorBoard run '" + p.name + "': attributes from the hparams in " + child.name +
                            (drop[i] ? " (torch's add_hparams directory; not a run of its own)" : " (torch's add_hparams directory)"));
        if (drop[i]) {
            const std::string empty = "TensorBoard run '" + child.name + "' has no scalars";
            out.notes.erase(std::remove(out.notes.begin(), out.notes.end(), empty), out.notes.end());
        }
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < out.runs.size(); ++i)
        if (!drop[i]) {
            if (k != i) out.runs[k] = std::move(out.runs[i]);  // never a self-move
            ++k;
        }
    out.runs.resize(k);
}

}  // namespace tb_detail

/// The scalars of one event file held in memory (one run named `name`); the
/// entry point of fuzz/fuzz_tfrecord.cpp.
history_set read_tensorboard_bytes(const unsigned char* data, std::size_t size, const std::string& name) {
    tb_detail::run_builder b;
    b.name = name;
    b.source = name;
    tb_detail::read_records(data, size, name, b);
    history_set out;
    out.reader = "TensorBoard";
    out.input = name;
    out.runs.push_back(tb_detail::finish_run(b, out.notes));
    return out;
}

/// The scalars of a TensorBoard logdir (every directory holding event files
/// is a run, named by its path under the logdir; in a <group>/<run> layout,
/// e.g. tb/sync/run1, the first directory is the run's group, as for TRL
/// output directories) or of one event file (one run, named by its directory).
history_set read_tensorboard(const std::string& path) {
    namespace fs = std::filesystem;
    history_set out;
    out.reader = "TensorBoard";
    out.input = path;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const auto runs = tb_detail::event_files_by_run(path);
        if (runs.empty())
            throw logratio::error(path + ": no TensorBoard event files (events.out.tfevents.*) in this directory or below");
        for (const auto& [name, files] : runs) {
            tb_detail::run_builder b;
            // event files in the logdir itself: the run is named by the logdir, never "."
            b.name = name == "." ? fs::absolute(fs::path(path)).lexically_normal().filename().string() : name;
            if (b.name.empty()) b.name = fs::absolute(fs::path(path)).lexically_normal().parent_path().filename().string();
            b.source = (fs::path(path) / name).lexically_normal().string();
            for (const auto& f : files) tb_detail::read_event_file(f.string(), b);
            out.runs.push_back(tb_detail::finish_run(b, out.notes));
            const auto slash = name.find('/');
            if (slash != std::string::npos && slash > 0 && name.find('/', slash + 1) == std::string::npos)
                out.runs.back().group = name.substr(0, slash);
        }
        tb_detail::fold_hparams_runs(out);
        return out;
    }
    tb_detail::run_builder b;
    const fs::path parent = fs::absolute(fs::path(path)).parent_path();
    b.name = parent.filename().string();
    if (b.name.empty()) b.name = ".";
    b.source = path;
    tb_detail::read_event_file(path, b);
    out.runs.push_back(tb_detail::finish_run(b, out.notes));
    return out;
}

/// True if the file starts with a TFRecord frame: at least 12 bytes and a
/// valid masked CRC-32C of the first 8 (the length). A content sniff; a
/// chance match is 1 in 2^32.
bool looks_like_tfrecord(const std::string& file) {
    std::ifstream in(openable_path(file), std::ios::binary);
    unsigned char h[12];
    if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return false;
    return masked_crc32c(h, 8) == protobuf::load_le32(h + 8);
}

}  // namespace logratio_cli::trackers
