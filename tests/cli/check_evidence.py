#!/usr/bin/python3
"""ctest: the evidence pack of `logratio runs` / `report` (issue 38) against
numpy/scipy and against itself.

  check_evidence.py TOOL DATA_DIR OUT_DIR CASE

CASE is one of: metrics, min_updates, strata, export, refusals. Every check
computes its expectation here, from the input table, with numpy/scipy (never
from logratio's own output), except the export's round trip, whose point is
that logratio reads back its own numbers to the last digit.
"""
import csv, hashlib, json, math, os, re, shutil, subprocess, sys

import numpy as np
from scipy import stats

TOOL, DATA, OUT, CASE = sys.argv[1:5]
MIXED = os.path.join(DATA, "runs", "mixed.csv")


def run(*args, ok=True):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        sys.exit(f"logratio {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def close(a, b, what, rel=1e-9):
    if a is None or b is None:
        assert a is None and b is None, f"{what}: {a} vs {b}"
        return
    assert abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300, f"{what}: logratio {a!r}, numpy {b!r}"


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def series(rows, metric):
    """run -> (group, updates, values) with NaN where the cell is empty."""
    out = {}
    for r in rows:
        g, u, v = out.setdefault(r["run"], (r["group"], [], []))
        u.append(float(r["update"]))
        v.append(float(r[metric]) if r.get(metric, "") not in ("", None) else math.nan)
    return out


def numpy_run_stats(u, v):
    u, v = np.array(u), np.array(v)
    k = np.isfinite(v)
    u, v = u[k], v[k]
    o = {"updates": len(v), "mean": float(np.mean(v)), "std": float(np.std(v, ddof=1)),
         "median": float(np.median(v)), "max": float(np.max(v))}
    lr = stats.linregress(u, v)
    o["slope"], o["slope_p"] = float(lr.slope), float(lr.pvalue)
    o["kendall_tau"] = float(stats.kendalltau(u, v).statistic if hasattr(stats.kendalltau(u, v), "statistic")
                             else stats.kendalltau(u, v)[0])
    return o


def check_metric_object(obj, rows, metric):
    assert obj["metric"] == metric, obj["metric"]
    want = series(rows, metric)
    assert [r["run"] for r in obj["runs"]] == list(want), (metric, [r["run"] for r in obj["runs"]])
    for r in obj["runs"]:
        g, u, v = want[r["run"]]
        assert r["group"] == g
        ref = numpy_run_stats(u, v)
        assert r["updates"] == ref["updates"], (metric, r["run"], r["updates"], ref["updates"])
        for key in ("mean", "std", "median", "max", "slope", "slope_p", "kendall_tau"):
            close(r[key], ref[key], f"{metric} {r['run']} {key}")
    for grp in obj["groups"]:
        means = [float(np.mean([x for x in want[n][2] if math.isfinite(x)])) for n in want if want[n][0] == grp["group"]]
        close(grp["mean_of_means"], float(np.mean(means)), f"{metric} group {grp['group']} mean_of_means")
        assert grp["runs"] == len(means)


def case_metrics():
    rows = rows_of(MIXED)
    doc = json.loads(run("runs", MIXED, "--metrics", "kl_k3", "--json").stdout)
    assert [m["metric"] for m in doc["metrics"]] == ["delta_abs_mean", "kl_k3"]
    for m in doc["metrics"]:
        check_metric_object(m, rows, m["metric"])
    every = json.loads(run("runs", MIXED, "--metrics", "all", "--json").stdout)
    assert [m["metric"] for m in every["metrics"]] == ["delta_abs_mean", "kl_k3"], every["metrics"]
    # the single-metric document is unchanged without --metrics
    single = json.loads(run("runs", MIXED, "--json").stdout)
    assert single["metric"] == "delta_abs_mean" and "metrics" not in single
    text = run("runs", MIXED, "--metrics", "kl_k3").stdout
    assert "metric: delta_abs_mean" in text and "metric: kl_k3" in text
    bad = run("runs", MIXED, "--metrics", "kl_k3,nope", ok=False)
    assert bad.returncode == 1 and bad.stdout == "", bad
    assert "--metrics: no run has the metric 'nope'" in bad.stderr, bad.stderr


def case_min_updates():
    rows = rows_of(MIXED)
    want = series(rows, "delta_abs_mean")
    n = 21
    counts = {name: sum(math.isfinite(x) for x in v) for name, (_, _, v) in want.items()}
    kept = [name for name in want if counts[name] >= n]
    doc = json.loads(run("runs", MIXED, "--min-updates", str(n), "--json").stdout)
    assert [r["run"] for r in doc["runs"]] == kept, doc["runs"]
    assert [x["run"] for x in doc["left_out"]] == [k for k in want if k not in kept]
    assert doc["min_updates"] == n
    out = run("report", MIXED, "--min-updates", str(n), "--html", os.path.join(OUT, "min.html")).stdout
    first = out.splitlines()[0]
    total = sum(counts[k] for k in kept)
    assert f"{len(kept)} runs, {total} updates" in first, first
    assert f"each run with >= {n} updates" in first and f"{len(want) - len(kept)} runs left out" in first, first
    none = run("runs", MIXED, "--min-updates", "1000", ok=False)
    assert none.returncode == 1 and "no run has that many updates" in none.stderr


def attributed_table():
    """mixed.csv with a run attribute: runtime_commit (text, constant per run)."""
    rows = rows_of(MIXED)
    path = os.path.join(OUT, "attributed.csv")
    commit = {}
    for r in rows:
        commit.setdefault(r["run"], "c0ffee" if len(commit) % 2 == 0 else "beef42")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "group", "update", "delta_abs_mean", "kl_k3", "runtime_commit"])
        for r in rows:
            w.writerow([r["run"], r["group"], r["update"], r["delta_abs_mean"], r["kl_k3"], commit[r["run"]]])
    return path, commit


