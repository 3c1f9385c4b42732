#!/usr/bin/python3
"""Writers of the binary tracker logs logratio reads, following the formats
(no TensorFlow, TensorBoard, protobuf or wandb package needed):

- TensorBoard event files: TFRecord framing per tensorflow/tensorboard @70b76c92
  tensorboard/summary/writer/record_writer.py (uint64 LE length, masked CRC-32C
  of the length, data, masked CRC-32C of the data); Event / Summary / TensorProto
  fields per tensorboard/compat/proto/{event,summary,tensor}.proto; scalar styles
  as pytorch torch/utils/tensorboard/summary.py scalar() (simple_value, or
  new_style float_val / double_val with plugin "scalars") and tf.summary.scalar
  (tensor_content).
- W&B offline run logs (run-<id>.wandb): wandb/wandb @0552ec8a
  wandb/sdk/internal/datastore.py (header ':W&B' 0xBEE1 version 0, 32 KiB blocks,
  chunks of crc32(type byte + data) / uint16 length / type FULL FIRST MIDDLE LAST,
  zero padding where fewer than 7 bytes are left in a block); payload a Record per
  wandb/proto/wandb_internal.proto @00243053 (Record.history = 2, run = 17,
  exit = 18; HistoryRecord item = 1, step = 2; HistoryItem key = 1,
  nested_key = 2, value_json = 16; RunRecord run_id = 1, project = 3,
  run_group = 6, display_name = 8).

Import it (tests/trackers on sys.path) and call write_tfevents / write_wandb, or
run it to (re)write tests/data/trackers/binary/:  /usr/bin/python3 binary_writers.py [OUTDIR]
"""
import json
import math
import os
import struct
import sys
import zlib

