// Google Benchmark: reading the binary tracker logs. A TensorBoard logdir and
// a W&B offline run directory are synthesized in a temporary directory (4 runs
// x 2,000 steps x 50 scalar tags; TensorBoard as torch's add_scalar writes them,
// one event per scalar, and one tag in every tensor style; W&B one history
// record per step, as wandb.log writes it), then read from the page cache with
// read_tensorboard / read_wandb_offline; bytes/s is the files' size over the
// read time (the target for event files: >= 200 MB/s). The readers
// are single-threaded, so the rates are per CPU second of the reading thread
// (kernel time of its page faults included): on a shared machine the wall
// time (the "Time" column) also counts the time other processes had the core.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "trackers/crc32c.hpp"
#include "trackers/tensorboard.hpp"
#include "trackers/wandb_offline.hpp"

namespace {

namespace fs = std::filesystem;
using namespace logratio_cli::trackers;

constexpr int runs = 4, steps = 2000, tags = 50;

// ---- a minimal protobuf encoder (what the writers do; see tests/trackers/binary_writers.py)
void varint(std::string& o, std::uint64_t v) {
    while (v >= 0x80) {
        o.push_back(char(v | 0x80));
        v >>= 7;
    }
    o.push_back(char(v));
}
void key(std::string& o, unsigned number, unsigned wire) { varint(o, number << 3 | wire); }
void bytes(std::string& o, unsigned number, const std::string& b) {
    key(o, number, 2);
    varint(o, b.size());
    o += b;
}
template <class T>
void fixed(std::string& o, unsigned number, T v) {
    key(o, number, sizeof(T) == 8 ? 1 : 5);
    o.append(reinterpret_cast<const char*>(&v), sizeof v);  // little-endian host
}

std::string tfrecord(const std::string& data) {
    std::string o;
    const std::uint64_t n = data.size();
    o.append(reinterpret_cast<const char*>(&n), 8);
    const std::uint32_t lc = masked_crc32c(o.data(), 8);
    o.append(reinterpret_cast<const char*>(&lc), 4);
    o += data;
    const std::uint32_t dc = masked_crc32c(data.data(), data.size());
    o.append(reinterpret_cast<const char*>(&dc), 4);
    return o;
}

std::string tag_name(int t) { return "train/metric_" + std::to_string(t); }

std::string event_file(int run) {
    std::string out;
    for (int s = 0; s < steps; ++s)
        for (int t = 0; t < tags; ++t) {
            std::string value;
            bytes(value, 1, tag_name(t));
            const float v = float(run + s * 1e-3 + t);
            if (t == 0) {  // torch new_style: tensor float_val + plugin "scalars"
                std::string tensor, md, pd;
                varint((key(tensor, 1, 0), tensor), 1);
                bytes(tensor, 5, std::string(reinterpret_cast<const char*>(&v), 4));
                bytes(pd, 1, "scalars");
                bytes(md, 1, pd);
                bytes(value, 8, tensor);
                bytes(value, 9, md);
            } else {
                fixed(value, 2, v);
            }
            std::string summary, event;
            bytes(summary, 1, value);
            fixed(event, 1, 1.7e9 + s);
            varint((key(event, 2, 0), event), std::uint64_t(s));
            bytes(event, 5, summary);
            out += tfrecord(event);
        }
    return out;
}

std::string wandb_log(int run) {
    std::string log = std::string(":W&B") + char(0xE1) + char(0xBE) + char(0);
    const auto write = [&](const std::string& rec) {  // datastore.py's chunking
        std::size_t used = 0;
        bool first = true;
        do {
            std::size_t left = 32768 - log.size() % 32768;
            if (left < 7) log.append(left, '\0'), left = 32768;
            const std::size_t n = std::min(rec.size() - used, left - 7);
            const bool last = used + n == rec.size();
            const unsigned char type = first ? (last ? 1 : 2) : (last ? 4 : 3);
            const std::uint32_t crc = crc32_zlib(rec.data() + used, n, crc32_zlib(&type, 1));
            log.append(reinterpret_cast<const char*>(&crc), 4);
            log.push_back(char(n & 0xff));
            log.push_back(char(n >> 8));
            log.push_back(char(type));
            log.append(rec, used, n);
            used += n;
            first = false;
        } while (used < rec.size());
    };
    std::string runrec, rec;
    bytes(runrec, 1, "run" + std::to_string(run));
    bytes(runrec, 8, "run " + std::to_string(run));
    bytes(rec, 17, runrec);
    write(rec);
    char buf[64];
    for (int s = 0; s < steps; ++s) {
        std::string hist;
        const auto item = [&](const std::string& k, const std::string& v) {
            std::string it;
            bytes(it, 1, k);
            bytes(it, 16, v);
            bytes(hist, 1, it);
        };
        item("_step", std::to_string(s));
        std::snprintf(buf, sizeof buf, "%.17g", 1.7e9 + s);
        item("_timestamp", buf);
        for (int t = 0; t < tags; ++t) {
            std::snprintf(buf, sizeof buf, "%.17g", run + s * 1e-3 + t);
            item(tag_name(t), buf);
        }
        std::string r;
        bytes(r, 2, hist);
        write(r);
    }
    return log;
}

struct dataset {
    fs::path dir;
    std::size_t tb_bytes = 0, wandb_bytes = 0;
    dataset() {
        dir = fs::temp_directory_path() / ("logratio_bench_trackers_" + std::to_string(::getpid()));
        for (int r = 0; r < runs; ++r) {
            const fs::path tb = dir / "tb" / ("run " + std::to_string(r));
            const fs::path wb = dir / "wandb" / ("offline-run-20260101_000000-run" + std::to_string(r));
            fs::create_directories(tb);
            fs::create_directories(wb);
            const std::string e = event_file(r), w = wandb_log(r);
            std::ofstream(tb / "events.out.tfevents.1700000000.host.1.0", std::ios::binary) << e;
            std::ofstream(wb / ("run-run" + std::to_string(r) + ".wandb"), std::ios::binary) << w;
            tb_bytes += e.size();
            wandb_bytes += w.size();
        }
    }
    ~dataset() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

const dataset& data() {
    static const dataset d;
    return d;
}

void tensorboard_logdir(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) {
        auto h = read_tensorboard((d.dir / "tb").string());
        if (h.runs.size() != runs || h.runs[0].metrics.size() != tags) st.SkipWithError("wrong read");
        benchmark::DoNotOptimize(h);
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * d.tb_bytes));
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * runs * steps * tags);
}
BENCHMARK(tensorboard_logdir)->Unit(benchmark::kMillisecond);

void wandb_offline(benchmark::State& st) {
    const auto& d = data();
    for (auto _ : st) {
        auto h = read_wandb_offline((d.dir / "wandb").string());
        if (h.runs.size() != runs || h.runs[0].metrics.size() != tags) st.SkipWithError("wrong read");
        benchmark::DoNotOptimize(h);
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * d.wandb_bytes));
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * runs * steps * tags);
}
BENCHMARK(wandb_offline)->Unit(benchmark::kMillisecond);

void crc32c_only(benchmark::State& st) {
    const std::string buf(1 << 20, 'x');
    for (auto _ : st) benchmark::DoNotOptimize(crc32c(buf.data(), buf.size()));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * buf.size()));
}
BENCHMARK(crc32c_only)->Unit(benchmark::kMicrosecond);

}  // namespace
BENCHMARK_MAIN();
