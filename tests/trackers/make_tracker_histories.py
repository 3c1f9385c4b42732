#!/usr/bin/python3
"""Writes the same 4 runs in every tracker layout logratio reads
(tests/data/trackers/, and with --sample the bundled sample's histories).

The runs: 2 sync, 2 async; "async run 1" crashed after update 6; "sync run 2"
logged NaN at update 7; "async run 2" skipped update 9 (nothing logged).
Run names have spaces, metric names slashes. Each run has attributes
(config(): runtime_commit and actor.lr differ across runs, mode is the
group, actor.lr is a nested key) in every layout that keeps a run's config;
dirs/ holds the directory layouts (see directory_layouts). Values are multiples of 2^-20
below 1/16, exact in float32 (TensorBoard simple_value), so every layout
holds the very same numbers and `logratio runs --json` must give identical
statistics. TensorBoard and W&B offline bytes come from
tests/trackers/binary_writers.py (the binary readers' writer) when present.

Layouts follow the public sources cited in tools/logratio/trackers/*.hpp and
/work/shared/references/tracker-formats.md. Usage:
  make_tracker_histories.py OUT_DIR            # test data (+ bad inputs)
  make_tracker_histories.py --sample PANELS.csv OUT_DIR
      # the bundled sample's runs (examples/data/runs, as `logratio panel
      # --each examples/data/runs --csv PANELS.csv` tabulates them) as a
      # TensorBoard logdir and a W&B multi-run history (examples/data/trackers)
"""
import csv
import io
import json
import math
import os
import random
import shutil
import sqlite3
import sys

METRIC = "train/train_rollout_logprob_abs_diff"  # slime's mean |l_T - l_E|
GRAD = "train/grad_norm"
STEP = "train/step"
T0 = 1764000000.0

RUNS = [  # name, group, updates, NaN at, skipped, slope
    ("async run 1", "async", 6, None, None, 0.0012),
    ("async run 2", "async", 12, None, 9, 0.0010),
    ("sync run 1", "sync", 12, None, None, 0.0002),
    ("sync run 2", "sync", 12, 7, None, 0.0001),
]


# Each run's attributes (its config: what `--by KEY` stratifies on), the
# same in every layout that has them; actor.lr is a nested config key.
COMMITS = {"async run 1": "4f1c2ab", "async run 2": "9e07d3c", "sync run 1": "b52a811", "sync run 2": "c3d94f0"}


def config(name, group):
    """The run's config as W&B / a trainer would hold it (nested dicts)."""
    return {"runtime_commit": COMMITS[name], "mode": group,
            "actor": {"lr": 2e-06 if name == "sync run 2" else 1e-06}, "batch_size": 64}


def flat_config(name, group):
    """config() flattened with '.', values as text (Python's str of a float
    is the shortest round trip, as the readers write numbers)."""
    c = config(name, group)
    return {"runtime_commit": c["runtime_commit"], "mode": c["mode"], "actor.lr": repr(c["actor"]["lr"]),
            "batch_size": str(c["batch_size"])}


def yaml_scalar(v):
    """A scalar as PyYAML writes it (wandb's config.yaml): floats with a '.'
    before the exponent (1.0e-06), strings plain."""
    if isinstance(v, float):
        r = repr(v)
        return r.replace("e", ".0e") if "e" in r and "." not in r else r
    return str(v).lower() if isinstance(v, bool) else str(v)


def config_yaml(name, group):
    """files/config.yaml as wandb writes it (wandb_version, _wandb, per key desc + value)."""
    out = ["wandb_version: 1", "", "_wandb:", "  desc: null", "  value:", "    cli_version: 0.19.1",
           "    python_version: 3.11.9", "    t:", "      1:", "      - 1", "      - 55"]
    for k, v in config(name, group).items():
        out += [f"{k}:", "  desc: null", "  value:"]
        if isinstance(v, dict):
            out += [f"    {kk}: {yaml_scalar(vv)}" for kk, vv in v.items()]
        else:
            out[-1] += " " + yaml_scalar(v)
    return "\n".join(out) + "\n"


def q(x):
    """x rounded to a multiple of 2^-20: exact in float32 and in repr()."""
    return round(x * 2**20) / 2**20