def case_strata():
    path, commit = attributed_table()
    rows = rows_of(path)
    doc = json.loads(run("runs", path, "--by", "runtime_commit", "--json").stdout)
    assert [s["value"] for s in doc["strata"]] == ["c0ffee", "beef42"], [s["value"] for s in doc["strata"]]
    for s in doc["strata"]:
        assert s["by"] == "runtime_commit"
        assert s["runs"] == [r for r in commit if commit[r] == s["value"]], s["runs"]
        sub = [r for r in rows if commit[r["run"]] == s["value"]]
        check_metric_object({"metric": s["metric"], "runs": s["run_stats"], "groups": s["groups"]}, sub,
                            "delta_abs_mean")
        assert s["comparison"] is not None and s["comparison"]["a"] == "sync"
    assert doc["strata_agreement"]["assessed"] == 2
    listed = json.loads(run("runs", path, "--list-attributes", "--json").stdout)
    assert listed["attributes"]["runtime_commit"] == {"runs": 10, "values": {"beef42": 5, "c0ffee": 5}}, listed
    listing = run("runs", path, "--list-attributes").stdout
    assert "runtime_commit" in listing and "c0ffee (5)" in listing and "beef42 (5)" in listing, listing
    # a store without any documented mismatch metric still lists its runs' attributes
    store = os.path.join(OUT, "mlruns")
    shutil.rmtree(store, ignore_errors=True)
    os.makedirs(os.path.join(store, "1"))
    open(os.path.join(store, "1", "meta.yaml"), "w").write("experiment_id: '1'\nname: e\nlifecycle_stage: active\n")
    for i, lr in enumerate(["0.1", "0.01", "0.01"]):
        rid = f"{i:02d}" + "a" * 30
        d = os.path.join(store, "1", rid)
        os.makedirs(os.path.join(d, "metrics"))
        os.makedirs(os.path.join(d, "params"))
        open(os.path.join(d, "meta.yaml"), "w").write(f"run_id: {rid}\nrun_name: r{i}\nexperiment_id: '1'\nstatus: 3\n")
        open(os.path.join(d, "params", "lr"), "w").write(lr)
        open(os.path.join(d, "metrics", "accuracy"), "w").write("1700000000000 0.9 0\n1700000001000 0.95 1\n")
    listing = run("runs", store, "--list-attributes").stdout
    assert re.search(r"^lr +3/3 +0\.01 \(2\), 0\.1 \(1\)$", listing, re.M), listing
    bad = run("runs", path, "--by", "nope", ok=False)
    assert bad.returncode == 1 and bad.stdout == ""
    assert "--by 'nope': no run has this attribute (attributes: runtime_commit" in bad.stderr, bad.stderr
    line = run("report", path, "--by", "runtime_commit", "--html", os.path.join(OUT, "strata.html")).stdout
    assert "by runtime_commit: the level difference sync - async holds in" in line and "of the 2 strata with both groups" in line, line


