#!/usr/bin/python3
"""The expected (run, step, metric, value) table of each real tracker file in
tests/data/real/ (SOURCES.md says where each came from), decoded here without
logratio's readers: the W&B log's LevelDB-log records and protobuf wire
format, TensorBoard's TFRecord framing and Event protobuf, and the HF
Trainer's trainer_state.json are decoded by hand from their public
definitions (cited per decoder), so that `logratio runs --points` is checked
against an independent reading (tests/cli/check_points.py).

Usage: make_expected.py [--check]   (writes, or checks, every expected.tsv)

What each tracker shows, and so what the table holds:
  W&B      each history row's numeric items by _step; keys starting with '_'
           are W&B's own (_runtime, _timestamp, _step) and are not metrics;
           the run's name is the RunRecord's display_name, else its run id.
  TensorBoard  every scalar (simple_value, or a tensor summary of the
           "scalars" plugin) by event step; a step logged twice keeps the
           later wall time, as TensorBoard's scalar chart shows the latest.
  MLflow   every metric file's (or SQLite metrics row's) points of the live
           runs (deleted ones hidden, as MLflow hides them), a (key, step)
           twice: the latest; runs of one store sharing a name get their id.
  Trainer  every numeric log_history value but 'step' (booleans 1/0) at its
           'step', from the state recording the largest global_step.
"""
import json
import math
import os
import struct
import sys
import zlib  # noqa: F401  (W&B's record CRC is zlib's crc32; framing only is checked here)

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "..", "data", "real")


# --- protobuf wire format (protobuf.dev/programming-guides/encoding) -------
def varint(b, i):
    shift = out = 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        if c < 0x80:
            return out, i
        shift += 7


