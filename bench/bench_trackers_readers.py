#!/usr/bin/python3
"""Readers at disk speed (issue 41): each tracker layout written at 100 MB+
(bench_trackers.py --readers runs this), read by `logratio runs
--list-attributes --json` (every metric read, no statistics) and, in the same
run, by a Python reader of the same format; MB/s and records/s per CPU second
(user + sys: the honest figure on a shared machine), and the ratio.

The Python readers do what the trackers' own readers do with the bytes, in
the fastest standard way (C-implemented modules where they exist):
  TensorBoard  TFRecord framing with struct, Event decoded by python3-protobuf
               (Debian's C++ implementation) from event/summary/tensor .proto
               fields compiled by protoc at bench time (no CRC check: TensorBoard's
               own stub reader checks it in pure Python, far slower);
  W&B offline  the datastore.py block/chunk scan, zlib.crc32 per chunk (as
               wandb's reader checks it), Record decoded by python3-protobuf,
               each HistoryItem.value_json through json.loads;
  JSON Lines   json.loads per line (W&B history, verl file logger);
  TRL          json.load of trainer_state.json;
  CSV          the csv module, float() of every numeric cell (W&B history
               export, long table);
  MLflow files each metrics/<key> line split on spaces, int/float/int (as
               mlflow/store/tracking/file_store.py's metric lines);
  MLflow db    sqlite3: every row of the metrics table fetched.
A record is the layout's unit: a CSV row, a JSON line / log_history entry,
an event, a W&B record, an MLflow metric line / row.

For the layouts whose readers take the key filter (METRIC_TASK: W&B CSV and
JSON Lines, verl JSONL, TRL) a second line times the user's task, `logratio
runs --metric M --json` (M, the step keys and the run statistics), beside a
Python peer reading that metric only (json.loads then the key; csv.reader
then float() of the step and M columns).
"""
import csv
import json
import os
import random
import resource
import sqlite3
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "trackers"))
import binary_writers as bw  # noqa: E402

T0 = 1764000000.0
METRIC0 = "train/train_rollout_logprob_abs_diff"
VERL_METRIC0 = "training/rollout_probs_diff_mean"  # verl's mismatch metric (to_runs.cpp's mismatch_metrics)


def metric_names(m):
    return [METRIC0] + [f"train/metric_{k:02d}" for k in range(1, m)]


def run_rows(runs, steps, m, seed=11):
    """(name, group, rows) per run: values like optimizer statistics (full
    double precision, several magnitudes), as repr writes them."""
    rng = random.Random(seed)
    for r in range(runs):
        rows = [[rng.random() * 10.0 ** rng.randint(-6, 2) for _ in range(m)] for _ in range(steps)]
        yield f"run{r:03d}", "sync" if r % 2 == 0 else "async", rows


# ---------------------------------------------------------------- writers: (paths, records, extra args)

def write_wandb_csv(d, runs, steps, m):
    names, paths = metric_names(m), []
    for name, group, rows in run_rows(runs, steps, m):
        p = f"{d}/{group}/{name}.csv"
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(",_step,_runtime,_timestamp,train/step," + ",".join(names) + "\n")
            f.writelines(f"{s},{s},{10.0 * s!r},{T0 + 10 * s!r},{s + 1}," + ",".join(map(repr, row)) + "\n"
                         for s, row in enumerate(rows))
        paths.append(p)
    return paths, runs * steps, []


def write_long_csv(d, runs, steps, m):
    os.makedirs(d, exist_ok=True)
    p = f"{d}/long.csv"
    with open(p, "w") as f:
        f.write("run,group,update," + ",".join(metric_names(m)) + "\n")
        for name, group, rows in run_rows(runs, steps, m):
            f.writelines(f"{name},{group},{s + 1}," + ",".join(map(repr, row)) + "\n" for s, row in enumerate(rows))
    return [p], runs * steps, ["--metric", METRIC0]


def write_wandb_jsonl(d, runs, steps, m):
    names, paths = metric_names(m), []
    for name, group, rows in run_rows(runs, steps, m):
        p = f"{d}/{group}/{name}.jsonl"
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            for s, row in enumerate(rows):
                rec = {"_step": s, "_runtime": 10.0 * s, "_timestamp": T0 + 10 * s, "train/step": s + 1}
                rec.update(zip(names, row))
                f.write(json.dumps(rec) + "\n")
        paths.append(p)
    return paths, runs * steps, []