def strip_notes(x):
    if isinstance(x, dict):
        return {k: strip_notes(v) for k, v in x.items() if k != "notes"}
    if isinstance(x, list):
        return [strip_notes(v) for v in x]
    return x


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def check_manifest(export, inputs):
    man = json.load(open(os.path.join(export, "manifest.json")))
    assert man["logratio_export"] == 1 and man["command"][1] == "report"
    listed = [f for i in man["inputs"] for f in i["files"]]
    assert listed, man["inputs"]
    for i in man["inputs"]:
        for f in i["files"]:
            full = os.path.join(i["input"], f["path"]) if os.path.isdir(i["input"]) else i["input"]
            got = subprocess.run(["sha256sum", full], capture_output=True, text=True).stdout.split()[0]
            assert f["sha256"] == got, (full, f["sha256"], got)
            assert f["bytes"] == os.path.getsize(full)
    for o in man["outputs"]:
        assert o["sha256"] == sha256(os.path.join(export, o["path"])), o
    assert [i["input"] for i in man["inputs"]] == inputs


def case_export():
    export = os.path.join(OUT, "export")
    shutil.rmtree(export, ignore_errors=True)
    hist = [os.path.join(DATA, "history", "async", "run-a.csv"), os.path.join(DATA, "history", "sync", "run-b.csv")]
    cases = [
        ([MIXED], ["--metrics", "all", "--min-updates", "21"]),
        (hist, ["--metric", "rollout/delta_abs_mean", "--step-column", "train/step", "--grad-norm-column",
                "train/grad_norm", "--steps-per-batch", "2", "--update-offset", "-1", "--metrics", "all"]),
    ]
    for inputs, opts in cases:
        run("report", *inputs, *opts, "--export", export, "--html", os.path.join(OUT, "export.html"))
        original = json.loads(run("runs", *inputs, *opts, "--json").stdout)
        again = json.loads(run("runs", export, "--json", "--metrics", "all").stdout)
        assert strip_notes(original) == strip_notes(again), "the export read back differs from the original analysis"
        check_manifest(export, inputs)
        if len(inputs) == 1:  # reconcile reads an export too: every field equals its source's
            rec = run("reconcile", export, inputs[0]).stdout
            assert " differ\n" in rec and ", 0 differ" in rec.splitlines()[0], rec[:300]
        for name in ("updates.csv", "run_summary.csv", "group_summary.csv", "comparison.csv", "run_attributes.csv"):
            with open(os.path.join(export, name), newline="") as f:
                table = list(csv.reader(f))
            assert all(len(r) == len(table[0]) for r in table), name
    assert os.path.exists(os.path.join(export, "rollouts.csv"))  # the second case has --steps-per-batch 2
    upd = rows_of(os.path.join(export, "updates.csv"))
    assert upd[0]["update"] == "0" and "position" in upd[0] and "zero_grad_norm" in upd[0], upd[0]
    # summary rows equal the JSON the export also holds, number for number
    summary = json.load(open(os.path.join(export, "summary.json")))
    runs_csv = rows_of(os.path.join(export, "run_summary.csv"))
    first = [r for r in runs_csv if r["metric"] == summary["metrics"][0]["metric"]]
    for r, j in zip(first, summary["metrics"][0]["runs"]):
        assert float(r["mean"]) == j["mean"], (r, j)