# ---------------------------------------------------------------- CRC-32C

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of bytes."""
    crc = 0xFFFFFFFF
    t = _CRC32C_TABLE
    for b in data:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

# ---------------------------------------------------------------- protobuf

def _varint(n):
    n &= (1 << 64) - 1  # negative int64 -> 10-byte two's complement, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(number, wire):
    return _varint(number << 3 | wire)


def pb_varint(number, value):
    return _key(number, 0) + _varint(value)


def pb_double(number, value):
    return _key(number, 1) + struct.pack("<d", value)


def pb_float(number, value):
    return _key(number, 5) + struct.pack("<f", value)


def pb_bytes(number, payload):
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return _key(number, 2) + _varint(len(payload)) + payload

# ---------------------------------------------------------------- TensorBoard

DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7
SCALAR_STYLES = ("simple", "float_val", "float_val_unpacked", "double_val", "content_float", "content_double")
OTHER_STYLES = ("histogram", "image", "text", "tensor_vector")


def _metadata(plugin, data_class=None):
    md = pb_bytes(1, pb_bytes(1, plugin))  # plugin_data.plugin_name
    if data_class is not None:
        md += pb_varint(4, data_class)
    return pb_bytes(9, md)


def summary_value(tag, value, style="simple"):
    """One Summary.Value of `tag` in one of SCALAR_STYLES or OTHER_STYLES."""
    v = pb_bytes(1, tag)
    if style == "simple":  # torch add_scalar (new_style=False)
        return v + pb_float(2, value)
    if style == "float_val":  # torch new_style=True: packed float_val, plugin "scalars"
        t = pb_varint(1, DT_FLOAT) + pb_bytes(5, struct.pack("<f", value))
        return v + pb_bytes(8, t) + _metadata("scalars")
    if style == "float_val_unpacked":  # proto2-era writers: one fixed32 per element
        t = pb_varint(1, DT_FLOAT) + pb_float(5, value)
        return v + pb_bytes(8, t)
    if style == "double_val":  # torch new_style=True, double_precision=True
        t = pb_varint(1, DT_DOUBLE) + pb_bytes(6, struct.pack("<d", value))
        return v + pb_bytes(8, t) + _metadata("scalars")
    if style in ("content_float", "content_double"):  # tf.summary.scalar: rank-0 tensor_content
        dtype, raw = (DT_FLOAT, struct.pack("<f", value)) if style == "content_float" else (DT_DOUBLE, struct.pack("<d", value))
        t = pb_varint(1, dtype) + pb_bytes(2, b"") + pb_bytes(4, raw)
        return v + pb_bytes(8, t) + _metadata("scalars", data_class=1)
    if style == "histogram":  # HistogramProto: min 1, max 2, num 3, sum 4
        h = pb_double(1, value) + pb_double(2, value) + pb_double(3, 1.0) + pb_double(4, value)
        return v + pb_bytes(5, h)
    if style == "image":  # Summary.Image: height 1, width 2, colorspace 3, encoded 4
        img = pb_varint(1, 1) + pb_varint(2, 1) + pb_varint(3, 1) + pb_bytes(4, b"\x89PNG")
        return v + pb_bytes(4, img)
    if style == "text":  # text plugin: DT_STRING tensor, string_val 8
        t = pb_varint(1, DT_STRING) + pb_bytes(8, str(value))
        return v + pb_bytes(8, t) + _metadata("text")
    if style == "hparams":  # hp.hparams / add_hparams: HParamsPluginData.session_start_info.hparams
        entries = b""
        for k, x in value.items():  # google.protobuf.Value: number 2, string 3, bool 4
            pv = pb_varint(4, int(x)) if isinstance(x, bool) else pb_double(2, float(x)) if isinstance(x, (int, float)) \
                else pb_bytes(3, x)
            entries += pb_bytes(1, pb_bytes(1, k) + pb_bytes(2, pv))
        content = pb_varint(1, 0) + pb_bytes(3, entries)
        md = pb_bytes(1, pb_bytes(1, "hparams") + pb_bytes(2, content))
        return v + pb_bytes(9, md)  # no tensor, as torch's SummaryWriter.add_hparams writes it
    if style == "tensor_vector":  # a float tensor of shape [2] without plugin metadata
        shape = pb_bytes(2, pb_varint(1, 2))
        t = pb_varint(1, DT_FLOAT) + pb_bytes(2, shape) + pb_bytes(5, struct.pack("<ff", value, value))
        return v + pb_bytes(8, t)
    raise ValueError("unknown style " + style)


def event_bytes(wall_time, step, values=None, file_version=None):
    """An Event: wall_time 1, step 2, file_version 3 or summary 5 (values as bytes)."""
    e = pb_double(1, wall_time)
    if step:
        e += pb_varint(2, step)
    if file_version is not None:
        e += pb_bytes(3, file_version)
    if values is not None:
        e += pb_bytes(5, b"".join(pb_bytes(1, v) for v in values))
    return e


def tfrecord(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def tfevents_bytes(events, start_wall_time=None):
    """The bytes of an event file: a file_version event, then one event per
    (wall_time, step, tag, value, style) (style from SCALAR_STYLES or OTHER_STYLES)."""
    if start_wall_time is None:
        start_wall_time = events[0][0] if events else 0.0
    out = [tfrecord(event_bytes(start_wall_time, 0, file_version="brain.Event:2"))]
    for wall_time, step, tag, value, style in events:
        out.append(tfrecord(event_bytes(wall_time, step, [summary_value(tag, value, style)])))
    return b"".join(out)


def write_tfevents(path, events, start_wall_time=None):
    """Writes an event file (see tfevents_bytes); creates its directory."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(tfevents_bytes(events, start_wall_time))


def record_offsets(data):
    """Byte offsets of the TFRecords in an event file's bytes."""
    offsets, pos = [], 0
    while pos < len(data):
        offsets.append(pos)
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 16 + n
    return offsets

# ---------------------------------------------------------------- W&B offline log

WANDB_BLOCK = 32768
WANDB_HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