def runs(n_updates=None, seed=16):
    """[(name, group, [(step, value or nan, grad_norm)])]"""
    rng = random.Random(seed)
    out = []
    for name, group, n, nan_at, skip, slope in RUNS:
        n = n if n_updates is None else (n * n_updates) // 12
        pts = []
        for s in range(1, n + 1):
            v = q(0.012 + slope * s + rng.uniform(-0.0008, 0.0008))
            g = q(0.5 + rng.uniform(0, 0.25))
            if s == skip:
                continue
            pts.append((s, math.nan if s == nan_at else v, g))
        out.append((name, group, pts))
    return out


def write(path, text, mode="w", newline=None):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, mode, encoding=None if "b" in mode else "utf-8", newline=newline) as f:
        f.write(text)


def fmt(v):
    return "" if isinstance(v, float) and math.isnan(v) else repr(v)


def long_table(rs, path, bom_crlf=False):
    """The long table; runtime_commit and mode are text columns constant per
    run, attr:actor.lr and attr:batch_size numbers named as attributes."""
    lines = ["run,group,update," + METRIC + ",runtime_commit,mode,attr:actor.lr,attr:batch_size"]
    for name, group, pts in rs:
        a = flat_config(name, group)
        lines += [f"{name},{group},{s},{fmt(v)},{a['runtime_commit']},{a['mode']},{a['actor.lr']},{a['batch_size']}"
                  for s, v, g in pts]
    eol = "\r\n" if bom_crlf else "\n"
    write(path, ("\ufeff" if bom_crlf else "") + eol.join(lines) + eol, newline="")


def wandb_events(name, pts):
    """W&B scan_history records of one run: per update a train event
    (train/step, the metric, grad norm) and a rollout event (rollout/step,
    a reward) without train/step; `_step` counts events."""
    ev, k = [], 0
    for s, v, g in pts:
        t = T0 + 10 * s
        ev.append({"_step": k, "_runtime": 10.0 * s, "_timestamp": t, STEP: s, METRIC: v, GRAD: g})
        ev.append({"_step": k + 1, "_runtime": 10.0 * s + 5, "_timestamp": t + 5, "rollout/step": s,
                   "rollout/raw_reward": q(0.25 + 0.01 * s)})
        k += 2
    return ev