def write_verl_jsonl(d, runs, steps, m):
    # verl's FileLogger (volcengine/verl verl/utils/tracking.py @1dda039b): {"step": N, "data": {...}}
    names, paths = [VERL_METRIC0] + metric_names(m)[1:], []
    for name, group, rows in run_rows(runs, steps, m):
        p = f"{d}/{group}/{name}.jsonl"
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.writelines(json.dumps({"step": s + 1, "data": dict(zip(names, row))}) + "\n" for s, row in enumerate(rows))
        paths.append(p)
    return paths, runs * steps, []


def write_trl(d, runs, steps, m):
    names, paths = metric_names(m), []
    for name, group, rows in run_rows(runs, steps, m):
        p = f"{d}/{group}/{name}/checkpoint-{steps}/trainer_state.json"
        os.makedirs(os.path.dirname(p), exist_ok=True)
        hist = [dict(zip(names, row), step=s + 1) for s, row in enumerate(rows)]
        with open(p, "w") as f:
            json.dump({"global_step": steps, "log_history": hist}, f, indent=2)  # TrainerState.save_to_json
        paths.append(p)
    return [d], runs * steps, []


def write_mlflow_files(d, runs, steps, m):
    names = metric_names(m)
    for name, group, rows in run_rows(runs, steps, m):
        bw.write_mlflow_file_run(f"{d}/1/{name}", name, names, rows, T0)
    return [d], runs * steps * m, []


def write_mlflow_db(d, runs, steps, m):
    # the tables and keys of MLflow's SQLAlchemy store, as bench_trackers.py's write_sqlite
    os.makedirs(d, exist_ok=True)
    p = f"{d}/mlflow.db"
    if os.path.exists(p):
        os.remove(p)
    db = sqlite3.connect(p)
    db.executescript(bw.MLFLOW_SQLITE_SCHEMA)
    names = metric_names(m)
    for name, group, rows in run_rows(runs, steps, m):
        db.execute("INSERT INTO runs VALUES (?, ?, 'active')", (name, name))
        db.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)",
                       ((k, row[i], int((T0 + 10 * s) * 1000), name, s + 1)
                        for s, row in enumerate(rows) for i, k in enumerate(names)))
        last = steps - 1
        db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, 0, ?)",
                       ((k, rows[last][i], int((T0 + 10 * last) * 1000), last + 1, name) for i, k in enumerate(names)))
    db.commit()
    db.close()
    return [p], runs * steps * m, []


def write_tensorboard(d, runs, steps, m):
    # one event per scalar, as torch's SummaryWriter.add_scalar writes them (simple_value)
    names = metric_names(m)
    for name, group, rows in run_rows(runs, steps, m):
        ev = [(T0 + 10 * s, s + 1, key, row[k], "simple") for s, row in enumerate(rows) for k, key in enumerate(names)]
        bw.write_tfevents(f"{d}/{name}/events.out.tfevents.{int(T0)}.host.1.0", ev, T0)
    return [d], runs * steps * m + runs, []


def write_wandb_offline(d, runs, steps, m):
    names = metric_names(m)
    for name, group, rows in run_rows(runs, steps, m):
        wrows = [dict(zip(names, row), _step=s, **{"train/step": s + 1}) for s, row in enumerate(rows)]
        bw.write_wandb(f"{d}/offline-run-x-{name}/run-{name}.wandb", name, wrows, run_id=name, group=group)
    return [d], runs * (steps + 2), []


# ---------------------------------------------------------------- Python readers: records read