def case_reconcile():
    """report --reconcile B: the planted sources of tests/data/trackers/reconcile
    (make_reconcile_sources.py wrote them and the expected differences)."""
    rec = os.path.join(DATA, "trackers", "reconcile")
    want = json.load(open(os.path.join(rec, "expected.json")))["exact"]
    export = os.path.join(OUT, "export")
    shutil.rmtree(export, ignore_errors=True)
    out = run("report", os.path.join(rec, "mlruns"), "--reconcile", os.path.join(rec, "local_history.csv"),
              "--export", export, "--html", os.path.join(OUT, "r.html")).stdout
    n, k = want["overlapping"], len(want["differ"])
    line = f"across {n} overlapping numeric fields, the tracker and the local log: {want['agree']} agree exactly, {k} differ"
    assert line in out, out
    got = json.load(open(os.path.join(export, "reconcile.json")))
    assert got["overlapping"] == n and len(got["differ"]) == k
    assert [(d["run"], d["metric"]) for d in got["differ"]] == [(d["run"], d["metric"]) for d in want["differ"]]
    html = open(os.path.join(OUT, "r.html")).read()
    assert f"{want['agree']} agree exactly, {k} differ" in html


def markdown_tables(text):
    """The GitHub-flavoured tables of a Markdown text: each a list of rows of
    cells, after checking the header, the separator and the column counts."""
    tables, cur = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cur.append(line)
            continue
        if cur:
            cells = [re.split(r"(?<!\\)\|", row.strip()[1:-1]) for row in cur]
            assert len(cells) >= 2 and all(re.fullmatch(r"\s*:?-{3,}:?\s*", c) for c in cells[1]), cur[:2]
            assert all(len(r) == len(cells[0]) for r in cells), cur
            tables.append([[c.strip() for c in r] for r in cells[:1] + cells[2:]])
            cur = []
    return tables


def case_markdown():
    """report --markdown: the HTML's sections in the same order, tables that
    parse, figures linked from the export that exist; the per-run policy
    diagnostics equal numpy's means."""
    ex = os.path.join(os.path.dirname(os.path.dirname(DATA.rstrip("/"))), "examples", "data", "trackers")
    export, md, html = (os.path.join(OUT, n) for n in ("export", "evidence.md", "evidence.html"))
    shutil.rmtree(export, ignore_errors=True)
    run("report", os.path.join(ex, "tensorboard"), "--group-pattern", "^(a?sync)-", "--metrics", "all",
        "--grad-norm-column", "actor/grad_norm", "--reconcile", os.path.join(ex, "verl"), "--export", export,
        "--markdown", md, "--html", html)
    text = open(md).read()
    page = open(html).read()
    md_ids = re.findall(r'<a id="([^"]+)"></a>', text)
    html_ids = [i for i in re.findall(r'<section[^>]* id="([^"]+)"', page)]
    assert md_ids and md_ids == html_ids, (md_ids, html_ids)
    for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert os.path.isfile(os.path.join(OUT, img)), img
    tables = markdown_tables(text)
    diag = [t for t in tables if t[0][:3] == ["run", "group", "updates"] and "actor/entropy" in t[0]]
    assert len(diag) == 1, [t[0] for t in tables]
    head, rows = diag[0][0], diag[0][1:]
    col = head.index("actor/entropy")
    verl = {}
    for name in os.listdir(os.path.join(ex, "verl")):
        with open(os.path.join(ex, "verl", name)) as f:
            verl[name[:-6]] = [json.loads(l)["data"]["actor/entropy"] for l in f]
    for r in rows:
        close(float(r[col]), float(f"{np.mean(verl[r[0]]):.4g}"), f"{r[0]} actor/entropy", rel=1e-12)
    assert "across 1440 overlapping numeric fields, the tracker and the local log agree exactly" in text


