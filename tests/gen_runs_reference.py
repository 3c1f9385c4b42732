#!/usr/bin/python3
"""Writes the scipy oracle for `logratio runs` (run with Debian's /usr/bin/python3).

For each case: a long-format panel table tests/data/runs/<case>.csv and the
statistics scipy computes on it, in the JSON shape of `logratio runs --json`,
in tests/data/runs/<case>.expected.json. The C++ tests read both; they never
run Python. Expected values come from:
  per run    np.mean / np.std(ddof=1) / np.median / np.max, scipy.stats.linregress
             (slope CI = slope -/+ t.ppf(0.975, n-2) * stderr), scipy.stats.theilslopes,
             scipy.stats.kendalltau
  per group  mean of run means, CI = mean -/+ t.ppf(0.975, k-1) * std(ddof=1)/sqrt(k)
  comparison scipy.stats.ttest_ind(equal_var=False) on run means and on run slopes,
             Welch CI of the mean difference, scipy.stats.mannwhitneyu (two-sided).
"""
import csv, json, math, os
import numpy as np
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "runs")
T975 = lambda df: stats.t.ppf(0.975, df)


def f(x):
    x = float(x)
    return None if math.isnan(x) else x


def analyze(rows, metric, compare=None):
    runs, order = {}, []
    for r in rows:
        key = r["run"]
        if key not in runs:
            runs[key] = {"group": r["group"], "u": [], "v": []}
        if r["group"] not in order:
            order.append(r["group"])
        v = r.get(metric, "")
        runs[key]["u"].append(float(r["update"]))
        runs[key]["v"].append(float(v) if v not in ("", None) else math.nan)
    out_runs = []
    for name, d in runs.items():
        u, v = np.array(d["u"]), np.array(d["v"])
        k = ~np.isnan(v)
        u, v = u[k], v[k]
        n = len(v)
        o = {"run": name, "group": d["group"], "updates": n,
             "mean": f(np.mean(v)) if n else None,
             "std": f(np.std(v, ddof=1)) if n > 1 else None,
             "median": f(np.median(v)) if n else None,
             "max": f(np.max(v)) if n else None}
        for key in ("slope", "slope_stderr", "slope_p", "theil_sen_slope", "kendall_tau", "kendall_p"):
            o[key] = None
        o["slope_ci"] = [None, None]
        o["theil_sen_ci"] = [None, None]
        if n >= 2 and u.min() != u.max():
            lr = stats.linregress(u, v)
            o["slope"], o["slope_stderr"], o["slope_p"] = f(lr.slope), f(lr.stderr), f(lr.pvalue)
            if n > 2:
                t = T975(n - 2)
                o["slope_ci"] = [f(lr.slope - t * lr.stderr), f(lr.slope + t * lr.stderr)]
            ts = stats.theilslopes(v, u)
            o["theil_sen_slope"] = f(ts[0])
            o["theil_sen_ci"] = [f(ts[2]), f(ts[3])]
            kt = stats.kendalltau(u, v)
            o["kendall_tau"], o["kendall_p"] = f(kt.correlation), f(kt.pvalue)
        out_runs.append(o)
    groups = []
    for g in order:
        rs = [r for r in out_runs if r["group"] == g and r["updates"] > 0]
        m = np.array([r["mean"] for r in rs])
        e = {"group": g, "runs": len(rs), "updates": sum(r["updates"] for r in rs),
             "mean_of_means": f(np.mean(m)) if len(m) else None, "ci": [None, None]}
        if len(m) > 1:
            h = T975(len(m) - 1) * np.std(m, ddof=1) / math.sqrt(len(m))
            e["ci"] = [f(np.mean(m) - h), f(np.mean(m) + h)]
        groups.append(e)
    res = {"metric": metric, "runs": out_runs, "groups": groups, "comparison": None}
    a, b = compare if compare else (order[0], order[1]) if len(order) > 1 else (None, None)
    if a is not None:
        ma = np.array([r["mean"] for r in out_runs if r["group"] == a and r["mean"] is not None])
        mb = np.array([r["mean"] for r in out_runs if r["group"] == b and r["mean"] is not None])
        sa = np.array([r["slope"] for r in out_runs if r["group"] == a and r["slope"] is not None])
        sb = np.array([r["slope"] for r in out_runs if r["group"] == b and r["slope"] is not None])
        c = {"a": a, "b": b, "mean_diff": f(np.mean(ma) - np.mean(mb))}
        if len(ma) > 1 and len(mb) > 1:
            w = stats.ttest_ind(ma, mb, equal_var=False)
            va, vb = np.var(ma, ddof=1) / len(ma), np.var(mb, ddof=1) / len(mb)
            df = (va + vb) ** 2 / (va ** 2 / (len(ma) - 1) + vb ** 2 / (len(mb) - 1))
            h = T975(df) * math.sqrt(va + vb)
            c.update(mean_diff_ci=[f(c["mean_diff"] - h), f(c["mean_diff"] + h)],
                     welch_t=f(w.statistic), welch_df=f(df), welch_p=f(w.pvalue))
        else:
            c.update(mean_diff_ci=[None, None], welch_t=None, welch_df=None, welch_p=None)
        mw = stats.mannwhitneyu(ma, mb)
        c.update(mannwhitney_u=f(mw.statistic), mannwhitney_p=f(mw.pvalue))
        if len(sa) > 1 and len(sb) > 1:
            w = stats.ttest_ind(sa, sb, equal_var=False)
            va, vb = np.var(sa, ddof=1) / len(sa), np.var(sb, ddof=1) / len(sb)
            df = (va + vb) ** 2 / (va ** 2 / (len(sa) - 1) + vb ** 2 / (len(sb) - 1))
            c.update(slope_welch_t=f(w.statistic), slope_welch_df=f(df), slope_welch_p=f(w.pvalue))
        else:
            c.update(slope_welch_t=None, slope_welch_df=None, slope_welch_p=None)
        res["comparison"] = c
    return res


