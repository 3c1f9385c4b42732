#!/usr/bin/python3
"""Reading speed of every tracker layout: writes RUNS runs x STEPS steps x
METRICS metrics in each layout (the writers of tests/trackers), then times
`logratio runs --json` on each (wall seconds, best of REPEAT, peak RSS).

  bench/bench_trackers.py LOGRATIO [--runs 100] [--steps 2000] [--metrics 50] [--repeat 3] [--work DIR]

Every layout has one file or directory per run, so the time is linear in
RUNS (the README states 1,000 runs as 10x the measured 100 when run at 100).
Prints one line per layout: layout, MB, wall seconds, CPU seconds (user +
sys of the tool: the honest figure on a shared, loaded machine), reading
CPU seconds (minus the first line: the same statistics on a long table of
the one metric), MB read per reading second, max RSS.

  bench/bench_trackers.py LOGRATIO --readers [--repeat 3] [--baseline OTHER_LOGRATIO] [--only LAYOUT...]

is the reading benchmark instead (bench_trackers_readers.py): every layout
at 100 MB+, read by `logratio runs --list-attributes --json` beside a Python
reader of the same format, MB/s and records/s per CPU second, the ratio.
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "trackers"))
import binary_writers as bw  # noqa: E402

T0 = 1764000000.0


def values(runs, steps, metrics, seed=7):
    rng = random.Random(seed)
    names = ["train/train_rollout_logprob_abs_diff"] + [f"train/metric_{k:02d}" for k in range(1, metrics)]
    for r in range(runs):
        group = "sync" if r % 2 == 0 else "async"
        rows = [[round(rng.random() * 2**20) / 2**20 for _ in names] for _ in range(steps)]
        yield f"{group} run {r}", group, names, rows


def write_layouts(work, runs, steps, metrics):
    for name, group, names, rows in values(runs, steps, metrics):
        # W&B history table (pandas to_csv of scan_history: one event per step)
        d = f"{work}/wandb_history/{group}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/{name}.csv", "w") as f:
            f.write(",_step,_runtime,_timestamp,train/step," + ",".join(names) + "\n")
            for s, row in enumerate(rows):
                f.write(f"{s},{s},{10.0 * s},{T0 + 10 * s},{s + 1}," + ",".join(map(repr, row)) + "\n")
        # W&B JSON Lines
        d = f"{work}/wandb_jsonl/{group}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/{name}.jsonl", "w") as f:
            for s, row in enumerate(rows):
                rec = {"_step": s, "_runtime": 10.0 * s, "_timestamp": T0 + 10 * s, "train/step": s + 1}
                rec.update(zip(names, row))
                f.write(json.dumps(rec) + "\n")
        # MLflow file store
        bw.write_mlflow_file_run(f"{work}/mlruns/1/{name.replace(' ', '_')}", name, names, rows, T0)
        # TRL trainer_state.json
        d = f"{work}/trl/{group}/{name}/checkpoint-{steps}"
        os.makedirs(d, exist_ok=True)
        hist = [dict(zip(names, row), step=s + 1) for s, row in enumerate(rows)]
        with open(f"{d}/trainer_state.json", "w") as f:
            json.dump({"global_step": steps, "log_history": hist}, f, indent=2)
        # TensorBoard: one event per scalar (torch add_scalar, simple_value)
        ev = [(T0 + 10 * s, s + 1, m, row[k], "simple") for s, row in enumerate(rows) for k, m in enumerate(names)]
        bw.write_tfevents(f"{work}/tensorboard/{name}/events.out.tfevents.{int(T0)}.host.1.0", ev, T0)
        # W&B offline log: one history record per step
        wrows = [dict(zip(names, row), _step=s, **{"train/step": s + 1}) for s, row in enumerate(rows)]
        rid = name.replace(" ", "")
        bw.write_wandb(f"{work}/wandb_offline/offline-run-x-{rid}/run-{rid}.wandb", name, wrows, run_id=rid, group=group)


def write_long_table(work, runs, steps, metrics):
    """The chosen metric only, as a long table: `runs` on it costs the same
    statistics (Theil-Sen, Kendall are O(steps^2) per run) with almost no
    reading; its time is subtracted to give each layout's reading time."""
    with open(f"{work}/long.csv", "w") as f:
        f.write("run,group,update,train/train_rollout_logprob_abs_diff\n")
        for name, group, names, rows in values(runs, steps, metrics):
            f.write("".join(f"{name},{group},{s + 1},{row[0]!r}\n" for s, row in enumerate(rows)))


