#pragma once
// W&B offline runs (wandb/offline-run-<time>-<id>/run-<id>.wandb) -> history_set.
//
// Format, per wandb/wandb @0552ec8a wandb/sdk/internal/datastore.py (the
// Python writer) and core/pkg/leveldb/record.go with CRCAlgoIEEE (wandb-core's
// writer, core/internal/transactionlog/writer.go):
//  - a 7-byte header: ":W&B", uint16 LE magic 0xBEE1, version byte 0;
//  - then LevelDB-log style 32 KiB blocks (the header counts in block 0) of
//    chunks: uint32 LE checksum = zlib crc32 of (type byte, data) (datastore.py
//    seeds zlib.crc32(data, crc32(chr(type)))), uint16 LE length, type byte
//    FULL 1 / FIRST 2 / MIDDLE 3 / LAST 4, data; a chunk never crosses a block;
//    fewer than 7 bytes left in a block are zero padding;
//  - a record (FULL, or FIRST MIDDLE* LAST joined) is a protobuf Record
//    (wandb/proto/wandb_internal.proto @00243053): history = 2 -> HistoryRecord
//    item = 1 (HistoryItem key = 1, nested_key = 2 (joined with '.'), value_json
//    = 16), step = 2 -> HistoryStep num = 1; run = 17 -> RunRecord run_id = 1,
//    config = 4, run_group = 6, display_name = 8; config = 5 -> ConfigRecord
//    update = 1, remove = 2 -> ConfigItem key = 1, nested_key = 2,
//    value_json = 16 (the config fields per wandb/wandb @b6e29505, same path).
// The run's attributes are its config (wandb.init's in the RunRecord, then
// each config record; the last value of a key wins, as in W&B, with a note),
// flattened with '.', {"value": X} unwrapped, _wandb skipped; a log without
// a config record takes files/config.yaml of its run directory.
// The step of a history row is its "_step" item (what `run.history()` calls
// _step), else HistoryRecord.step; "_timestamp" is the wall time. Items whose
// key starts with '_' are bookkeeping, not metrics. Values are JSON numbers
// (NaN, Infinity and -Infinity included, as wandb writes them); strings,
// booleans, null, objects (media, histograms, tables) and arrays are skipped
// with a note. A corrupt or truncated log is a format_error naming the file
// and the byte offset; nothing is read past it.
#include <cstddef>
#include <string>

#include <logratio/core/error.hpp>

#include "../mapped_file.hpp"
#include "crc32c.hpp"
#include "history.hpp"
#include "protobuf_wire.hpp"

namespace logratio_cli::trackers {

/// One .wandb log held in memory (one run; `name` names it in errors and
/// is its name if the log has no RunRecord); the entry point of fuzz/fuzz_wandb.cpp.
history_set read_wandb_bytes(const unsigned char* data, std::size_t size, const std::string& name);

/// The history of W&B offline runs: a run-*.wandb file, an offline-run-* /
/// run-* directory holding one, or a directory with such run directories
/// below it (wandb/, or the project holding wandb/).
/// Each log is one run, named by its RunRecord's display name, else its run
/// id, else its directory; runs that would share a name get their run id added.
history_set read_wandb_offline(const std::string& path);

/// True if the file starts with the W&B log header (":W&B", 0xBEE1).
bool looks_like_wandb_log(const std::string& file);

}  // namespace logratio_cli::trackers