# The fields the readers use, numbered as tensorflow/tensorboard @70b76c92
# tensorboard/compat/proto/{event,summary,tensor}.proto and wandb/wandb
# wandb/proto/wandb_internal.proto @00243053 (the rest stays unknown fields,
# which protobuf keeps and skips).
PROTO = """syntax = "proto3";
package lrbench;
message TensorProto { int32 dtype = 1; bytes tensor_content = 4; repeated float float_val = 5;
                      repeated double double_val = 6; }
message PluginData { string plugin_name = 1; bytes content = 2; }
message SummaryMetadata { PluginData plugin_data = 1; }
message SummaryValue { string tag = 1; oneof value { float simple_value = 2; TensorProto tensor = 8; }
                       SummaryMetadata metadata = 9; }
message Summary { repeated SummaryValue value = 1; }
message Event { double wall_time = 1; int64 step = 2; oneof what { string file_version = 3; Summary summary = 5; } }
message HistoryItem { string key = 1; repeated string nested_key = 2; string value_json = 16; }
message HistoryStep { int64 num = 1; }
message HistoryRecord { repeated HistoryItem item = 1; HistoryStep step = 2; }
message RunRecord { string run_id = 1; string project = 3; string run_group = 6; string display_name = 8; }
message Record { int64 num = 1; oneof record_type { HistoryRecord history = 2; RunRecord run = 17; } }
"""


def compiled_protos(work):
    """The schema above compiled by protoc (protobuf-compiler) and imported."""
    d = os.path.join(work, "proto")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "lrbench.proto"), "w") as f:
        f.write(PROTO)
    subprocess.run(["protoc", f"--proto_path={d}", f"--python_out={d}", "lrbench.proto"], check=True)
    sys.path.insert(0, d)
    import lrbench_pb2  # noqa: E402
    return lrbench_pb2


def file_bytes(path):
    """The bytes of every file under path, one file at a time."""
    for d, _, fs in os.walk(path):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                yield fh.read()


def py_tensorboard(paths, pb):
    n = 0
    ev = pb.Event()
    for data in file_bytes(paths[0]):
        pos, end = 0, len(data)
        while pos < end:
            (length,) = struct.unpack_from("<Q", data, pos)
            ev.ParseFromString(data[pos + 12:pos + 12 + length])
            pos += 16 + length
            for v in ev.summary.value:
                x = v.simple_value if v.HasField("simple_value") else v.tensor.float_val[0]
            n += 1
    return n


def wandb_records(data):
    """The records of a .wandb log (datastore.py: 7-byte header, 32 KiB blocks)."""
    pos, end, parts = 7, len(data), []
    while pos + 7 <= end:
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        crc, length, kind = struct.unpack_from("<IHB", data, pos)
        chunk = data[pos + 7:pos + 7 + length]
        if zlib.crc32(chunk, zlib.crc32(bytes([kind]))) != crc:
            raise ValueError("bad chunk checksum")
        pos += 7 + length
        if kind == 1:
            yield chunk
        elif kind == 4:
            parts.append(chunk)
            yield b"".join(parts)
            parts = []
        else:
            parts.append(chunk)


def py_wandb(paths, pb):
    n = 0
    rec = pb.Record()
    for data in file_bytes(paths[0]):
        for r in wandb_records(data):
            rec.ParseFromString(r)
            if rec.HasField("history"):
                row = {it.key: json.loads(it.value_json) for it in rec.history.item}
            n += 1
    return n


def py_jsonl(paths, pb):
    n = 0
    for p in paths:
        with open(p) as f:
            for line in f:
                json.loads(line)
                n += 1
    return n


def py_trl(paths, pb):
    n = 0
    for d, _, fs in os.walk(paths[0]):
        for f in fs:
            with open(os.path.join(d, f)) as fh:
                n += len(json.load(fh)["log_history"])
    return n


def py_csv(paths, pb, first_numeric=1):
    n = 0
    for p in paths:
        with open(p, newline="") as f:
            r = csv.reader(f)
            next(r)
            for row in r:
                [float(c) if c else None for c in row[first_numeric:]]
                n += 1
    return n


def py_long_csv(paths, pb):
    return py_csv(paths, pb, first_numeric=2)


# ---------------------------------------------------------------- the metric task's Python peers: one metric

def py_jsonl_metric(paths, pb, metric=METRIC0):
    """json.loads per line, then the step and the metric (W&B: top-level keys)."""
    n = 0
    for p in paths:
        with open(p) as f:
            for line in f:
                rec = json.loads(line)
                rec["_step"], float(rec[metric])
                n += 1
    return n


def py_verl_metric(paths, pb, metric=VERL_METRIC0):
    n = 0
    for p in paths:
        with open(p) as f:
            for line in f:
                rec = json.loads(line)
                rec["step"], float(rec["data"][metric])
                n += 1
    return n


