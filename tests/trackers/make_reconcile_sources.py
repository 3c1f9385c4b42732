#!/usr/bin/python3
"""Writes tests/data/trackers/reconcile/: the same runs as a tracker (an
MLflow file store, mlruns/) and as a local log (a W&B multi-run history CSV
with train/step, local_history.csv), with planted disagreements, and
expected.json: what `logratio reconcile mlruns local_history.csv` must find,
computed here from the values written (not by reading the files back).

The runs are make_tracker_histories.py's 4 runs (its writers are reused:
mlflow_files, pandas_csv). The local log differs from the tracker in:
  - 3 values changed in the last digit (one ulp) and 1 by 2^-20 relative;
  - "sync run 2" step 7: NaN in the tracker, a number in the local log;
  - "sync run 1" step 5: the metric only in the tracker (field only in A);
  - "async run 1" step 7: only in the local log (the tracker crashed before);
  - the gradient norm is "actor/grad_norm" in the local log (--map
    train/grad_norm=actor/grad_norm); with the map, one of its values
    differs in the last digit;
  - a run only in the local log; "async run 2" step 12 +inf on both sides;
  - rollout/raw_reward (at rollout/step events) only in the local log.
expected.json has three cases: "exact" (no option), "map" (--map),
"rtol_map" (--map --rtol 1e-9). no_common_step.csv: one of the runs at
other steps (the no-overlapping-field error).
Usage: make_reconcile_sources.py OUT_DIR
       make_reconcile_sources.py --check LOGRATIO DATA_DIR   (the CLI against expected.json)
"""
import json
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tracker_histories as mth  # noqa: E402  (the tracker writers)

METRIC, GRAD, STEP = mth.METRIC, mth.GRAD, mth.STEP
B_GRAD = "actor/grad_norm"
REWARD = "rollout/raw_reward"
RTOL = 1e-9


def ulp_up(v):
    return math.nextafter(v, math.inf)


def ulp_down(v):
    return math.nextafter(v, -math.inf)


def tracker_runs():
    """[(name, group, [(step, metric, grad)])] as the tracker holds them."""
    rs = []
    for name, group, pts in mth.runs():
        if name == "async run 2":
            pts = [(s, math.inf if s == 12 else v, g) for s, v, g in pts]
        rs.append((name, group, pts))
    return rs


def local_runs(tracker):
    """The local log's runs: {name: {step: {metric: value}}} (B's names)."""
    out = {}
    for name, group, pts in tracker:
        steps = {s: {METRIC: v, B_GRAD: g, REWARD: mth.q(0.25 + 0.01 * s)} for s, v, g in pts}
        out[name] = steps
    out["async run 1"][7] = {METRIC: mth.q(0.021), B_GRAD: mth.q(0.625), REWARD: mth.q(0.32)}
    out["sync run 2"][7][METRIC] = mth.q(0.0123)  # NaN in the tracker
    del out["sync run 1"][5][METRIC]
    out["async run 2"][4][METRIC] = ulp_up(out["async run 2"][4][METRIC])
    out["sync run 2"][3][METRIC] = ulp_down(out["sync run 2"][3][METRIC])
    out["sync run 1"][11][METRIC] = ulp_up(out["sync run 1"][11][METRIC])
    out["async run 1"][2][METRIC] *= 1 + 2**-20  # beyond rtol
    out["sync run 1"][10][B_GRAD] = ulp_up(out["sync run 1"][10][B_GRAD])
    out["local only run"] = {s: {METRIC: mth.q(0.01 * s), B_GRAD: 0.5} for s in (1, 2, 3)}
    return out


def history_csv(local, path):
    """W&B Runs.histories(format="pandas"): per training step a train event
    (train/step, the metric, the grad norm) and a rollout event (rollout/step,
    the reward); `_step` counts events."""
    cols = sorted(["_step", "_runtime", "_timestamp", STEP, METRIC, B_GRAD, "rollout/step", REWARD, "run_id"])
    rows = []
    for name, steps in local.items():
        k = 0
        for s in sorted(steps):
            t = mth.T0 + 10 * s
            train = {"_step": k, "_runtime": 10.0 * s, "_timestamp": t, STEP: s, "run_id": name}
            train.update({m: v for m, v in steps[s].items() if m != REWARD})
            rows.append(train)
            if REWARD in steps[s]:
                rows.append({"_step": k + 1, "_runtime": 10.0 * s + 5, "_timestamp": t + 5, "rollout/step": s,
                             REWARD: steps[s][REWARD], "run_id": name})
            k += 2
    mth.write(path, mth.pandas_csv(rows, cols))


def fields_a(tracker):
    return {(n, s, m): v for n, _, pts in tracker for s, v, g in pts for m, v in ((METRIC, v), (GRAD, g))}