def write(case, rows, columns, metric, compare=None):
    with open(os.path.join(OUT, case + ".csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in columns})
    with open(os.path.join(OUT, case + ".expected.json"), "w") as fh:
        json.dump(analyze(rows, metric, compare), fh, indent=1)
        fh.write("\n")


def series(rng, run, group, n, base, slope, noise, start=1, nan_every=0, digits=None):
    rows = []
    for i in range(n):
        v = base + slope * i + noise * rng.standard_normal()
        if digits is not None:
            v = round(v, digits)
        cell = "" if nan_every and i % nan_every == nan_every - 1 else repr(float(v))
        rows.append({"run": run, "group": group, "update": start + i, "delta_abs_mean": cell,
                     "kl_k3": repr(float(abs(v) * 1e-3))})
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261203)
    cols = ["run", "group", "update", "delta_abs_mean", "kl_k3"]
    # 4 sync (flat) vs 6 async (drifting) runs of different lengths, NaN cells:
    # small groups -> exact Mann-Whitney, n <= 33 -> exact Kendall.
    rows = []
    for i in range(4):
        rows += series(rng, f"sync-{i}", "sync", 20 + i, 0.010, 0.0, 0.001, nan_every=7 if i == 1 else 0)
    for i in range(6):
        rows += series(rng, f"async-{i}", "async", 20 + 4 * i, 0.012, 0.0004 * (1 + i % 3), 0.002)
    write("mixed", rows, cols, "delta_abs_mean")
    write("mixed_async_first", rows, cols, "delta_abs_mean", ("async", "sync"))
    # 10 vs 12 runs of 40 updates: asymptotic Mann-Whitney and Kendall (n > 33).
    rows = []
    for i in range(10):
        rows += series(rng, f"s{i}", "sync", 40, 0.01, 0.00001, 0.002)
    for i in range(12):
        rows += series(rng, f"a{i}", "async", 40 + i, 0.011, 0.0002, 0.003, start=0)
    write("large", rows, cols, "delta_abs_mean")
    # Ties: values rounded to 2 digits (tie-corrected Kendall, Sen and MWU),
    # two runs with identical means.
    rows = []
    for i in range(5):
        rows += series(rng, f"t{i}", "sync", 24, 0.05, 0.001, 0.01, digits=2)
    for i in range(5):
        rows += series(rng, f"u{i}", "async", 26, 0.06, 0.002, 0.02, digits=2)
    rows += [dict(r, run="t0-copy") for r in rows if r["run"] == "t0"]
    write("ties", rows, cols, "delta_abs_mean")
    # Edge cases: a run of 2 updates, a constant run, a run of 1 update, a
    # group with a single run, a metric column with NaN cells.
    rows = series(rng, "two", "sync", 2, 0.01, 0.001, 0.0)
    rows += [{"run": "flat", "group": "sync", "update": u, "delta_abs_mean": "0.02", "kl_k3": "1e-5"}
             for u in range(1, 21)]
    rows += series(rng, "one", "sync", 1, 0.01, 0.0, 0.001)
    rows += series(rng, "lonely", "async", 21, 0.02, 0.001, 0.002, nan_every=5)
    write("edge", rows, cols, "delta_abs_mean")
    write("edge_kl", rows, cols, "kl_k3")


if __name__ == "__main__":
    main()