def py_trl_metric(paths, pb, metric=METRIC0):
    n = 0
    for d, _, fs in os.walk(paths[0]):
        for f in fs:
            with open(os.path.join(d, f)) as fh:
                for e in json.load(fh)["log_history"]:
                    e["step"], float(e[metric])
                    n += 1
    return n


def py_csv_metric(paths, pb, metric=METRIC0):
    """csv.reader, then float() of the step and the metric columns only."""
    n = 0
    for p in paths:
        with open(p, newline="") as f:
            r = csv.reader(f)
            header = next(r)
            s, m = header.index("_step"), header.index(metric)
            for row in r:
                float(row[s]), float(row[m])
                n += 1
    return n


def py_mlflow_files(paths, pb):
    n = 0
    for d, _, fs in os.walk(paths[0]):
        if os.path.basename(d) != "metrics" and "/metrics/" not in d + "/":
            continue
        for f in fs:
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    ts, value, step = line.split(" ")
                    int(ts), float(value), int(step)
                    n += 1
    return n


def py_mlflow_db(paths, pb):
    db = sqlite3.connect(paths[0])
    rows = db.execute("SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics").fetchall()
    db.close()
    return len(rows)


# ---------------------------------------------------------------- the benchmark

# label, directory, writer, steps per run (8 runs x 50 metrics: each layout
# 100 MB+), Python reader
LAYOUTS = [
    ("W&B history CSV", "wandb_csv", write_wandb_csv, 12500, py_csv),
    ("long CSV table", "long_csv", write_long_csv, 12500, py_long_csv),
    ("W&B JSON Lines", "wandb_jsonl", write_wandb_jsonl, 6000, py_jsonl),
    ("verl JSONL", "verl_jsonl", write_verl_jsonl, 6000, py_jsonl),
    ("TRL trainer_state.json", "trl", write_trl, 5500, py_trl),
    ("MLflow file store", "mlruns", write_mlflow_files, 7000, py_mlflow_files),
    ("MLflow SQLite", "mlflow_db", write_mlflow_db, 2500, py_mlflow_db),
    ("TensorBoard logdir", "tensorboard", write_tensorboard, 5000, py_tensorboard),
    ("W&B offline .wandb", "wandb_offline", write_wandb_offline, 6500, py_wandb),
]


PY_READER = {
    "wandb_csv": "csv module + float()", "long_csv": "csv module + float()", "wandb_jsonl": "json.loads per line",
    "verl_jsonl": "json.loads per line", "trl": "json.load", "mlruns": "split + int/float per line",
    "mlflow_db": "sqlite3 fetchall", "tensorboard": "python3-protobuf Event", "wandb_offline": "python3-protobuf Record + json.loads",
}


# The metric task (`logratio runs --metric M --json`: the user's task, one
# metric with its step keys read, the others skipped) beside the all-metrics
# task, for the layouts whose readers take the key filter: layout -> (M,
# Python peer reading that metric only).
METRIC_TASK = {
    "wandb_csv": (METRIC0, py_csv_metric), "wandb_jsonl": (METRIC0, py_jsonl_metric),
    "verl_jsonl": (VERL_METRIC0, py_verl_metric), "trl": (METRIC0, py_trl_metric),
}
PY_METRIC_READER = {"wandb_csv": "csv.reader + float() of 2 columns", "wandb_jsonl": "json.loads + 1 key",
                    "verl_jsonl": "json.loads + 1 key", "trl": "json.load + 1 key per entry"}


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def files_under(path):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs) if os.path.isdir(path) else [path]


def logratio_cpu(exe, paths, extra, work, metric=None):
    """CPU seconds (user + sys) of `logratio runs --list-attributes --json`
    (every metric), or with `metric`, of `logratio runs --metric M --json`."""
    err_path = os.path.join(work, "err.txt")
    task = ["--metric", metric, "--json"] if metric else ["--list-attributes", "--json"]
    with open(err_path, "w") as err:
        p = subprocess.Popen([exe, "runs"] + task + paths + extra,
                             stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"logratio {paths[0]}: exit status {status}: {open(err_path).read()[-2000:]}")
    return ru.ru_utime + ru.ru_stime