class WandbLog:
    """A W&B record log (datastore.py): header, then records chunked into
    32 KiB blocks."""

    def __init__(self):
        self.buf = bytearray(b":W&B" + struct.pack("<HB", 0xBEE1, 0))

    def _chunk(self, data, kind):
        crc = zlib.crc32(data, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF
        self.buf += struct.pack("<IHB", crc, len(data), kind) + data

    def space_left(self):
        return WANDB_BLOCK - len(self.buf) % WANDB_BLOCK

    def write(self, record):
        if self.space_left() < WANDB_HEADER:
            self.buf += b"\x00" * self.space_left()
        left = self.space_left()
        if len(record) + WANDB_HEADER <= left:
            self._chunk(record, FULL)
            return
        room = left - WANDB_HEADER
        self._chunk(record[:room], FIRST)
        used = room
        while len(record) - used > WANDB_BLOCK - WANDB_HEADER:
            self._chunk(record[used:used + WANDB_BLOCK - WANDB_HEADER], MIDDLE)
            used += WANDB_BLOCK - WANDB_HEADER
        self._chunk(record[used:], LAST)


def config_record(items, field=1):
    """A ConfigRecord (update = 1 or remove = 2) of ConfigItems: key = 1,
    value_json = 16 (wandb/proto/wandb_internal.proto)."""
    return b"".join(pb_bytes(field, pb_bytes(1, k) + pb_bytes(16, json.dumps(v))) for k, v in items.items())


def run_record(run_id, display_name=None, group=None, project="logratio", config=None):
    r = pb_bytes(1, run_id) + pb_bytes(3, project)
    if config:  # RunRecord.config = 4: wandb.init(config=...)
        r += pb_bytes(4, config_record(config))
    if group:
        r += pb_bytes(6, group)
    if display_name:
        r += pb_bytes(8, display_name)
    return pb_bytes(17, r)


def history_record(row, nested=False, num=0):
    """A Record holding a HistoryRecord of one logged row (dict). Keys of the
    form ('a', 'b') are nested keys; with nested=True every key is written as
    nested_key (as wandb-core does), otherwise as key (legacy Python wandb)."""
    items = []
    for k, v in row.items():
        item = b""
        if isinstance(k, tuple):
            item += b"".join(pb_bytes(2, part) for part in k)
        elif nested:
            item += pb_bytes(2, k)
        else:
            item += pb_bytes(1, k)
        item += pb_bytes(16, json.dumps(v))  # Python's json writes NaN / Infinity / -Infinity
        items.append(pb_bytes(1, item))
    h = b"".join(items)
    if "_step" in row:
        h += pb_bytes(2, pb_varint(1, row["_step"]))
    rec = b""
    if num:
        rec += pb_varint(1, num)
    return rec + pb_bytes(2, h)


def exit_record(exit_code=0):
    return pb_bytes(18, pb_varint(1, exit_code) if exit_code else b"")


def wandb_bytes(run_name, rows, run_id="abc123", group=None, nested=False, exit_code=0, pad_before=None,
                config=None, config_updates=()):
    """The bytes of a run-<id>.wandb log: a RunRecord, one HistoryRecord per
    row, an exit record (unless exit_code is None: a crashed run). If
    pad_before is an index, a filler record is placed before that row so that
    fewer than 7 bytes remain in the block (exercising the zero padding).
    config: the RunRecord's config (a dict: key -> value, JSON-encoded);
    config_updates: dicts written as config records after it."""
    log = WandbLog()
    log.write(run_record(run_id, run_name, group, config=config))
    for update in config_updates:  # Record.config = 5: wandb.config.update(...)
        log.write(pb_bytes(5, config_record(update)))
    for i, row in enumerate(rows):
        if pad_before == i:
            _write_filler(log, nested)
        log.write(history_record(row, nested, num=i + 2))
    if exit_code is not None:
        log.write(exit_record(exit_code))
    return bytes(log.buf)


def _write_filler(log, nested):
    """A record sized so that 1..6 bytes of its block remain after it."""
    for n in range(0, 40000):
        rec = history_record({"_filler": "x" * n}, nested)
        left = log.space_left()
        if left < WANDB_HEADER:
            break
        rest = left - WANDB_HEADER - len(rec)
        if 1 <= rest <= 6:
            log.write(rec)
            return
    raise RuntimeError("no filler size leaves 1..6 bytes")


def write_wandb(path, run_name, rows, **kw):
    """Writes a run-<id>.wandb log (see wandb_bytes); creates its directory."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(wandb_bytes(run_name, rows, **kw))


def wandb_chunk_offsets(data):
    """(offset, length, type) of every chunk of a .wandb log's bytes."""
    out, pos = [], WANDB_HEADER
    while pos + WANDB_HEADER <= len(data):
        left = WANDB_BLOCK - pos % WANDB_BLOCK
        if left < WANDB_HEADER:
            pos += left
            continue
        _, n, kind = struct.unpack_from("<IHB", data, pos)
        out.append((pos, n, kind))
        pos += WANDB_HEADER + n
    return out

# ---------------------------------------------------------------- test data

LOSS = "train/loss"
DIFF = "train/train_rollout_logprob_abs_diff"
KL = "train/kl"
T0 = 1700000000.0


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _flip(data, offset):
    b = bytearray(data)
    b[offset] ^= 0x01
    return bytes(b)


def make_test_data(out):
    """tests/data/trackers/binary: the files tests/test_tracker_binary.cpp reads."""
    report = {}
    # A logdir of 2 runs. "sync run 1": one file, every scalar style of torch,
    # a NaN, a skipped step, non-scalars that are skipped.
    sync = [
        (T0 + 0, 0, DIFF, 0.5, "simple"), (T0 + 0, 0, LOSS, 1.5, "float_val"),
        (T0 + 0, 0, "weights", 0.25, "histogram"), (T0 + 0, 0, "samples", 0, "image"),
        (T0 + 0, 0, "notes", "hello", "text"), (T0 + 0, 0, "logits", 1.0, "tensor_vector"),
        (T0 + 1, 1, DIFF, 0.25, "simple"), (T0 + 1, 1, LOSS, 1.25, "float_val"),
        (T0 + 2, 2, DIFF, math.nan, "simple"),
        (T0 + 3, 3, DIFF, 0.125, "simple"), (T0 + 3, 3, LOSS, 0.75, "double_val"),
    ]
    sync_bytes = tfevents_bytes(sync)
    sync_file = "tb/sync run 1/events.out.tfevents.1700000000.host.101.0"
    _write(os.path.join(out, sync_file), sync_bytes)
    # "async/run-2": crashed at step 2 and restarted; the second file repeats
    # step 2 (later wall time: its value wins) and step 1 of train/kl with an
    # EARLIER wall time (the first file's value stays).
    first = [
        (T0 + 0, 0, DIFF, 0.5, "content_float"), (T0 + 0, 0, KL, 0.1, "double_val"),
        (T0 + 1, 1, DIFF, 0.75, "content_float"), (T0 + 1, 1, KL, 0.2, "double_val"),
        (T0 + 2, 2, DIFF, 1.0, "content_float"), (T0 + 2, 2, KL, 0.3, "double_val"),
    ]
    second = [
        (T0 + 100, 2, DIFF, 2.0, "content_double"), (T0 + 100, 2, KL, 0.5, "float_val_unpacked"),
        (T0 - 1, 1, KL, 9.0, "float_val_unpacked"),
        (T0 + 101, 3, DIFF, 2.5, "content_double"), (T0 + 101, 3, KL, 0.625, "float_val_unpacked"),
    ]
    _write(os.path.join(out, "tb/async/run-2/events.out.tfevents.1700000000.host.202.0"), tfevents_bytes(first))
    _write(os.path.join(out, "tb/async/run-2/events.out.tfevents.1700000100.host.202.0"), tfevents_bytes(second))
    # Corrupt copies of the sync file (outside the logdir).
    offs = record_offsets(sync_bytes)
    cut = offs[-1] + 20
    _write(os.path.join(out, "tb_corrupt/events.out.tfevents.truncated"), sync_bytes[:cut])
    _write(os.path.join(out, "tb_corrupt/events.out.tfevents.bad_length_crc"), _flip(sync_bytes, offs[3] + 9))
    (n3,) = struct.unpack_from("<Q", sync_bytes, offs[3])
    _write(os.path.join(out, "tb_corrupt/events.out.tfevents.bad_data_crc"), _flip(sync_bytes, offs[3] + 12 + n3 + 1))
    _write(os.path.join(out, "tb_corrupt/events.out.tfevents.bad_payload"), _flip_payload(sync_bytes, offs[3]))
    report["tb"] = {"truncated_record": offs[-1], "file_size": cut, "bad_crc_record": offs[3],
                    "bad_payload_field": offs[3] + 12 + n3}

    # W&B offline runs: legacy keys (run 1) and wandb-core nested keys (run 2).
    rows1 = []
    for s in range(0, 160):
        if s == 5:
            continue  # a skipped update: no row
        row = {"_step": s, "_runtime": 1.5 * s, "_timestamp": T0 + s, DIFF: 0.001 * s, LOSS: 2.0 - 0.001 * s}
        if s == 7:
            row[DIFF] = math.nan
        if s == 8:
            row[LOSS] = math.inf
        if s == 9:
            row["samples"] = {"_type": "histogram", "values": [1, 2]}
            row["note"] = "text"
            row["flag"] = True
        if s == 10:
            row[("eval", "acc")] = 0.5
        if s == 150:
            row["big"] = "y" * 66000  # one record over three chunks (FIRST, MIDDLE, LAST)
        rows1.append(row)
    w1 = wandb_bytes("sync run 1", rows1, run_id="abc123", group="sync", pad_before=150)
    d1 = os.path.join(out, "wandb/offline-run-20260101_120000-abc123/run-abc123.wandb")
    _write(d1, w1)
    rows2 = [{"_step": s, "_runtime": float(s), DIFF: 0.25 * s, KL: -0.5 * s} for s in range(0, 3)]
    w2 = wandb_bytes("async run 2", rows2, run_id="def456", group="async", nested=True, exit_code=None)
    _write(os.path.join(out, "wandb/offline-run-20260101_130000-def456/run-def456.wandb"), w2)
    latest = os.path.join(out, "wandb/latest-run")  # wandb's link to the newest run: not a third run
    if os.path.lexists(latest):
        os.remove(latest)
    os.symlink("offline-run-20260101_130000-def456", latest)
    chunks = wandb_chunk_offsets(w2)
    last = chunks[-1]
    _write(os.path.join(out, "wandb_corrupt/truncated.wandb"), w2[:last[0] + WANDB_HEADER + last[1] // 2])
    _write(os.path.join(out, "wandb_corrupt/bad_crc.wandb"), _flip(w2, chunks[2][0] + WANDB_HEADER + 3))
    _write(os.path.join(out, "wandb_corrupt/bad_header.wandb"), _flip(w2, 4))
    report["wandb"] = {"truncated_chunk": last[0], "truncated_size": last[0] + WANDB_HEADER + last[1] // 2,
                       "bad_crc_chunk": chunks[2][0], "run1_chunk_types": sorted({c[2] for c in wandb_chunk_offsets(w1)})}
    return report


def _flip_payload(data, record_offset):
    """A record whose data is a malformed Event (a length past the end), with
    both CRCs recomputed: the framing is valid, the protobuf is not."""
    (n,) = struct.unpack_from("<Q", data, record_offset)
    bad = data[record_offset + 12:record_offset + 12 + n] + b"\x2a\x7f"  # + field 5 (summary) of length 127
    return data[:record_offset] + tfrecord(bad) + data[record_offset + 16 + n:]


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data", "trackers", "binary")
    print(json.dumps(make_test_data(outdir), indent=1))


def write_mlflow_file_run(rd, name, names, rows, t0):
    """One run of an MLflow file store: meta.yaml, the runName tag, and a
    metric file per name ("<ms timestamp> <value> <step>" lines, steps 1..n,
    a row every 10 s from t0)."""
    import os
    os.makedirs(f"{rd}/tags", exist_ok=True)
    with open(f"{rd}/meta.yaml", "w") as f:
        f.write(f"run_name: {name}\n")
    with open(f"{rd}/tags/mlflow.runName", "w") as f:
        f.write(name)
    for k, key in enumerate(names):
        os.makedirs(os.path.dirname(f"{rd}/metrics/{key}"), exist_ok=True)
        with open(f"{rd}/metrics/{key}", "w") as f:
            f.writelines(f"{int((t0 + 10 * s) * 1000)} {row[k]!r} {s + 1}\n" for s, row in enumerate(rows))


# The tables and keys of MLflow's SQLAlchemy store (mlflow/mlflow
# mlflow/store/tracking/dbmodels/models.py: SqlMetric's primary key
# (key, timestamp, step, run_uuid, value, is_nan), SqlLatestMetric's
# (key, run_uuid)), without the columns logratio does not read.
MLFLOW_SQLITE_SCHEMA = """CREATE TABLE runs (run_uuid TEXT PRIMARY KEY, name TEXT, lifecycle_stage TEXT);
      CREATE TABLE tags (key TEXT, value TEXT, run_uuid TEXT, PRIMARY KEY (key, run_uuid));
      CREATE TABLE metrics (key TEXT, value FLOAT, timestamp BIGINT, run_uuid TEXT, step BIGINT, is_nan BOOLEAN,
                            PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
      CREATE INDEX index_metrics_run_uuid ON metrics (run_uuid);
      CREATE TABLE latest_metrics (key TEXT, value FLOAT, timestamp BIGINT, step BIGINT, is_nan BOOLEAN,
                                   run_uuid TEXT, PRIMARY KEY (key, run_uuid));"""
