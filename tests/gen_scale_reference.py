#!/usr/bin/python3
"""Writes the scipy oracle for the run statistics at n = 10^4 and 10^5 with
ties (run with Debian's /usr/bin/python3; takes a few minutes).

The data are not committed: both sides build them from a 64-bit LCG
(Knuth's MMIX constants), tests/test_slope_selection.cpp's scale_data():
  state <- state * 6364136223846793005 + 1442695040888963407 (mod 2^64)
  x_i = i // 3                                   (every x tied 3 times)
  y_i = ((state >> 33) % 500 + i // 50) / 1000   (integers / 1000: y ties)
with the state advanced once per point before y_i is read, seed = n.
Only the expected values are committed: tests/data/runs/scale_reference.json.

Expected values: scipy.stats.theilslopes(y, x) (slope, intercept, Sen's
interval), scipy.stats.kendalltau(x, y) (tau-b, p; asymptotic with ties),
scipy.stats.linregress(x, y). At n = 10^5 theilslopes would form 5·10^9
slopes (40 GB): the same slopes are computed here in blocks and the same
order statistics read from them (the same ranks as scipy, the same IEEE
divisions); the block method is checked against theilslopes at n = 10^4.
"""
import json, os
import numpy as np
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "runs", "scale_reference.json")
M64 = (1 << 64) - 1


def scale_data(n):
    state = n
    x = np.empty(n)
    q = np.empty(n, dtype=np.int64)
    for i in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) & M64
        x[i] = i // 3
        q[i] = (state >> 33) % 500 + i // 50
    return x, q / 1000.0


def sen_ranks(x, y, nt, alpha=0.95):
    """The ranks scipy.stats.theilslopes reads (its code, scipy 1.10)."""
    if alpha > 0.5:
        alpha = 1.0 - alpha
    z = stats.norm.ppf(alpha / 2.0)
    _, nxreps = np.unique(x, return_counts=True)
    _, nyreps = np.unique(y, return_counts=True)
    ny = len(y)
    sigsq = 1 / 18.0 * (ny * (ny - 1) * (2 * ny + 5) -
                        sum(k * (k - 1) * (2 * k + 5) for k in nxreps if k > 1) -
                        sum(k * (k - 1) * (2 * k + 5) for k in nyreps if k > 1))
    sigma = np.sqrt(sigsq)
    ru = min(int(np.round((nt - z * sigma) / 2.0)), nt - 1)
    rl = max(int(np.round((nt + z * sigma) / 2.0)) - 1, 0)
    med = [nt // 2] if nt % 2 else [nt // 2 - 1, nt // 2]
    return med, rl, ru


def blocks(x, y, rows=200):
    """The pairwise slopes (y_i - y_j) / (x_i - x_j), x_i > x_j, by row blocks."""
    o = np.lexsort((y, x))
    xs, ys = x[o], y[o]
    n = len(xs)
    for i0 in range(0, n, rows):
        i1 = min(i0 + rows, n)
        dx = xs[i0:, None] - xs[None, i0:i1]  # later rows minus this block
        dy = ys[i0:, None] - ys[None, i0:i1]
        k = dx > 0
        yield dy[k] / dx[k]


def block_order_statistics(x, y, ranks):
    """Slopes at `ranks` of the sorted slopes: a bracket of each from a
    sample (one pass), then the slopes inside the brackets collected (a
    second pass: the same IEEE quotients again)."""
    rng = np.random.default_rng(1)
    total, sample = 0, []
    for s in blocks(x, y):
        total += len(s)
        if len(s):
            sample.append(rng.choice(s, size=max(1, len(s) // 2000)))
    sample = np.sort(np.concatenate(sample))
    m = len(sample)
    brackets = []
    for r in ranks:
        at = int(r / total * m)
        margin = int(6 * np.sqrt(m * 0.25)) + 10  # six standard deviations of a sample rank
        brackets.append((sample[max(at - margin, 0)], sample[min(at + margin, m - 1)]))
    below = [0] * len(ranks)
    inside = [[] for _ in ranks]
    for s in blocks(x, y):
        for b, (lo, hi) in enumerate(brackets):
            below[b] += int(np.count_nonzero(s < lo))
            inside[b].append(s[(s >= lo) & (s <= hi)])
    out = {}
    for b, r in enumerate(ranks):
        v = np.sort(np.concatenate(inside[b]))
        assert below[b] <= r < below[b] + len(v), "bracket missed"
        out[r] = float(v[r - below[b]])
    return total, out


def theil_sen_blocks(x, y):
    nt = sum(len(s) for s in blocks(x, y))
    med, rl, ru = sen_ranks(x, y, nt)
    _, v = block_order_statistics(x, y, sorted(set(med + [rl, ru])))
    slope = v[med[0]] if len(med) == 1 else (v[med[0]] + v[med[1]]) / 2.0
    return slope, float(np.median(y) - slope * np.median(x)), v[rl], v[ru]


def case(n):
    x, y = scale_data(n)
    ts = theil_sen_blocks(x, y)
    if n <= 10000:
        t = stats.theilslopes(y, x)
        got = (float(t[0]), float(t[1]), float(t[2]), float(t[3]))
        assert got == ts, (got, ts)  # the block method is theilslopes
    kt = stats.kendalltau(x, y)
    lr = stats.linregress(x, y)
    return {"n": n, "y_head": [float(v) for v in y[:5]],
            "theil_sen": {"slope": ts[0], "intercept": ts[1], "low": ts[2], "high": ts[3]},
            "kendall": {"tau": float(kt.correlation), "p": float(kt.pvalue)},
            "linregress": {"slope": float(lr.slope), "intercept": float(lr.intercept), "r": float(lr.rvalue),
                           "p": float(lr.pvalue), "stderr": float(lr.stderr)}}


def main():
    res = {"generator": "tests/gen_scale_reference.py", "cases": [case(10000), case(100000)]}
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