def pandas_csv(records, columns, index=True):
    """DataFrame.to_csv: index column with an empty header, NaN as ''."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(([""] if index else []) + columns)
    for i, r in enumerate(records):
        row = [fmt(r[c]) if isinstance(r.get(c), float) else ("" if r.get(c) is None else r[c]) for c in columns]
        w.writerow(([i] if index else []) + row)
    return buf.getvalue()


def wandb_tables(rs, root):
    cols = ["_step", "_runtime", "_timestamp", STEP, METRIC, GRAD, "rollout/step", "rollout/raw_reward"]
    multi = []
    for name, group, pts in rs:
        ev = wandb_events(name, pts)
        write(f"{root}/wandb_history/{group}/{name}.csv", pandas_csv(ev, cols))
        multi += [dict(r, run_id=name) for r in ev]
    # Runs.histories(format="pandas"): one frame, columns sorted, run_id column.
    write(f"{root}/wandb_histories.csv", pandas_csv(multi, sorted(cols + ["run_id"])))


def py_json(x):
    return json.dumps(x)  # allow_nan=True: NaN, Infinity as Python writes them


def wandb_json(rs, root):
    for name, group, pts in rs:
        ev = wandb_events(name, pts)
        ev[0]["media/samples"] = {"_type": "table-file", "path": "media/table/samples_0.json"}
        write(f"{root}/wandb_jsonl/{group}/{name}.jsonl", "".join(py_json(e) + "\n" for e in ev))
        write(f"{root}/wandb_json/{name}.json", "[\n" + ",\n".join(py_json(e) for e in ev) + "\n]\n")


def verl_file_logger(rs, root):
    for name, group, pts in rs:
        lines = [py_json({"step": s, "data": {METRIC: v, GRAD: g, "training/global_step": s}}) for s, v, g in pts]
        write(f"{root}/verl/{group}/{name}.jsonl", "\n".join(lines) + "\n")


def chart_export(rs, path, bucketed=False):
    header = ["Step"]
    for name, _, _ in rs:
        header += [f"{name} - {METRIC}", f"{name} - {METRIC}__MIN", f"{name} - {METRIC}__MAX"]
    steps = sorted({s for _, _, pts in rs for s, _, _ in pts})
    rows = []
    for s in steps:
        row = [str(s)]
        for _, _, pts in rs:
            d = {st: v for st, v, _ in pts}
            if s not in d:
                row += ["", "", ""]
            else:
                v = d[s]
                cell = "NaN" if math.isnan(v) else repr(v)
                hi = "NaN" if math.isnan(v) else repr(q(v + 2**-12) if bucketed and s % 3 == 0 else v)
                row += [cell, cell, hi]
        rows.append(row)
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    write(path, buf.getvalue())


def mlflow_files(rs, root):
    for i, (name, group, pts) in enumerate(rs):
        run_id = f"{i:02d}c0ffee" + "0" * 24
        d = f"{root}/mlruns/1/{run_id}"
        write(f"{d}/meta.yaml", f"run_id: {run_id}\nrun_name: {name}\nexperiment_id: '1'\nstatus: 3\n")
        write(f"{d}/tags/mlflow.runName", name)
        write(f"{d}/tags/lab/queue", "a100")  # a key with '/': a subdirectory
        for k, v in flat_config(name, group).items():  # mlflow.log_params: str(value), no newline
            write(f"{d}/params/{k}", v)
        for key, col in ((METRIC, 1), (GRAD, 2)):
            lines = [f"{int((T0 + 10 * p[0]) * 1000)} {p[col]!r} {p[0]}" for p in pts]
            write(f"{d}/metrics/{key}", "\n".join(lines) + "\n")
    write(f"{root}/mlruns/1/meta.yaml", "experiment_id: '1'\nname: mismatch\nlifecycle_stage: active\n")


def mlflow_sqlite_schema(db):
    db.executescript("""
      CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256));
      CREATE TABLE runs (run_uuid VARCHAR(32) PRIMARY KEY, name VARCHAR(250), experiment_id INTEGER,
                         status VARCHAR(9), start_time BIGINT, lifecycle_stage VARCHAR(20));
      CREATE TABLE tags (key VARCHAR(250), value VARCHAR(5000), run_uuid VARCHAR(32));
      CREATE TABLE params (key VARCHAR(250), value VARCHAR(8000), run_uuid VARCHAR(32));
      CREATE TABLE metrics (key VARCHAR(250), value FLOAT NOT NULL, timestamp BIGINT, run_uuid VARCHAR(32),
                            step BIGINT NOT NULL DEFAULT '0', is_nan BOOLEAN NOT NULL DEFAULT '0');""")
    db.execute("INSERT INTO experiments VALUES (1, 'mismatch')")


def mlflow_sqlite(rs, path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    mlflow_sqlite_schema(db)
    for i, (name, group, pts) in enumerate(rs):
        uuid = f"{i:02d}feed" + "0" * 26
        db.execute("INSERT INTO runs VALUES (?, ?, 1, 'FINISHED', ?, 'active')", (uuid, name, int(T0 * 1000)))
        db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, uuid))
        db.execute("INSERT INTO tags VALUES ('lab/queue', 'a100', ?)", (uuid,))
        for k, v in flat_config(name, group).items():
            db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, v, uuid))
        for s, v, g in pts:
            t = int((T0 + 10 * s) * 1000)
            nan = math.isnan(v)
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", (METRIC, 0.0 if nan else v, t, uuid, s, int(nan)))
            db.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)", (GRAD, g, t, uuid, s))
    db.commit()
    db.execute("VACUUM")
    db.close()


def trl_states(rs, root):
    """<group>/<run>/checkpoint-N/trainer_state.json; an earlier checkpoint
    holds the first half of the history (the latest one wins)."""
    for name, group, pts in rs:
        hist = [{"epoch": s / 12, METRIC: v, GRAD: g, "learning_rate": 1e-6, "step": s} for s, v, g in pts]
        last = pts[-1][0]
        for ck, h in ((last // 2, [e for e in hist if e["step"] <= last // 2]), (last, hist)):
            state = {"best_metric": None, "epoch": ck / 12, "eval_steps": 500, "global_step": ck,
                     "is_hyper_param_search": False, "log_history": h, "logging_steps": 1, "max_steps": 12,
                     "num_train_epochs": 1, "save_steps": 6, "train_batch_size": 64, "trial_name": None}
            write(f"{root}/trl/{group}/{name}/checkpoint-{ck}/trainer_state.json", json.dumps(state, indent=2) + "\n")


def binary_layouts(rs, root):
    """TensorBoard logdir (one directory per run, as torch's SummaryWriter
    writes: add_scalar(tag, value, global_step) -> simple_value; the grad
    norm as a new-style float_val tensor) and W&B offline runs
    (offline-run-*/run-<id>.wandb, the run's group in its RunRecord; the
    crashed run has no exit record), through binary_writers.py."""
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, "binary_writers.py")):
        print("binary_writers.py not present: no TensorBoard / .wandb files", file=sys.stderr)
        return
    sys.path.insert(0, here)
    import binary_writers as bw  # noqa: E402  (the binary readers' writer)
    shutil.rmtree(f"{root}/tensorboard", ignore_errors=True)
    shutil.rmtree(f"{root}/wandb_offline", ignore_errors=True)
    for i, (name, group, pts) in enumerate(rs):
        hp = {k: (float(v) if k in ("actor.lr", "batch_size") else v) for k, v in flat_config(name, group).items()}
        ev = [(T0, 0, "_hparams_/session_start_info", hp, "hparams")]
        for s, v, g in pts:
            ev.append((T0 + 10 * s, s, METRIC, v, "simple"))
            ev.append((T0 + 10 * s, s, GRAD, g, "float_val"))
        bw.write_tfevents(f"{root}/tensorboard/{name}/events.out.tfevents.{int(T0)}.host.{100 + i}.0", ev, T0)
        run_id = f"r{i}x{group}"
        crashed = len(pts) < 8
        rows = wandb_events(name, pts)
        d = f"{root}/wandb_offline/offline-run-20261203_000000-{run_id}"
        # runs 0 and 1 carry their config in the log (wandb.init's in the
        # RunRecord, then wandb.config.update: run 1 changes mode, the last
        # value wins, and wraps a value as {"value": X} as config.yaml does);
        # runs 2 and 3 have none: files/config.yaml holds it
        c = config(name, group)
        kw = {}
        if i == 0:
            kw = {"config": {"runtime_commit": c["runtime_commit"], "mode": "draft", "actor": c["actor"]},
                  "config_updates": [{"mode": c["mode"], "batch_size": c["batch_size"],
                                      "_wandb": {"cli_version": "0.19.1"}}]}
        elif i == 1:
            kw = {"config": {"_wandb": {"value": {"cli_version": "0.19.1"}}},
                  "config_updates": [{"runtime_commit": c["runtime_commit"], "mode": "sync"},
                                     {"mode": {"desc": None, "value": c["mode"]}, "actor": c["actor"],
                                      "batch_size": c["batch_size"]}]}
        else:
            write(f"{d}/files/config.yaml", config_yaml(name, group))
        bw.write_wandb(f"{d}/run-{run_id}.wandb", name, rows,
                       run_id=run_id, group=group, exit_code=None if crashed else 0, **kw)


def directory_layouts(rs, root):
    """dirs/: directories read as one input. Two verl files both named run
    (dup_names/a, dup_names/b); a verl file beside a W&B CSV export (mixed);
    W&B run files/ directories with a config.yaml beside a JSON Lines and a
    CSV history (wandb_files, wandb_files_csv); a project directory holding
    wandb/ whose run directory also has the TensorBoard copy sync_tensorboard
    makes (project_wandb); a project directory holding mlruns/ (project_mlflow)."""
    d = f"{root}/dirs"
    shutil.rmtree(d, ignore_errors=True)
    for sub, v in (("a", 0.125), ("b", 0.25)):
        write(f"{d}/dup_names/{sub}/run.jsonl", "".join(py_json({"step": s, "data": {METRIC: v * s}}) + "\n" for s in (1, 2)))
    write(f"{d}/mixed/x.jsonl", py_json({"step": 1, "data": {METRIC: 0.5}}) + "\n")
    write(f"{d}/mixed/sub/y.csv", "_step,m\n0,0.5\n")
    name, group, pts = rs[2]  # sync run 1
    ev = wandb_events(name, pts)
    cols = ["_step", "_runtime", "_timestamp", STEP, METRIC, GRAD, "rollout/step", "rollout/raw_reward"]
    write(f"{d}/wandb_files/files/config.yaml", config_yaml(name, group))
    write(f"{d}/wandb_files/files/history.jsonl", "".join(py_json(e) + "\n" for e in ev))
    write(f"{d}/wandb_files_csv/files/config.yaml", config_yaml(name, group))
    write(f"{d}/wandb_files_csv/files/history.csv", pandas_csv(ev, cols))
    shutil.copytree(f"{root}/mlruns", f"{d}/project_mlflow/mlruns")
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, "binary_writers.py")):
        return
    sys.path.insert(0, here)
    import binary_writers as bw  # noqa: E402
    run = f"{d}/project_wandb/wandb/run-20261203_000000-r2xsync"
    bw.write_wandb(f"{run}/run-r2xsync.wandb", name, ev, run_id="r2xsync", group=group, config=config(name, group))
    tb = [(T0 + 10 * s, s, METRIC, v, "simple") for s, v, g in pts]
    bw.write_tfevents(f"{run}/files/events.out.tfevents.{int(T0)}.host.102.0", tb, T0)


def bad_inputs(root):
    b = f"{root}/bad"
    write(f"{b}/syntax.jsonl", '{"_step": 0, "train/step": 1, "m": 0.5}\n{"_step": 1, "train/step": 2, "m": 0.25}\n'
          '{"_step": 2, "train/step": 3, "m": 0.5,}\n')
    write(f"{b}/chart_cut.csv", '"Step","a - m","a - m__MIN","a - m__MAX"\n"1","0.5","0.5","0.5"\n"2","0.25","0.25"\n')
    write(f"{b}/chart_cut_header.csv", '"Step","a - m","a - m__MIN","b - m__MAX"\n"1","0.5","0.5","0.5"\n')
    write(f"{b}/dup_steps.csv", "_step,run_id,train/step,m\n0,a,1,0.5\n1,a,2,0.25\n0,b,1,0.5\n1,a,2,0.75\n")
    db = f"{b}/not_mlflow.db"
    if os.path.exists(db):
        os.remove(db)
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE notes (id INTEGER, text TEXT)")
    c.commit()
    c.close()
    write(f"{b}/unknown.csv", "epoch,loss\n1,0.5\n")
    write(f"{b}/only_step.csv", "_step,m\n0,0.5\n1,0.25\n")


def edge_cases(root):
    """Real-file shapes the reference runs do not have (edge/): MLflow's SQL
    store keeping +-inf as +-DBL_MAX, deleted runs and a relaunch under the
    same name; verl's orjson nulls; a W&B run that rewound its training
    step; TRL runs sharing a name across groups and a renamed
    trainer_state.json; a long JSON Lines table with NaN; a JSON Lines
    history whose last line was cut off mid-write."""
    e = f"{root}/edge"
    db = f"{e}/mlflow_edge.db"
    os.makedirs(e, exist_ok=True)
    if os.path.exists(db):
        os.remove(db)
    c = sqlite3.connect(db)
    mlflow_sqlite_schema(c)
    big = sys.float_info.max
    runs_ = (("aaaa1111" + "0" * 24, "inf-run", "active", [0.125, big, -big, 0.375]),
             ("bbbb2222" + "0" * 24, "relaunch", "active", [0.5]),          # crashed after one point
             ("cccc3333" + "0" * 24, "relaunch", "active", [0.25, 0.75]),   # relaunched under the same name
             ("dddd4444" + "0" * 24, "inf-run", "deleted", [9.0]),          # deleted: not read
             ("eeee5555" + "0" * 24, "inf-run", "active", []))              # crashed before logging
    for uuid, name, stage, vals in runs_:
        c.execute("INSERT INTO runs VALUES (?, ?, 1, 'FINISHED', ?, ?)", (uuid, name, int(T0 * 1000), stage))
        c.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (name, uuid))
        for s, v in enumerate(vals, start=1):
            c.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)", (METRIC, v, int((T0 + s) * 1000), uuid, s))
    c.commit()
    c.execute("VACUUM")
    c.close()
    # the file store: a relaunch under one name, a deleted run, an empty run
    for run_id, name, stage, vals in (("1111aaaa" + "0" * 24, "relaunch", "active", [0.5]),
                                      ("2222bbbb" + "0" * 24, "relaunch", "active", [0.25, 0.75]),
                                      ("3333cccc" + "0" * 24, "gone", "deleted", [9.0]),
                                      ("4444dddd" + "0" * 24, "relaunch", "active", [])):
        d = f"{e}/mlruns/1/{run_id}"
        write(f"{d}/meta.yaml", f"run_id: {run_id}\nrun_name: {name}\nexperiment_id: '1'\nlifecycle_stage: {stage}\n")
        os.makedirs(f"{d}/metrics", exist_ok=True)
        if vals:
            write(f"{d}/metrics/{METRIC}", "".join(f"{int((T0 + s) * 1000)} {v!r} {s}\n" for s, v in enumerate(vals, 1)))
    write(f"{e}/mlruns/1/meta.yaml", "experiment_id: '1'\nname: mismatch\nlifecycle_stage: active\n")
    # verl's file logger writes with orjson: NaN and +-Infinity become null
    write(f"{e}/verl_null.jsonl", "".join(json.dumps({"step": s, "data": {METRIC: v}}) + "\n"
                                           for s, v in ((1, 0.125), (2, None), (3, 0.375))))
    # a resumed W&B run: _step goes on, train/step goes back from 2 to 1
    ev = [{"_step": k, STEP: st, METRIC: v} for k, (st, v) in enumerate(((1, 0.125), (2, 0.25), (1, 0.875), (2, 0.75)))]
    write(f"{e}/wandb_rewind.jsonl", "".join(json.dumps(x) + "\n" for x in ev))
    # TRL: sync/seed0 and async/seed0; a trainer_state.json saved under another name
    for group, v in (("sync", 0.125), ("async", 0.25)):
        state = {"global_step": 2, "log_history": [{METRIC: v, "step": 1}, {METRIC: v * 2, "step": 2}]}
        write(f"{e}/trl/{group}/seed0/checkpoint-2/trainer_state.json", json.dumps(state, indent=2) + "\n")
    state = {"global_step": 1, "log_history": [{METRIC: 0.5, "step": 1}]}
    write(f"{e}/trl_renamed/run1_trainer_state.json", json.dumps(state, indent=2) + "\n")
    # trainer.save_state() at the end of training: output_dir's state goes past its last checkpoint
    hist = [{METRIC: 0.125 * s, "step": s} for s in (1, 2, 3)]
    for where, n in (("run/checkpoint-2", 2), ("run", 3)):
        state = {"epoch": n / 3, "global_step": n, "log_history": hist[:n]}
        write(f"{e}/trl_final/{where}/trainer_state.json", json.dumps(state, indent=2, sort_keys=True) + "\n")
    # a long table in JSON Lines, Python's NaN token in it
    write(f"{e}/long_nan.jsonl", json.dumps({"run": "a", "update": 1, "m": 0.5}) + "\n" +
          json.dumps({"run": "a", "update": 2, "m": math.nan}) + "\n")
    # a W&B history still being written: its last line stops mid-record
    write(f"{e}/wandb_cut.jsonl", json.dumps({"_step": 0, METRIC: 0.125}) + "\n" +
          json.dumps({"_step": 1, METRIC: 0.25}) + "\n" + '{"_step": 2, "' + METRIC + '": 0.3')


def fuzz_seeds(root, fuzz):
    """Seeds of fuzz/corpus/{json_history,chart} from the test files (the
    json_history target reads its first byte as options)."""
    for name, files in (("json_history", ["wandb_jsonl/sync/sync run 2.jsonl", "wandb_json/async run 2.json",
                                          "verl/async/async run 1.jsonl", "bad/syntax.jsonl"]),
                        ("chart", ["chart.csv", "chart_bucketed.csv", "bad/chart_cut_header.csv"])):
        d = f"{fuzz}/corpus/{name}"
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for i, f in enumerate(files):
            with open(f"{root}/{f}", "rb") as src:
                body = src.read()
            if name == "json_history":
                body = bytes([i]) + body
            with open(f"{d}/{os.path.basename(f).replace(' ', '_')}", "wb") as out:
                out.write(body)


def sample_diagnostics(run, i, u):
    """Policy diagnostics of the sample's run `run` (index i) at update u, as
    verl logs them: entropy, PPO clip fraction, gradient norm (exactly 0 at
    one update of async-1: a skipped step) and throughput. Made up for the
    example, deterministic, float32-exact."""
    asy = run.startswith("async")
    grad = 0.0 if (run == "async-1" and u == 7) else q(0.35 + 0.08 * math.cos(1.3 * u + i) + (0.004 * u if asy else 0))
    return {"actor/entropy": q(0.92 - (0.006 if asy else 0.001) * u + 0.01 * math.sin(u + i)),
            "actor/pg_clipfrac": q(0.04 + (0.0015 * u if asy else 0.0002 * u) + 0.003 * math.sin(0.7 * u + i)),
            "actor/grad_norm": grad,
            "perf/throughput": q((2400.0 if asy else 1500.0) + 40 * math.sin(0.5 * u + i))}


def sample_attributes(run, rank):
    """The run's config: the rollout runtime's commit splits each group in
    two (the first half of each group on one commit), and the mode."""
    return {"runtime_commit": "3f9a2c1" if rank < (3 if run.startswith("async") else 2) else "8d04e7b",
            "mode": run.split("-")[0]}


def sample_histories(panels, root):
    """The sample's per-update delta_abs_mean and kl_k3 (SPEC keys) as verl
    would log them, with policy diagnostics (sample_diagnostics) and the run's
    config (sample_attributes, as hparams): TensorBoard add_scalar
    (double_precision) per run directory, verl's file logger (one .jsonl per
    run, the trainer's local log), and Runs.histories() of W&B with verl's
    training/global_step (a validation-style event without it in between)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import binary_writers as bw  # noqa: E402
    with open(panels, newline="") as f:
        rows = list(csv.DictReader(f))
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run"], []).append(r)
    shutil.rmtree(f"{root}/tensorboard", ignore_errors=True)
    shutil.rmtree(f"{root}/verl", ignore_errors=True)
    multi = []
    diag = ["actor/entropy", "actor/grad_norm", "actor/pg_clipfrac", "perf/throughput"]
    cols = ["_runtime", "_step", "_timestamp"] + diag[:2] + ["delta_abs_mean", "kl_k3"] + diag[2:] + \
        ["run_id", "training/global_step", "val/score"]
    for i, (run, rs) in enumerate(sorted(by_run.items())):
        rs.sort(key=lambda r: int(r["update"]))
        rank = int(run.split("-")[1])
        ev = [(T0, 0, "_hparams_/session_start_info", sample_attributes(run, rank), "hparams")]
        k = 0
        local = []  # verl's file logger (VERL_FILE_LOGGER_ROOT/<project>/<experiment>.jsonl): the local log
        for r in rs:
            u = int(r["update"])
            t = T0 + 60 * u
            d = sample_diagnostics(run, i, u)
            local.append(py_json({"step": u, "data": {"delta_abs_mean": float(r["delta_abs_mean"]),
                                                      "kl_k3": float(r["kl_k3"]), **d, "training/global_step": u}}))
            for key in ("delta_abs_mean", "kl_k3"):
                ev.append((t, u, key, float(r[key]), "double_val"))
            for key in diag:
                ev.append((t, u, key, d[key], "double_val"))
            multi.append({"_runtime": 60.0 * u, "_step": k, "_timestamp": t, "delta_abs_mean": float(r["delta_abs_mean"]),
                          "kl_k3": float(r["kl_k3"]), "run_id": run, "training/global_step": u, **d})
            multi.append({"_runtime": 60.0 * u + 30, "_step": k + 1, "_timestamp": t + 30, "run_id": run,
                          "val/score": q(0.5 + 0.01 * u)})
            k += 2
        bw.write_tfevents(f"{root}/tensorboard/{run}/events.out.tfevents.{int(T0)}.sample.{100 + i}.0", ev, T0)
        write(f"{root}/verl/{run}.jsonl", "\n".join(local) + "\n")
    write(f"{root}/wandb_histories.csv", pandas_csv(multi, cols))