def write_sqlite(work, runs, steps, metrics):
    # MLflow's SQLAlchemy store's tables and keys (binary_writers.MLFLOW_SQLITE_SCHEMA)
    db = sqlite3.connect(f"{work}/mlflow.db")
    db.executescript(bw.MLFLOW_SQLITE_SCHEMA)
    for name, group, names, rows in values(runs, steps, metrics):
        uuid = name.replace(" ", "")
        db.execute("INSERT INTO runs VALUES (?, ?, 'active')", (uuid, name))
        db.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, 0)",
                       ((m, row[k], int((T0 + 10 * s) * 1000), uuid, s + 1)
                        for s, row in enumerate(rows) for k, m in enumerate(names)))
        last = len(rows) - 1
        db.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, 0, ?)",
                       ((m, rows[last][k], int((T0 + 10 * last) * 1000), last + 1, uuid) for k, m in enumerate(names)))
    db.commit()
    db.close()


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logratio")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--metrics", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/logratio_bench_trackers")
    ap.add_argument("--keep", action="store_true", help="reuse the files of an earlier run")
    ap.add_argument("--write-only", action="store_true", help="write the files, time nothing")
    ap.add_argument("--readers", action="store_true",
                    help="the reading benchmark instead (bench_trackers_readers.py: every layout at 100 MB+, "
                         "beside a Python reader); --work defaults to /tmp/logratio_bench_readers there")
    ap.add_argument("--scale", type=float, default=1.0, help="--readers: steps per run x SCALE (1: 100 MB+ each)")
    ap.add_argument("--only", nargs="*", default=[], help="--readers: these layouts only (directory names)")
    ap.add_argument("--baseline", help="--readers: another logratio binary timed in the same run (e.g. main's)")
    ap.add_argument("--markdown", action="store_true", help="--readers: also the table as Markdown (bench/READERS.md)")
    a = ap.parse_args()
    if a.readers:
        import bench_trackers_readers as br
        work = a.work if a.work != ap.get_default("work") else "/tmp/logratio_bench_readers"
        br.run(a.logratio, work, a.repeat, a.keep, a.scale, a.only, a.baseline, a.markdown)
        return
    if not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)
        t = time.time()
        write_layouts(a.work, a.runs, a.steps, a.metrics)
        write_sqlite(a.work, a.runs, a.steps, a.metrics)
        print(f"# wrote {a.runs} runs x {a.steps} steps x {a.metrics} metrics per layout in {time.time() - t:.0f} s",
              file=sys.stderr)
    if a.write_only:
        return
    gp = ["--group-pattern", "^(a?sync) run"]
    if not os.path.exists(f"{a.work}/long.csv"):
        write_long_table(a.work, a.runs, a.steps, a.metrics)
    layouts = [
        ("statistics only (long table)", ["long.csv"], ["--metric", "train/train_rollout_logprob_abs_diff"]),
        ("W&B history tables (CSV)", ["wandb_history"], []),
        ("W&B JSON Lines", ["wandb_jsonl"], []),
        ("MLflow file store", ["mlruns"], gp),
        ("MLflow SQLite", ["mlflow.db"], gp),
        ("TRL trainer_state.json", ["trl"], []),
        ("TensorBoard logdir", ["tensorboard"], gp),
        ("W&B offline .wandb", ["wandb_offline"], []),
    ]
    print(f"{'layout':30s} {'MB':>7s} {'wall s':>7s} {'CPU s':>7s} {'read CPU s':>10s} {'MB/s read':>9s} "
          f"{'max RSS MB':>10s}")
    base = None
    for label, paths, extra in layouts:
        args = []
        for p in paths:
            full = os.path.join(a.work, p)
            if os.path.isdir(full) and p in ("wandb_history", "wandb_jsonl"):
                args += sorted(os.path.join(d, f) for d, _, fs in os.walk(full) for f in fs)
            else:
                args.append(full)
        size = sum(du(os.path.join(a.work, p)) for p in paths)
        best, cpu, rss = None, None, 0
        for _ in range(a.repeat):
            t = time.perf_counter()
            with open(os.path.join(a.work, "err.txt"), "w") as err:
                p = subprocess.Popen([a.logratio, "runs", "--json"] + args + extra, stdout=subprocess.DEVNULL, stderr=err)
                _, status, ru = os.wait4(p.pid, 0)
            dt = time.perf_counter() - t
            if status != 0:
                sys.exit(f"{label}: exit status {status}: {open(os.path.join(a.work, 'err.txt')).read()[-2000:]}")
            best = dt if best is None else min(best, dt)
            cpu = ru.ru_utime + ru.ru_stime if cpu is None else min(cpu, ru.ru_utime + ru.ru_stime)
            rss = max(rss, ru.ru_maxrss / 1024)
        if base is None:
            base = cpu
        read = max(cpu - base, 1e-3)
        print(f"{label:30s} {size / 1e6:7.1f} {best:7.2f} {cpu:7.2f} {read:10.2f} {size / 1e6 / read:9.0f} {rss:10.0f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