def case_readme():
    """docs/runs.md's worked example, run as written (from OUT, with the
    bundled data's absolute path): every line of its output block appears."""
    root = os.path.dirname(os.path.dirname(DATA.rstrip("/")))
    page = open(os.path.join(root, "docs", "runs.md")).read()
    part = page[page.index("## A diagnostic from existing runs"):]
    commands = re.search(r"```sh tested-by=cli_evidence_readme\n(.*?)```", part, re.S).group(1).replace("\\\n", " ")
    expected = re.search(r"```text\n(.*?)```", part, re.S).group(1)
    shutil.rmtree(os.path.join(OUT, "evidence"), ignore_errors=True)
    printed = ""
    for line in commands.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        args = line.replace("examples/", os.path.join(root, "examples") + "/").replace("'", "").split()
        assert args[0] == "logratio", line
        p = subprocess.run([TOOL, *args[1:]], capture_output=True, text=True, cwd=OUT)
        assert p.returncode == 0, (line, p.stderr)
        printed += p.stdout
    for want in expected.splitlines():
        if want != "...":
            assert want.replace("examples/", os.path.join(root, "examples") + "/") in printed, want


def case_refusals():
    target = os.path.join(OUT, "not_an_export")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    open(os.path.join(target, "keep.txt"), "w").write("mine\n")
    html = os.path.join(OUT, "refused.html")
    if os.path.exists(html):
        os.remove(html)
    p = run("report", MIXED, "--export", target, "--html", html, ok=False)
    assert p.returncode == 1 and p.stdout == "", p
    assert "not_an_export: an existing directory that is not a logratio export" in p.stderr, p.stderr
    assert os.listdir(target) == ["keep.txt"] and not os.path.exists(html)
    # an error after the export started leaves no directory behind
    fresh = os.path.join(OUT, "fresh_export")
    shutil.rmtree(fresh, ignore_errors=True)
    p = run("report", MIXED, "--export", fresh, "--compare", "x,y", "--html", html, ok=False)
    assert p.returncode == 1 and not os.path.exists(fresh) and not os.path.exists(html)
    assert not [n for n in os.listdir(OUT) if n.startswith(".fresh_export.tmp")]
    # an --html that is a directory fails before the export is put in place
    p = run("report", MIXED, "--export", fresh, "--html", OUT, ok=False)
    assert p.returncode == 1 and "a directory, not a file" in p.stderr and not os.path.exists(fresh), p.stderr
    # an export cut short after it was written is refused, never read as fewer rows
    cut = os.path.join(OUT, "cut_export")
    shutil.rmtree(cut, ignore_errors=True)
    run("report", MIXED, "--export", cut, "--html", html)
    data = open(os.path.join(cut, "updates.csv"), "rb").read()
    open(os.path.join(cut, "updates.csv"), "wb").write(data[: len(data) // 2])
    p = run("runs", cut, ok=False)
    assert p.returncode == 1 and p.stdout == "", p
    assert "updates.csv: " in p.stderr and "not the one manifest.json records" in p.stderr, p.stderr
    # options that would silently empty or wrap the analysis
    for args, msg in ((["--metrics", "all,kl_k3"], "'all' takes every metric and cannot be combined"),
                      (["--position", "1"], "--position 1 needs --steps-per-batch P greater than it"),
                      (["--min-updates", "-1"], "--min-updates: must be a whole number >= 0"),
                      (["--update-offset", "nan"], "--update-offset: must be finite")):
        p = run("runs", MIXED, *args, ok=False)
        assert p.returncode == 1 and p.stdout == "" and msg in p.stderr, (args, p.stderr)


{"metrics": case_metrics, "reconcile": case_reconcile, "readme": case_readme, "markdown": case_markdown, "min_updates": case_min_updates, "strata": case_strata, "export": case_export,
 "refusals": case_refusals}[CASE]()
print(f"check_evidence {CASE}: ok")