def sb3_double_dump(root):
    """Stable-Baselines3's MLflow writer dumps its logger twice at an
    evaluation step: one (key, step) twice, milliseconds apart, values
    differing (edge/sb3_dup/mlruns and edge/sb3_dup.db). MLflow shows the
    latest by (timestamp, value): step 2 keeps 0.2501 (the later), step 3
    0.31 (same timestamp: the larger), step 1 is logged once."""
    e = f"{root}/edge"
    t = int(T0 * 1000)
    rows = [(1, 0.125, t + 1000), (2, 0.25, t + 2000), (2, 0.2501, t + 2003), (3, 0.31, t + 3000), (3, 0.3, t + 3000)]
    run_id = "5b35b3" + "0" * 26
    d = f"{e}/sb3_dup/mlruns/1/{run_id}"
    write(f"{d}/meta.yaml", f"run_id: {run_id}\nrun_name: ppo\nexperiment_id: '1'\nlifecycle_stage: active\n")
    write(f"{d}/metrics/{METRIC}", "".join(f"{ts} {v!r} {st}\n" for st, v, ts in rows))
    write(f"{e}/sb3_dup/mlruns/1/meta.yaml", "experiment_id: '1'\nname: sb3\nlifecycle_stage: active\n")
    db = f"{e}/sb3_dup.db"
    if os.path.exists(db):
        os.remove(db)
    c = sqlite3.connect(db)
    mlflow_sqlite_schema(c)
    c.execute("INSERT INTO runs VALUES (?, 'ppo', 1, 'FINISHED', ?, 'active')", (run_id, t))
    for st, v, ts in rows:
        c.execute("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)", (METRIC, v, ts, run_id, st))
    c.commit()
    c.execute("VACUUM")
    c.close()