def fields(b):
    """(field number, wire type, value) of a message: ints for varint and
    fixed types (fixed64/32 as raw bytes), bytes for length-delimited."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# --- W&B offline log -------------------------------------------------------
# wandb/sdk/internal/datastore.py @0552ec8a: a 7-byte header (":W&B", 0xBEE1
# little-endian, version 0), then LevelDB-log blocks of 32 KiB: each chunk is
# crc32 (4), length (2, LE), type (1: full, 2: first, 3: middle, 4: last) and
# data; fewer than 7 bytes left in a block are padding.
# wandb/proto/wandb_internal.proto @00243053: Record.history = 2
# (HistoryRecord: item = 1 (HistoryItem: key = 1, nested_key = 2,
# value_json = 16), step = 2 (HistoryStep: num = 1)); Record.run = 17
# (RunRecord: run_id = 1, display_name = 8).
def wandb_records(data):
    assert data[:4] == b":W&B" and struct.unpack("<H", data[4:6])[0] == 0xBEE1 and data[6] == 0
    pos, parts = 7, []
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        n, kind = struct.unpack("<H", data[pos + 4:pos + 6])[0], data[pos + 6]
        if kind == 0 and n == 0:  # zero padding to the block's end
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + n]
        if pos + 7 + n > len(data):
            return  # a cut-off last record
        pos += 7 + n
        if kind == 1:
            yield chunk
        elif kind == 2:
            parts = [chunk]
        elif kind == 3:
            parts.append(chunk)
        elif kind == 4:
            parts.append(chunk)
            yield b"".join(parts)


def json_number(text):
    """A value_json as a number, or None (strings, booleans, objects...)."""
    t = text.strip()
    if t in ("NaN", "Infinity", "-Infinity"):
        return float(t.replace("Infinity", "inf"))
    try:
        v = json.loads(t)
    except ValueError:
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def wandb_points(path):
    with open(path, "rb") as f:
        data = f.read()
    name = run_id = None
    points = {}
    for rec in wandb_records(data):
        for num, wt, v in fields(rec):
            if wt != 2:
                continue
            if num == 17:
                for n2, _, v2 in fields(v):
                    if n2 == 1:
                        run_id = v2.decode()
                    elif n2 == 8 and v2:
                        name = v2.decode()
            elif num == 2:
                step, row = None, {}
                for n2, _, item in fields(v):
                    if n2 == 2:
                        for n3, _, s in fields(item):
                            if n3 == 1 and step is None:
                                step = signed64(s)
                    if n2 != 1:
                        continue
                    key, nested, value = "", [], None
                    for n3, _, x in fields(item):
                        if n3 == 1:
                            key = x.decode()
                        elif n3 == 2:
                            nested.append(x.decode())
                        elif n3 == 16:
                            value = x.decode()
                    key = ".".join(nested) if nested else key
                    if key == "_step":
                        step = int(value)
                    elif key and not key.startswith("_") and value is not None:
                        n = json_number(value)
                        if n is not None:
                            row[key] = n
                for k, x in row.items():
                    old = points.get((step, k))
                    assert old is None or old == x or (math.isnan(old) and math.isnan(x)), (path, step, k)
                    points[(step, k)] = x
    run = name or run_id
    return [(run, s, k, x) for (s, k), x in points.items()]


# --- TensorBoard event files -----------------------------------------------
# tensorflow/tensorboard @70b76c92 tensorboard/summary/writer/record_writer.py:
# uint64 length, uint32 masked crc of it, data, uint32 masked crc of data.
# compat/proto/event.proto: Event wall_time = 1 (double), step = 2, summary = 5;
# summary.proto: Summary.value = 1 (Value: tag = 1, simple_value = 2 (float),
# metadata = 9 (plugin_data = 1: plugin_name = 1), tensor = 8);
# tensor.proto: dtype = 1, float_val = 5, double_val = 6, tensor_content = 4.
def tfrecords(data):
    i = 0
    while i + 12 <= len(data):
        n = struct.unpack("<Q", data[i:i + 8])[0]
        yield data[i + 12:i + 12 + n]
        i += 12 + n + 4


def scalar_of_tensor(t):
    dtype, floats, content = 0, [], b""
    for num, wt, v in fields(t):
        if num == 1:
            dtype = v
        elif num == 5:
            floats += list(struct.unpack("<%df" % (len(v) // 4), v)) if wt == 2 else [struct.unpack("<f", v)[0]]
        elif num == 6:
            floats += list(struct.unpack("<%dd" % (len(v) // 8), v)) if wt == 2 else [struct.unpack("<d", v)[0]]
        elif num == 4:
            content = v
    if floats:
        return floats[0]
    if content:  # DT_FLOAT = 1, DT_DOUBLE = 2
        return struct.unpack("<f", content[:4])[0] if dtype == 1 else struct.unpack("<d", content[:8])[0]
    return None


def tensorboard_points(path, run):
    with open(path, "rb") as f:
        data = f.read()
    latest = {}  # (tag, step) -> (wall_time, order, value)
    order = 0
    for ev in tfrecords(data):
        wall, step, summary = 0.0, 0, None
        for num, wt, v in fields(ev):
            if num == 1:
                wall = struct.unpack("<d", v)[0]
            elif num == 2:
                step = signed64(v)
            elif num == 5:
                summary = v
        if summary is None:
            continue
        for num, _, val in fields(summary):
            if num != 1:
                continue
            tag, value, plugin, tensor = None, None, None, None
            for n2, _, x in fields(val):
                if n2 == 1:
                    tag = x.decode()
                elif n2 == 2:
                    value = struct.unpack("<f", x)[0]
                elif n2 == 8:
                    tensor = x
                elif n2 == 9:
                    for n3, _, pd in fields(x):
                        if n3 == 1:
                            for n4, _, pn in fields(pd):
                                if n4 == 1:
                                    plugin = pn.decode()
            if value is None and tensor is not None and plugin == "scalars":
                value = scalar_of_tensor(tensor)
            if value is None:
                continue
            order += 1
            old = latest.get((tag, step))
            if old is None or (wall, order) >= old[:2]:
                latest[(tag, step)] = (wall, order, value)
    return [(run, s, k, v[2]) for (k, s), v in latest.items()]


# --- HF Trainer trainer_state.json -------------------------------------------
# huggingface/transformers trainer.py Trainer.log appends {**logs, "step":
# global_step} to state.log_history; trainer_callback.py TrainerState.
def trainer_points(run_dir, run):
    states = []
    for d, _, files in os.walk(run_dir):
        if "trainer_state.json" in files:
            p = os.path.join(d, "trainer_state.json")
            base = os.path.basename(d)
            n = int(base.split("-")[1]) if base.startswith("checkpoint-") else -1
            with open(p) as f:
                s = json.load(f)
            states.append(((s.get("global_step", -1), n), s))
    state = max(states, key=lambda e: e[0])[1]
    out = {}
    for entry in state["log_history"]:
        for k, v in entry.items():
            if k == "step" or isinstance(v, (str, list, dict)) or v is None:
                continue
            out[(entry["step"], k)] = float(v)
    return [(run, s, k, v) for (s, k), v in out.items()]


# --- MLflow file store ---------------------------------------------------------
# mlflow/mlflow mlflow/store/tracking/file_store.py: <experiment>/<run>/meta.yaml
# (lifecycle_stage: deleted runs are hidden), metrics/<key> (key slashes are
# subdirectories) with lines "<timestamp ms> <value> <step>", tags/mlflow.runName
# (else meta.yaml's run_name, else the run id). A (key, step) logged twice: the
# latest by (timestamp, value), as SqlAlchemyStore._update_latest_metrics_if_necessary
# orders metrics (mlflow/mlflow @b1669059 mlflow/store/tracking/sqlalchemy_store.py).
def meta_field(path, field):
    with open(path) as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip().strip("'\"")
    return ""


def mlflow_points(mlruns):
    out = []
    for exp in sorted(os.listdir(mlruns)):
        ed = os.path.join(mlruns, exp)
        if exp.startswith(".") or not os.path.isdir(ed):
            continue
        for run_id in sorted(os.listdir(ed)):
            rd = os.path.join(ed, run_id)
            md = os.path.join(rd, "metrics")
            if not os.path.isdir(md) or meta_field(os.path.join(rd, "meta.yaml"), "lifecycle_stage") == "deleted":
                continue
            tag = os.path.join(rd, "tags", "mlflow.runName")
            name = open(tag).read().strip() if os.path.exists(tag) else (
                meta_field(os.path.join(rd, "meta.yaml"), "run_name") or run_id)
            for d, _, files in os.walk(md):
                for fn in files:
                    key = os.path.relpath(os.path.join(d, fn), md).replace(os.sep, "/")
                    best = {}
                    for line in open(os.path.join(d, fn)):
                        if not line.strip():
                            continue
                        ts, v, st = (line.split() + ["0"])[:3]
                        cand = (int(ts), float(v))
                        if int(st) not in best or cand > best[int(st)]:
                            best[int(st)] = cand
                    out += [(name, st, key, c[1]) for st, c in best.items()]
    return out


# --- MLflow SQLite store -------------------------------------------------------
# mlflow/mlflow mlflow/store/tracking/dbmodels/models.py: runs (run_uuid, name,
# lifecycle_stage), tags (mlflow.runName), metrics (key, value, timestamp,
# step, is_nan: NaN is stored as 0 with is_nan = 1). Deleted runs are hidden;
# a run's name is its mlflow.runName tag, else runs.name, else the run id; a
# (key, step) twice: the latest by (timestamp, value), as the file store.
# Runs of one store sharing a name are told apart as "name (<first 8
# characters of the run id>)" (docs/trackers.md, "one id rule").
def mlflow_sqlite_points(db):
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    names = {}
    for run_id, name, stage in con.execute("SELECT run_uuid, name, lifecycle_stage FROM runs"):
        if stage != "deleted":
            names[run_id] = name or run_id
    for run_id, value in con.execute("SELECT run_uuid, value FROM tags WHERE key = 'mlflow.runName'"):
        if run_id in names and value:
            names[run_id] = value
    best = {}
    for run_id, key, v, ts, step, is_nan in con.execute(
            "SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics"):
        if run_id not in names:
            continue
        cand = (ts, float("nan") if is_nan else v)
        k = (run_id, key, step)
        if k not in best or cand > best[k]:
            best[k] = cand
    read = {r for r, _, _ in best}
    shared = {}
    for r in read:
        shared.setdefault(names[r], []).append(r)
    label = {r: names[r] if len(shared[names[r]]) == 1 else "%s (%s)" % (names[r], r[:8]) for r in read}
    return [(label[r], step, key, c[1]) for (r, key, step), c in best.items()]


# --- the real files ----------------------------------------------------------
WANDB_RUN = "wandb/conceptppo/wandb/run-20230723_093735-mxaehod4"
TB_FILE = "events.out.tfevents.1690076260.autodl-container-71644691e8-32af8c29.1260.0"
# (name of tests/data/real/expected/<name>.tsv, the input `logratio runs --points` is given, its decoder)
DATASETS = [
    ("wandb_conceptppo", "wandb/conceptppo",
     lambda: wandb_points(os.path.join(REAL, WANDB_RUN, "run-mxaehod4.wandb"))),
    ("tensorboard_conceptppo", WANDB_RUN + "/files",
     lambda: tensorboard_points(os.path.join(REAL, WANDB_RUN, "files", TB_FILE), "files")),
    ("mlflow_packt", "mlflow/packt-hyperparameter-tuning",
     lambda: mlflow_points(os.path.join(REAL, "mlflow/packt-hyperparameter-tuning/mlruns"))),
    ("mlflow_sqlite_crypto", "mlflow_sqlite/crypto-trading-backtesting/mlflow.db",
     lambda: mlflow_sqlite_points(os.path.join(REAL, "mlflow_sqlite/crypto-trading-backtesting/mlflow.db"))),
    ("trainer_bart_samsum", "trl/bart-large-cnn-samsum",
     lambda: trainer_points(os.path.join(REAL, "trl/bart-large-cnn-samsum"), "bart-large-cnn-samsum")),
]


def number_text(v):
    """The shortest text that reads back as v (repr), 'nan', 'inf', '-inf'."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    # fixed notation for decimal exponents -4..16, as logratio's number_text (io/number_text.hpp)
    if v == int(v) and abs(v) < 1e17:
        return str(int(v))
    return repr(v)


def table(rows):
    rows = sorted(rows, key=lambda r: (r[0], r[2], r[1]))
    return "run\tstep\tmetric\tvalue\n" + "".join(
        "%s\t%d\t%s\t%s\n" % (r, s, k, number_text(v)) for r, s, k, v in rows)


def main():
    check = "--check" in sys.argv[1:]
    bad = 0
    os.makedirs(os.path.join(REAL, "expected"), exist_ok=True)
    for name, _, fn in DATASETS:
        text = table(fn())
        out = os.path.join(REAL, "expected", name + ".tsv")
        if check:
            with open(out) as f:
                if f.read() != text:
                    print("differs from the committed table: " + out)
                    bad += 1
        else:
            with open(out, "w") as f:
                f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
