// The binary tracker readers: CRC-32C / CRC-32 against published vectors, the
// protobuf wire reader's bounds checks, TensorBoard event files and logdirs,
// W&B offline logs. The files under tests/data/trackers/binary were written by
// tests/trackers/binary_writers.py (which documents what each holds); every
// run, step and value here is what that script wrote.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <logratio/core/error.hpp>

#include "trackers/crc32c.hpp"
#include "trackers/protobuf_wire.hpp"
#include "trackers/tensorboard.hpp"
#include "trackers/wandb_offline.hpp"

namespace {

using namespace logratio_cli::trackers;

std::string data(const std::string& rel) { return std::string(LOGRATIO_TEST_DATA) + "/trackers/binary/" + rel; }

const std::string DIFF = "train/train_rollout_logprob_abs_diff";
const std::string LOSS = "train/loss";
const std::string KL = "train/kl";
constexpr double T0 = 1700000000.0;

const run_history& run_named(const history_set& h, const std::string& name) {
    for (const auto& r : h.runs)
        if (r.name == name) return r;
    FAIL("no run named '" << name << "'");
    throw;
}

// A fresh empty directory under the system's temporary directory, removed at scope exit.
struct temp_dir {
    std::filesystem::path path;
    explicit temp_dir(const std::string& name) : path(std::filesystem::temp_directory_path() / ("logratio_test_" + name)) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

std::vector<std::int64_t> steps(const std::vector<point>& pts) {
    std::vector<std::int64_t> s;
    for (const auto& p : pts) s.push_back(p.step);
    return s;
}

// The message of the format_error `f` throws (fails if it throws nothing or something else).
template <class F>
std::string format_error_of(F&& f) {
    try {
        f();
    } catch (const logratio::format_error& e) {
        return e.what();
    }
    FAIL("no format_error");
    return {};
}

bool has_note(const history_set& h, const std::string& part) {
    for (const auto& n : h.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("CRC-32C: RFC 3720 B.4 vectors and the check value; masked form; zlib CRC-32") {
    unsigned char buf[32];
    std::memset(buf, 0, 32);
    CHECK(crc32c(buf, 32) == 0x8A9136AAu);
    std::memset(buf, 0xFF, 32);
    CHECK(crc32c(buf, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(i);
    CHECK(crc32c(buf, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(31 - i);
    CHECK(crc32c(buf, 32) == 0x113FDB5Cu);
    CHECK(crc32c("123456789", 9) == 0xE3069283u);
    // Every split of the input through the 8-byte loop and the tail agrees.
    for (std::size_t n = 0; n <= 9; ++n) CHECK(crc32c("123456789", n) == crc32c(std::string("123456789", n).c_str(), n));
    const std::uint32_t c = 0xE3069283u;
    CHECK(masked_crc32c("123456789", 9) == static_cast<std::uint32_t>(((c >> 15) | (c << 17)) + 0xa282ead8u));
    // The portable code (CPUs without SSE4.2) agrees with crc32c() at every length and alignment.
    std::vector<unsigned char> bytes(300);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131u + 7u);
    CHECK(crc32c_portable(buf, 32) == 0x113FDB5Cu);
    for (std::size_t off = 0; off < 8; ++off)
        for (std::size_t n = 0; n + off <= bytes.size(); n += 7) CHECK(crc32c_portable(bytes.data() + off, n) == crc32c(bytes.data() + off, n));
    // zlib.crc32(b"123456789") and zlib.crc32(b"6789", zlib.crc32(b"12345")).
    CHECK(crc32_zlib("123456789", 9) == 0xCBF43926u);
    CHECK(crc32_zlib("6789", 4, crc32_zlib("12345", 5)) == 0xCBF43926u);
}

TEST_CASE("protobuf wire reader: fields, and every malformed byte is an error naming source and offset") {
    namespace pb = logratio_cli::protobuf;
    const std::string name = "msg.bin";
    // field 1 varint 150, field 2 "hi", field 3 fixed32, field 4 fixed64
    const unsigned char ok[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0, 0};
    pb::reader r(ok, sizeof ok, pb::origin{&name, 100});
    pb::field f;
    REQUIRE(r.next(f));
    CHECK((f.number == 1 && f.number_bits == 150 && f.offset == 100));
    REQUIRE(r.next(f));
    CHECK((f.number == 2 && f.bytes() == "hi" && f.offset == 103));
    REQUIRE(r.next(f));
    CHECK((f.number == 3 && f.type == pb::wire_type::fixed32 && f.number_bits == 1));
    REQUIRE(r.next(f));
    CHECK((f.number == 4 && f.type == pb::wire_type::fixed64 && f.number_bits == 2));
    CHECK_FALSE(r.next(f));

    const auto error_of = [&](std::vector<unsigned char> bytes) {
        return format_error_of([&] {
            pb::reader q(bytes.data(), bytes.size(), pb::origin{&name, 100});
            pb::field g;
            while (q.next(g)) {
            }
        });
    };
    CHECK(error_of({0x08, 0x80}) == "msg.bin: byte 101: protobuf: varint runs past the end of its message");
    CHECK(error_of({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}) ==
          "msg.bin: byte 101: protobuf: varint longer than 64 bits");
    CHECK(error_of({0x12, 0x05, 'a'}) == "msg.bin: byte 100: protobuf: length-delimited field runs past the end of its message");
    CHECK(error_of({0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) ==
          "msg.bin: byte 100: protobuf: length-delimited field runs past the end of its message");
    CHECK(error_of({0x1d, 1, 2}) == "msg.bin: byte 100: protobuf: fixed-width field runs past the end of its message");
    CHECK(error_of({0x00, 0x00}) == "msg.bin: byte 100: protobuf: invalid field number");
    CHECK(error_of({0x0b}) == "msg.bin: byte 100: protobuf: groups are not supported");
    CHECK(error_of({0x08, 0x01, 0x0e}) == "msg.bin: byte 102: protobuf: unknown wire type");
}

TEST_CASE("TensorBoard logdir: runs by directory, every scalar style, non-scalars skipped with a note") {
    const history_set h = read_tensorboard(data("tb"));
    CHECK(h.reader == "TensorBoard");
    REQUIRE(h.runs.size() == 2);
    CHECK(h.runs[0].name == "async/run-2");
    CHECK(h.runs[1].name == "sync run 1");

    const run_history& sync = run_named(h, "sync run 1");
    CHECK(sync.step_name == "TensorBoard step");
    REQUIRE(sync.metrics.size() == 2);  // weights, samples, notes, logits skipped
    const auto& diff = sync.metrics.at(DIFF);  // simple_value
    CHECK(steps(diff) == std::vector<std::int64_t>{0, 1, 2, 3});
    CHECK(diff[0].value == 0.5);
    CHECK(diff[1].value == 0.25);
    CHECK(std::isnan(diff[2].value));
    CHECK(diff[3].value == 0.125);
    CHECK(diff[3].wall_time == T0 + 3);
    const auto& loss = sync.metrics.at(LOSS);  // float_val (packed), double_val; step 2 missing
    CHECK(steps(loss) == std::vector<std::int64_t>{0, 1, 3});
    CHECK(loss[0].value == 1.5);
    CHECK(loss[1].value == 1.25);
    CHECK(loss[2].value == 0.75);
    CHECK(has_note(h, "skipped 1 value(s) of tag 'weights' (a histogram"));
    CHECK(has_note(h, "tag 'samples' (an image"));
    CHECK(has_note(h, "tag 'notes' (data of a plugin other than scalars"));
    CHECK(has_note(h, "tag 'logits' (a tensor of more than one element"));
}

TEST_CASE("TensorBoard: the event files of one run merge by step, the later wall time wins") {
    const history_set h = read_tensorboard(data("tb"));
    const run_history& r = run_named(h, "async/run-2");
    REQUIRE(r.metrics.size() == 2);
    const auto& diff = r.metrics.at(DIFF);  // tensor_content float, then double after the restart
    CHECK(steps(diff) == std::vector<std::int64_t>{0, 1, 2, 3});
    CHECK(diff[0].value == 0.5);
    CHECK(diff[1].value == 0.75);
    CHECK(diff[2].value == 2.0);  // the second file's step 2 (wall time T0+100 > T0+2)
    CHECK(diff[2].wall_time == T0 + 100);
    CHECK(diff[3].value == 2.5);
    const auto& kl = r.metrics.at(KL);  // double_val, then unpacked float_val
    CHECK(steps(kl) == std::vector<std::int64_t>{0, 1, 2, 3});
    CHECK(kl[0].value == 0.1);
    CHECK(kl[1].value == 0.2);  // the second file logs step 1 with an EARLIER wall time: the first stays
    CHECK(kl[1].wall_time == T0 + 1);
    CHECK(kl[2].value == 0.5);
    CHECK(kl[3].value == 0.625);
    CHECK(has_note(h, "'async/run-2': tag 'train/kl': 2 step(s) logged more than once"));
    CHECK(has_note(h, "'async/run-2': tag 'train/train_rollout_logprob_abs_diff': 1 step(s)"));
}

TEST_CASE("TensorBoard: one event file is one run named by its directory") {
    const std::string file = data("tb/sync run 1/events.out.tfevents.1700000000.host.101.0");
    CHECK(looks_like_tfrecord(file));
    CHECK_FALSE(looks_like_tfrecord(data("wandb/offline-run-20260101_130000-def456/run-def456.wandb")));
    const history_set h = read_tensorboard(file);
    REQUIRE(h.runs.size() == 1);
    CHECK(h.runs[0].name == "sync run 1");
    CHECK(steps(h.runs[0].metrics.at(DIFF)) == std::vector<std::int64_t>{0, 1, 2, 3});
}

TEST_CASE("TensorBoard: a cut-off last record ends the file with a note; corrupt records are errors naming file and byte") {
    const auto error_of = [](const std::string& name) { return format_error_of([&] { read_tensorboard(data("tb_corrupt/" + name)); }); };
    // a writer still running (or killed) leaves its last record cut off:
    // the records before it are read, as TensorBoard does, with a note
    const history_set cut = read_tensorboard(data("tb_corrupt/events.out.tfevents.truncated"));
    REQUIRE(cut.runs.size() == 1);
    CHECK_FALSE(cut.runs[0].metrics.empty());
    CHECK(has_note(cut, "events.out.tfevents.truncated: byte 706: the last TFRecord is cut off"));
    CHECK(error_of("events.out.tfevents.bad_length_crc").find("events.out.tfevents.bad_length_crc: byte 176: TFRecord length CRC-32C mismatch") !=
          std::string::npos);
    CHECK(error_of("events.out.tfevents.bad_data_crc").find("events.out.tfevents.bad_data_crc: byte 176: TFRecord data CRC-32C mismatch") !=
          std::string::npos);
    CHECK(error_of("events.out.tfevents.bad_payload") ==
          data("tb_corrupt/events.out.tfevents.bad_payload") + ": byte 248: protobuf: length-delimited field runs past the end of its message");
}

TEST_CASE("TensorBoard bytes: short headers and absurd lengths are errors, not reads past the end") {
    const std::string name = "mem";
    const unsigned char tiny[] = {1, 2, 3};
    const history_set short_header = read_tensorboard_bytes(tiny, sizeof tiny, name);
    CHECK(short_header.runs.at(0).metrics.empty());
    CHECK(has_note(short_header, "mem: byte 0: the last TFRecord is cut off (3 of its 12 header bytes"));
    unsigned char huge[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    const std::uint32_t crc = masked_crc32c(huge, 8);
    std::memcpy(huge + 8, &crc, 4);  // little-endian host
    const history_set absurd = read_tensorboard_bytes(huge, sizeof huge, name);  // never allocated, never read past the end
    CHECK(absurd.runs.at(0).metrics.empty());
    CHECK(has_note(absurd, "mem: byte 0: the last TFRecord is cut off (9223372036854775807 data bytes"));
    // An empty input is an event file with no events: one run, no metrics, a note.
    const history_set empty = read_tensorboard_bytes(nullptr, 0, name);
    CHECK(empty.runs.at(0).metrics.empty());
    CHECK(has_note(empty, "TensorBoard run 'mem' has no scalars"));
    // A directory without event files is an error naming it.
    CHECK_THROWS_WITH_AS(read_tensorboard(data("wandb")), doctest::Contains("no TensorBoard event files"), logratio::error);
}

TEST_CASE("W&B offline log: legacy keys, FIRST/MIDDLE/LAST records, block padding, NaN / Infinity, skipped values") {
    const std::string file = data("wandb/offline-run-20260101_120000-abc123/run-abc123.wandb");
    CHECK(looks_like_wandb_log(file));
    CHECK_FALSE(looks_like_wandb_log(data("tb/sync run 1/events.out.tfevents.1700000000.host.101.0")));
    const history_set h = read_wandb_offline(file);
    REQUIRE(h.runs.size() == 1);
    const run_history& r = h.runs[0];
    CHECK(r.name == "sync run 1");
    CHECK(r.group == "sync");
    CHECK(r.step_name == "_step");
    REQUIRE(r.metrics.size() == 3);
    const auto& diff = r.metrics.at(DIFF);
    REQUIRE(diff.size() == 159);  // steps 0..159 but 5
    for (const auto& p : diff) {
        CHECK(p.step != 5);
        CHECK(p.wall_time == T0 + static_cast<double>(p.step));
        if (p.step == 7)
            CHECK(std::isnan(p.value));
        else
            CHECK(p.value == 0.001 * static_cast<double>(p.step));
    }
    const auto& loss = r.metrics.at(LOSS);
    REQUIRE(loss.size() == 159);
    CHECK(loss[7].step == 8);  // step 5 is missing
    CHECK(loss[7].value == HUGE_VAL);
    CHECK(loss[150 - 1].value == 2.0 - 0.001 * 150);  // the record split over three chunks
    const auto& acc = r.metrics.at("eval.acc");  // a nested key
    REQUIRE(acc.size() == 1);
    CHECK((acc[0].step == 10 && acc[0].value == 0.5));
    CHECK(has_note(h, "skipped 1 value(s) of 'samples'"));
    CHECK(has_note(h, "skipped 1 value(s) of 'note'"));
    CHECK(has_note(h, "skipped 1 value(s) of 'flag'"));
    CHECK(has_note(h, "skipped 1 value(s) of 'big'"));
}

TEST_CASE("W&B offline: a wandb/ directory of runs (wandb-core nested keys, a crashed run without exit record)") {
    const history_set h = read_wandb_offline(data("wandb"));
    REQUIRE(h.runs.size() == 2);  // wandb/latest-run, a link to the second run, is not read again
    CHECK(h.runs[0].name == "sync run 1");
    const run_history& r = h.runs[1];
    CHECK(r.name == "async run 2");
    CHECK(r.group == "async");
    REQUIRE(r.metrics.size() == 2);
    CHECK(steps(r.metrics.at(DIFF)) == std::vector<std::int64_t>{0, 1, 2});
    CHECK(r.metrics.at(DIFF)[2].value == 0.5);
    CHECK(r.metrics.at(KL)[2].value == -1.0);
    CHECK(std::isnan(r.metrics.at(KL)[2].wall_time));  // no _timestamp logged
    // The run directory alone reads the same run.
    const history_set one = read_wandb_offline(data("wandb/offline-run-20260101_130000-def456"));
    REQUIRE(one.runs.size() == 1);
    CHECK(one.runs[0].name == "async run 2");
}

TEST_CASE("W&B offline: a cut-off last record ends the log with a note; corrupt logs are errors naming file and byte") {
    const auto error_of = [](const std::string& name) { return format_error_of([&] { read_wandb_offline(data("wandb_corrupt/" + name)); }); };
    // a run killed mid-write: the records before the cut are read, with a note
    const history_set cut = read_wandb_offline(data("wandb_corrupt/truncated.wandb"));
    REQUIRE(cut.runs.size() == 1);
    CHECK(has_note(cut, "truncated.wandb: byte 278: the log's last record is cut off"));
    CHECK(error_of("bad_crc.wandb").find("bad_crc.wandb: byte 166: W&B log chunk CRC-32 mismatch") != std::string::npos);
    CHECK(error_of("bad_header.wandb").find("bad_header.wandb: byte 4: W&B log header magic is not 0xBEE1") != std::string::npos);
}

TEST_CASE("W&B bytes: chunk order, zero padding and value JSON") {
    const std::string name = "mem.wandb";
    std::string log = std::string(":W&B") + char(0xE1) + char(0xBE) + char(0);
    const auto chunk = [](std::string& out, unsigned char type, const std::string& payload) {
        const std::uint32_t crc = crc32_zlib(payload.data(), payload.size(), crc32_zlib(&type, 1));
        out.append(reinterpret_cast<const char*>(&crc), 4);  // little-endian host
        out.push_back(char(payload.size() & 0xff));
        out.push_back(char(payload.size() >> 8));
        out.push_back(char(type));
        out += payload;
    };
    const auto read = [&](const std::string& bytes) {
        return read_wandb_bytes(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), name);
    };
    // Record{history: {item {key "m" value_json "1.5e0"}, item {key "_step" value_json "4"}}}
    const std::string item1 = std::string("\x0a\x01m", 3) + "\x82\x01\x05" + "1.5e0";
    const std::string item2 = std::string("\x0a\x05_step", 7) + "\x82\x01\x01" + "4";
    const std::string hist = "\x0a" + std::string(1, char(item1.size())) + item1 + "\x0a" + std::string(1, char(item2.size())) + item2;
    const std::string record = "\x12" + std::string(1, char(hist.size())) + hist;
    std::string ok = log;
    chunk(ok, 2, record.substr(0, 5));
    chunk(ok, 3, record.substr(5, 5));
    chunk(ok, 4, record.substr(10));
    const history_set h = read(ok + std::string(20, '\0'));  // trailing zeros: padding
    REQUIRE(h.runs.size() == 1);
    CHECK(h.runs[0].name == name);
    REQUIRE(h.runs[0].metrics.at("m").size() == 1);
    CHECK((h.runs[0].metrics.at("m")[0].step == 4 && h.runs[0].metrics.at("m")[0].value == 1.5));

    std::string orphan = log;
    chunk(orphan, 4, record);
    CHECK(format_error_of([&] { read(orphan); }) == "mem.wandb: byte 7: W&B log chunk continues a record that was never started");
    std::string unfinished = log;
    chunk(unfinished, 2, record.substr(0, 5));
    const history_set unfinished_h = read(unfinished);  // FIRST without its LAST: the record is dropped, with a note
    CHECK(unfinished_h.runs.at(0).metrics.empty());
    CHECK(has_note(unfinished_h, "mem.wandb: byte 7: the log's last record is cut off (its last chunk is missing"));
    std::string cut_mid = ok;  // the same record again, its LAST chunk cut short
    chunk(cut_mid, 2, record.substr(0, 5));
    chunk(cut_mid, 4, record.substr(5));
    cut_mid.resize(cut_mid.size() - 3);
    const history_set cut_h = read(cut_mid);
    CHECK(cut_h.runs.at(0).metrics.at("m").size() == 1);
    CHECK(has_note(cut_h, "the log's last record is cut off (a chunk of"));
    std::string bad_json = log;
    std::string rec2 = record;
    rec2.replace(rec2.find("1.5e0"), 5, "1.5e+");
    chunk(bad_json, 1, rec2);
    CHECK(format_error_of([&] { read(bad_json); }).find("W&B history value of 'm' is not valid JSON: 1.5e+") != std::string::npos);
    std::string twice = ok;  // the same _step logged again with another value
    std::string rec3 = record;
    rec3.replace(rec3.find("1.5e0"), 5, "2.5e0");
    chunk(twice, 1, rec3);
    CHECK(format_error_of([&] { read(twice); }) ==
          "mem.wandb: byte " + std::to_string(ok.size() + 7) + ": W&B history logs 'm' twice at _step 4 with different values (1.5 and 2.5)");
    std::string same = ok;  // ... with the same value: one point
    chunk(same, 1, record);
    CHECK(read(same).runs[0].metrics.at("m").size() == 1);
    std::string no_step = log;  // a row without _step and without HistoryRecord.step
    const std::string hist1 = "\x0a" + std::string(1, char(item1.size())) + item1;
    chunk(no_step, 1, "\x12" + std::string(1, char(hist1.size())) + hist1);
    CHECK(format_error_of([&] { read(no_step); }).find("mem.wandb: byte 14: W&B history record has neither a _step item nor a step") == 0);
    std::string garbage = ok + "xyz";  // three bytes of a chunk header: cut off, with a note
    CHECK(has_note(read(garbage), "the log's last record is cut off (a chunk header of 3 of 7 bytes"));
    std::string bad_type = ok;  // a complete chunk of an unknown type stays an error
    chunk(bad_type, 9, record);
    CHECK(format_error_of([&] { read(bad_type); }).find("chunk type 9 is not FULL/FIRST/MIDDLE/LAST") != std::string::npos);
}

TEST_CASE("TensorBoard: event files in the logdir itself are the run named by the logdir; byte-identical W&B logs read once") {
    namespace fs = std::filesystem;
    const temp_dir tb("tb_layout");
    const fs::path sync = data("tb/sync run 1/events.out.tfevents.1700000000.host.101.0");
    fs::copy_file(sync, tb.path / sync.filename());
    fs::create_directories(tb.path / "sub");
    fs::copy_file(sync, tb.path / "sub" / sync.filename());
    const history_set h = read_tensorboard(tb.path.string());
    REQUIRE(h.runs.size() == 2);
    CHECK(h.runs[0].name == tb.path.filename().string());  // never "." (#42)
    CHECK(h.runs[1].name == "sub");
    CHECK(h.runs[0].metrics.at(DIFF).size() == 4);

    const temp_dir wb("wandb_same_name");
    const fs::path run = data("wandb/offline-run-20260101_130000-def456/run-def456.wandb");
    for (const char* d : {"offline-run-a", "offline-run-b", "offline-run-c"}) {  // three copies of one log
        fs::create_directories(wb.path / d);
        fs::copy_file(run, wb.path / d / run.filename());
    }
    // copies (a committed wandb/latest-run/ beside its run) are one run, read once (#42); a
    // run resumed offline writes logs that differ, kept apart by run id, then directory
    const history_set w = read_wandb_offline(wb.path.string());
    REQUIRE(w.runs.size() == 1);
    CHECK(w.runs[0].name == "async run 2");
    CHECK(w.runs[0].id == "def456");
    CHECK(has_note(w, "offline-run-b/run-def456.wandb: byte-identical to"));
    CHECK(has_note(w, "offline-run-c/run-def456.wandb: byte-identical to"));
}

// ---------------------------------------------------------------- run attributes (#38)

namespace {

// Protobuf encoding for hand-made records: a varint, a length-delimited
// field, a varint field, a fixed64 double field.
std::string pb_varint(std::uint64_t v) {
    std::string out;
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        if (v) b |= 0x80;
        out.push_back(char(b));
    } while (v);
    return out;
}
std::string pb_bytes(unsigned number, const std::string& payload) {
    return pb_varint(number << 3 | 2) + pb_varint(payload.size()) + payload;
}
std::string pb_int(unsigned number, std::uint64_t v) { return pb_varint(number << 3) + pb_varint(v); }
std::string pb_double(unsigned number, double v) {
    std::string out = pb_varint(number << 3 | 1);
    out.append(reinterpret_cast<const char*>(&v), 8);  // little-endian host
    return out;
}

// A .wandb log of FULL chunks, one per record.
std::string wandb_log(const std::vector<std::string>& records) {
    std::string out = std::string(":W&B") + char(0xE1) + char(0xBE) + char(0);
    for (const auto& r : records) {
        const unsigned char type = 1;
        const std::uint32_t crc = crc32_zlib(r.data(), r.size(), crc32_zlib(&type, 1));
        out.append(reinterpret_cast<const char*>(&crc), 4);
        out.push_back(char(r.size() & 0xff));
        out.push_back(char(r.size() >> 8));
        out.push_back(char(type));
        out += r;
    }
    return out;
}

// A ConfigItem (key = 1, nested_key = 2, value_json = 16).
std::string config_item(const std::string& key, const std::string& json, const std::vector<std::string>& nested = {}) {
    std::string item = key.empty() ? std::string() : pb_bytes(1, key);
    for (const auto& n : nested) item += pb_bytes(2, n);
    return item + pb_bytes(16, json);
}

// A TFRecord of `data` (length, masked CRC-32C of it, data, masked CRC-32C of the data).
std::string tfrecord(const std::string& data) {
    std::string out;
    const std::uint64_t n = data.size();
    out.append(reinterpret_cast<const char*>(&n), 8);
    const std::uint32_t c1 = masked_crc32c(reinterpret_cast<const unsigned char*>(out.data()), 8);
    out.append(reinterpret_cast<const char*>(&c1), 4);
    out += data;
    const std::uint32_t c2 = masked_crc32c(reinterpret_cast<const unsigned char*>(data.data()), data.size());
    out.append(reinterpret_cast<const char*>(&c2), 4);
    return out;
}

// An Event holding one Summary.Value with hparams plugin metadata whose
// content is a HParamsPluginData (session_start_info = 3 -> hparams = 1 map entries).
std::string hparams_event(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string map;
    for (const auto& [k, value] : entries) map += pb_bytes(1, pb_bytes(1, k) + pb_bytes(2, value));
    const std::string content = pb_int(1, 0) + pb_bytes(3, map);
    const std::string metadata = pb_bytes(1, pb_bytes(1, "hparams") + pb_bytes(2, content));
    const std::string value = pb_bytes(1, "_hparams_/session_start_info") + pb_bytes(9, metadata);
    return pb_double(1, 1700000000.0) + pb_bytes(5, pb_bytes(1, value));
}

}  // namespace

TEST_CASE("W&B bytes: config items (nested keys, {value} wrappers, removals, _wandb, text/bool/null/array) as attributes") {
    const std::string run = pb_bytes(17, pb_bytes(1, "id1") + pb_bytes(4, pb_bytes(1, config_item("lr", "0.0010"))));
    std::string update;
    update += pb_bytes(1, config_item("", "1.0e-06", {"actor", "optim", "lr"}));           // wandb-core nested keys
    update += pb_bytes(1, config_item("mode", "{\"desc\": null, \"value\": \"async\"}"));  // config.yaml's wrapper
    update += pb_bytes(1, config_item("model", "{\"name\": \"qwen\", \"layers\": [1, 2], \"tied\": true, \"x\": null}"));
    update += pb_bytes(1, config_item("_wandb", "{\"value\": {\"cli_version\": \"0.19\"}}"));
    update += pb_bytes(1, config_item("gone", "5"));
    update += pb_bytes(1, config_item("big", "12345678901234567890"));
    update += pb_bytes(1, config_item("nan", "NaN"));
    const std::string remove = pb_bytes(2, config_item("gone", "null"));
    const std::string again = pb_bytes(1, config_item("lr", "0.002"));
    const std::string log = wandb_log({run, pb_bytes(5, update), pb_bytes(5, remove), pb_bytes(5, again)});
    const history_set h = read_wandb_bytes(reinterpret_cast<const unsigned char*>(log.data()), log.size(), "cfg.wandb");
    REQUIRE(h.runs.size() == 1);
    const std::map<std::string, std::string> want{
        {"lr", "0.002"},           {"actor.optim.lr", "1e-06"}, {"mode", "async"},
        {"model.name", "qwen"},    {"model.layers", "[1,2]"},   {"model.tied", "true"},
        {"big", "12345678901234567890"}, {"nan", "nan"}};
    CHECK(h.runs[0].attributes == want);
    CHECK(has_note(h, "W&B run 'id1' (cfg.wandb): attribute(s) given twice with different values, the last kept (as W&B does): lr (0.001 -> 0.002)"));
    // a value that is not JSON: an error naming the file, the record's byte and the key
    const std::string bad = wandb_log({pb_bytes(5, pb_bytes(1, config_item("k", "{oops")))});
    CHECK(format_error_of([&] { read_wandb_bytes(reinterpret_cast<const unsigned char*>(bad.data()), bad.size(), "bad.wandb"); })
              .find("bad.wandb: byte 14: config 'k': line 1: not valid JSON") != std::string::npos);
}

TEST_CASE("TensorBoard bytes: hparams (number, string, bool; null, struct and list skipped) are attributes, not tags") {
    const std::string events = tfrecord(pb_double(1, 1700000000.0) + pb_bytes(3, "brain.Event:2")) +
                               tfrecord(hparams_event({{"lr", pb_double(2, 3e-4)},
                                                       {"steps", pb_double(2, 1000.0)},
                                                       {"mode", pb_bytes(3, "async")},
                                                       {"colocate", pb_int(4, 1)},
                                                       {"none", pb_int(1, 0)},
                                                       {"nested", pb_bytes(5, "")},
                                                       {"mode", pb_bytes(3, "sync")}}));
    const history_set h = read_tensorboard_bytes(reinterpret_cast<const unsigned char*>(events.data()), events.size(), "hp");
    REQUIRE(h.runs.size() == 1);
    const std::map<std::string, std::string> want{{"lr", "0.0003"}, {"steps", "1000"}, {"mode", "sync"}, {"colocate", "true"}};
    std::string got;
    for (const auto& [k, v] : h.runs[0].attributes) got += k + "=" + v + ";";
    INFO(got);
    CHECK(h.runs[0].attributes == want);
    CHECK(h.runs[0].metrics.empty());
    CHECK(has_note(h, "TensorBoard run 'hp': attribute(s) given twice with different values, the last kept (as W&B does): mode (async -> sync)"));
    CHECK_FALSE(has_note(h, "_hparams_"));
}

TEST_CASE("TensorBoard: torch's add_hparams directory (<run>/<time>/) gives the run above it its attributes") {
    temp_dir dir("tb_add_hparams");
    const auto write = [](const std::filesystem::path& file, const std::string& bytes) {
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file, std::ios::binary) << bytes;
    };
    const std::string version = tfrecord(pb_double(1, 1700000000.0) + pb_bytes(3, "brain.Event:2"));
    const std::string scalar = pb_bytes(1, "loss") + std::string("\x15\x00\x00\x80\x3f", 5);  // simple_value 1.0f
    const std::string point = tfrecord(pb_double(1, 1700000001.0) + pb_int(2, 3) + pb_bytes(5, pb_bytes(1, scalar)));
    write(dir.path / "run" / "events.out.tfevents.1.host", version + point);
    write(dir.path / "run" / "1700000000.5" / "events.out.tfevents.2.host",
          version + tfrecord(hparams_event({{"learning_rate", pb_double(2, 5e-7)}, {"report_to", pb_bytes(3, "tensorboard")}})));
    const history_set h = read_tensorboard(dir.path.string());
    REQUIRE(h.runs.size() == 1);
    CHECK(h.runs[0].name == "run");
    CHECK(h.runs[0].attributes == std::map<std::string, std::string>{{"learning_rate", "5e-07"}, {"report_to", "tensorboard"}});
    CHECK(h.runs[0].metrics.at("loss").size() == 1);
    CHECK(has_note(h, "TensorBoard run 'run': attributes from the hparams in run/1700000000.5 (torch's add_hparams directory; not a run of its own)"));
    CHECK_FALSE(has_note(h, "has no scalars"));
}