def python_cpu(reader, paths, pb):
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    n = reader(paths, pb)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, n


def prepared(work, keep, scale, name, writer, steps):
    d = os.path.join(work, name)
    stamp = os.path.join(work, name + ".done")
    if keep and os.path.exists(stamp):
        with open(stamp) as f:
            return json.load(f)
    t = time.time()
    paths, records, extra = writer(d, 8, max(2, int(steps * scale)), 50)
    if len(paths) == 1 and os.path.isdir(paths[0]) and name in ("wandb_csv", "wandb_jsonl", "verl_jsonl"):
        paths = files_under(paths[0])
    info = {"paths": paths, "records": records, "extra": extra, "bytes": sum(du(p) for p in paths)}
    with open(stamp, "w") as f:
        json.dump(info, f)
    print(f"# {name}: wrote {info['bytes'] / 1e6:.0f} MB in {time.time() - t:.0f} s", file=sys.stderr)
    return info


def timed_row(label, task, py_label, mb, records, lr_cpu, py, base_cpu):
    """The console line and the Markdown row of one (layout, task): its
    "layout" and "task" columns apart, as bench/report_more.py reads them."""
    py_cpu, n = py
    if n != records:
        sys.exit(f"{label}: the Python reader read {n} records, {records} were written")
    base = f" {mb / base_cpu:13.0f} {n / base_cpu:14.3g}" if base_cpu else ""
    print(f"{label + ', ' + task:40s} {mb:6.0f} {mb / lr_cpu:7.0f} {n / lr_cpu:11.3g} {mb / py_cpu:11.1f} {n / py_cpu:12.3g} "
          f"{py_cpu / lr_cpu:6.1f}{base}")
    sys.stdout.flush()
    return (f"| {label} | {task} | {mb:.0f} | {mb / lr_cpu:.0f} | {n / lr_cpu:.3g} | {py_label} | {mb / py_cpu:.1f} | "
            f"{py_cpu / lr_cpu:.1f} |" + (f" {mb / base_cpu:.0f} | {n / base_cpu:.3g} |" if base_cpu else ""))


def run(exe, work, repeat, keep, scale, only, baseline=None, markdown=False):
    """One line per layout and task (every metric; for METRIC_TASK's layouts
    also one metric); `baseline`: another logratio binary (e.g. main's)
    timed in the same run, its MB/s and records/s in the last columns."""
    os.makedirs(work, exist_ok=True)
    pb = compiled_protos(work)
    rows = []
    print(f"{'layout':40s} {'MB':>6s} {'MB/s':>7s} {'records/s':>11s} {'Python MB/s':>11s} {'Python rec/s':>12s} "
          f"{'ratio':>6s}" + (f" {'baseline MB/s':>13s} {'baseline rec/s':>14s}" if baseline else ""))
    for label, name, writer, steps, reader in LAYOUTS:
        if only and name not in only:
            continue
        info = prepared(work, keep, scale, name, writer, steps)
        paths, extra, mb = info["paths"], info["extra"], info["bytes"] / 1e6
        for p in paths:  # into the page cache: both readers read from memory
            with open(p, "rb") if os.path.isfile(p) else open(os.devnull) as f:
                while f.read(1 << 24):
                    pass
        tasks = [("every metric", None, reader, PY_READER[name])]
        if name in METRIC_TASK:
            metric, py_metric = METRIC_TASK[name]
            tasks.append(("one metric", metric, py_metric, PY_METRIC_READER[name]))
        for task, metric, py_reader, py_label in tasks:
            lr = min(logratio_cpu(exe, paths, extra, work, metric) for _ in range(repeat))
            py = min(python_cpu(py_reader, paths, pb) for _ in range(max(1, repeat // 3)))
            base_cpu = min(logratio_cpu(baseline, paths, extra, work, metric) for _ in range(repeat)) if baseline else 0
            rows.append(timed_row(label, task, py_label, mb, info["records"], lr, py, base_cpu))
    if markdown:
        print("\n| layout | task | MB | MB/s | records/s | Python reader | Python MB/s | ratio |" +
              (" baseline MB/s | baseline records/s |" if baseline else ""))
        print("|---|---|---|---|---|---|---|---|" + ("---|---|" if baseline else ""))
        print("\n".join(rows))