def reader_edges(root):
    """Small inputs for the messages of #42 (edge/): 'nan' in a long table's
    update column; a W&B history whose only run logged no value; a long
    table whose OLS slope p-value underflows double (a bound, not 0)."""
    e = f"{root}/edge"
    write(f"{e}/nan_update.csv", "run,group,update,delta_abs_mean\na,g,0,0.1\na,g,nan,0.2\n")
    write(f"{e}/empty_history.jsonl", json.dumps({"_step": 0}) + "\n" + json.dumps({"_step": 1}) + "\n")
    lines = ["run,group,update,delta_abs_mean"]
    for r in ("a", "b"):
        for u in range(400):  # a line with noise 1e-13: t in the thousands, p far below 1e-300
            lines.append(f"{r},g,{u},{0.01 + 1e-4 * u + 1e-13 * ((u * 7) % 5)!r}")
    write(f"{e}/p_underflow.csv", "\n".join(lines) + "\n")


def main(argv):
    if argv[1:2] == ["--sample"]:
        sample_histories(argv[2], argv[3])
        return
    root = argv[-1]
    rs = runs()
    for d in ("wandb_history", "wandb_jsonl", "wandb_json", "verl", "mlruns", "trl", "bad", "edge"):
        shutil.rmtree(f"{root}/{d}", ignore_errors=True)
    long_table(rs, f"{root}/long.csv")
    long_table(rs, f"{root}/long_bom_crlf.csv", bom_crlf=True)
    wandb_tables(rs, root)
    wandb_json(rs, root)
    verl_file_logger(rs, root)
    chart_export(rs, f"{root}/chart.csv")
    chart_export(rs, f"{root}/chart_bucketed.csv", bucketed=True)
    mlflow_files(rs, root)
    mlflow_sqlite(rs, f"{root}/mlflow.db")
    trl_states(rs, root)
    binary_layouts(rs, root)
    bad_inputs(root)
    edge_cases(root)
    sb3_double_dump(root)
    reader_edges(root)
    directory_layouts(rs, root)
    fuzz = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz")
    if os.path.isdir(fuzz):
        fuzz_seeds(root, fuzz)


if __name__ == "__main__":
    main(sys.argv)