def fields_b(local):
    return {(n, s, m): v for n, steps in local.items() for s, ms in steps.items() for m, v in ms.items()}


def same(a, b, rtol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b and math.copysign(1, a) == math.copysign(1, b):
        return True
    if rtol == 0 or math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def jv(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def expected(tracker, local, mapping, rtol):
    """The comparison, written out from the dictionaries (reconcile's rules:
    runs by name, fields by (run, step, metric), bit-equal or rtol)."""
    A, B = fields_a(tracker), fields_b(local)
    common = {n for n, _, _ in A} & {n for n, _, _ in B}
    to_b = lambda m: mapping.get(m, None if m in mapping.values() else m)  # noqa: E731
    inv = {b: a for a, b in mapping.items()}
    to_a = lambda m: inv.get(m, None if m in mapping else m)  # noqa: E731
    differ, only_a, only_b, agree = [], [], [], 0
    by_run_metric_step = lambda kv: (kv[0][0], kv[0][2], kv[0][1])  # noqa: E731
    for (n, s, m), va in sorted(A.items(), key=by_run_metric_step):
        if n not in common:
            continue
        kb = (n, s, to_b(m))
        if kb not in B:
            only_a.append({"run": n, "step": s, "metric": m})
        elif same(va, B[kb], rtol):
            agree += 1
        else:
            d = {"run": n, "step": s, "metric": m, "a": jv(va), "b": jv(B[kb])}
            if kb[2] != m:
                d["metric_b"] = kb[2]
            differ.append(d)
    for (n, s, m), vb in sorted(B.items(), key=by_run_metric_step):
        if n in common and (n, s, to_a(m)) not in A:
            only_b.append({"run": n, "step": s, "metric": m})
    steps_a = {(n, s) for n, s, _ in A if n in common}
    steps_b = {(n, s) for n, s, _ in B if n in common}
    return {"overlapping": agree + len(differ), "agree": agree, "rtol": rtol, "differ": differ,
            "only_a": only_a, "only_b": only_b,
            "steps_only_a": len(steps_a - steps_b), "steps_only_b": len(steps_b - steps_a),
            "runs_only_a": sorted({n for n, _, _ in A} - common), "runs_only_b": sorted({n for n, _, _ in B} - common)}


CASES = {"exact": ({}, 0.0, []), "map": ({GRAD: B_GRAD}, 0.0, ["--map", f"{GRAD}={B_GRAD}"]),
         "rtol_map": ({GRAD: B_GRAD}, RTOL, ["--map", f"{GRAD}={B_GRAD}", "--rtol", repr(RTOL)])}


def write_all(root):
    shutil.rmtree(root, ignore_errors=True)
    tracker = tracker_runs()
    local = local_runs(tracker)
    mth.mlflow_files(tracker, root)
    history_csv(local, f"{root}/local_history.csv")
    exp = {k: dict(expected(tracker, local, m, r), args=args) for k, (m, r, args) in CASES.items()}
    mth.write(f"{root}/expected.json", json.dumps(exp, indent=1) + "\n")
    # a long table of one of the runs at steps neither source has: no overlapping field
    mth.long_table([("async run 1", "async", [(s, mth.q(0.01 * s), 0.5) for s in (100, 101, 102)])],
                   f"{root}/no_common_step.csv")


def not_json(constant):
    raise ValueError(f"{constant} is not JSON (reconcile writes non-finite values as strings)")


def check(tool, root):
    """The CLI on the committed data: exit 4, the summary line, --json as expected."""
    exp = json.load(open(f"{root}/expected.json"))
    for name, e in exp.items():
        args = [tool, "reconcile", f"{root}/mlruns", f"{root}/local_history.csv"] + e["args"]
        text = subprocess.run(args, capture_output=True, text=True)
        how = f"agree within rtol {e['rtol']!r}" if e["rtol"] else "agree exactly"
        line = f"{e['overlapping']} overlapping numeric fields: {e['agree']} {how}, {len(e['differ'])} differ"
        assert text.returncode == 4, (name, text.returncode, text.stderr)
        assert text.stdout.splitlines()[0] == line, (name, text.stdout.splitlines()[0], line)
        js = subprocess.run(args + ["--json"], capture_output=True, text=True)
        assert js.returncode == 4, (name, js.returncode, js.stderr)
        got = json.loads(js.stdout, parse_constant=not_json)  # NaN/Infinity must be strings
        for k, v in e.items():
            if k != "args":
                assert got[k] == v, (name, k, got[k], v)
        assert isinstance(got["notes"], list) and got["notes"], name
        print(f"{name}: {line}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        check(sys.argv[2], sys.argv[3])
    else:
        write_all(sys.argv[-1])
