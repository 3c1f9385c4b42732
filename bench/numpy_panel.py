#!/usr/bin/python3
"""numpy side of the side-by-side benchmark: the same ratio panel (float64,
as users compute it today) on 2^25 float32 tokens with an 80% mask, rows of
1024. Prints tokens/s as JSON. Run with Debian's python3 (numpy)."""
import json
import sys
import time

import numpy as np

LOG2N = int(sys.argv[1]) if len(sys.argv) > 1 else 25
n = 1 << LOG2N
rows, cols = n // 1024, 1024
rng = np.random.default_rng(n)
rollout = -np.minimum(rng.exponential(0.5, n), 12).astype(np.float32)
train = np.minimum(rollout + rng.normal(0, 0.02, n).astype(np.float32), 0).astype(np.float32)
mask = (rng.random(n) < 0.8).astype(np.uint8)
train, rollout, mask = train.reshape(rows, cols), rollout.reshape(rows, cols), mask.reshape(rows, cols)


def panel(t, r, m):
    mb = m.astype(bool)
    d = t.astype(np.float64) - r.astype(np.float64)
    dm = d[mb]
    N = dm.size
    dc = np.clip(dm, -20, 20)
    em = np.expm1(dc)
    rho = 1 + em
    L = mb.sum(axis=1)
    ok = L > 0
    seq = np.where(mb, d, 0).sum(axis=1)[ok]
    lt = np.where(mb, t, 0).sum(axis=1, dtype=np.float64)[ok]
    le = np.where(mb, r, 0).sum(axis=1, dtype=np.float64)[ok]
    Ls = L[ok]
    ad = np.abs(dm)
    out = dict(
        tokens=N, sequences=int(ok.sum()), delta_mean=dm.mean(), delta_abs_mean=ad.mean(), delta_std=dm.std(),
        delta_min=dm.min(), delta_max=dm.max(), delta_abs_max=ad.max(), ratio_mean=rho.mean(), ratio_std=rho.std(),
        ratio_min=rho.min(), ratio_max=rho.max(), kl_k1=-dm.mean(), kl_k2=(0.5 * dm * dm).mean(),
        kl_k3=(em - dc).mean(), kl_reverse=(rho * dc).mean(), chi2=np.expm1(2 * dc).mean(), tv=np.abs(em).mean() / 2,
        ess_fraction=rho.sum() ** 2 / (N * (rho * rho).sum()), train_logprob_mean=lt.sum() / N,
        rollout_logprob_mean=le.sum() / N, train_ppl=np.exp(-lt / Ls).mean(), rollout_ppl=np.exp(-le / Ls).mean(),
        seq_log_ratio_mean=seq.mean(), seq_log_ratio_std=seq.std(), seq_geo_log_ratio_mean=(seq / Ls).mean(),
        seq_geo_log_ratio_std=(seq / Ls).std())
    for thr in (1e-3, 0.01, 0.1, 1.0):
        out["frac_abs_delta_gt_%g" % thr] = (ad > thr).mean()
    return out


def quantiles(t, r, m):
    d = (t.astype(np.float64) - r.astype(np.float64))[m.astype(bool)]
    a = np.quantile(d, [0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999])
    b = np.quantile(np.abs(d), [0.5, 0.9, 0.99, 0.999, 0.9999])
    return a, b


def quantiles7(t, r, m):
    d = (t.astype(np.float64) - r.astype(np.float64))[m.astype(bool)]
    return np.quantile(d, [0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999])


def best_of(f, reps=3):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f(train, rollout, mask)
        best = min(best, time.perf_counter() - t0)
    return best


if __name__ == "__main__":
    tp = best_of(panel)
    tq = best_of(quantiles, 2)
    t7 = best_of(quantiles7, 2)
    masked = int(mask.sum())
    print(json.dumps({"tokens": n, "numpy": np.__version__, "panel_tokens_per_s": n / tp,
                      "quantiles_tokens_per_s": n / tq, "quantiles7_values_per_s": masked / t7,
                      "quantiles7_tokens_per_s": n / t7}))
