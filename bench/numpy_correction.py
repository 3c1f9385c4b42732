#!/usr/bin/python3
"""numpy side of the correction benchmark: the same work as
bench_correction.cpp's correct_token -- token-level TIS (C = 2), token_k1
band [0.5, 2] and token_k3 <= 0.01 rejection, veto 1e-4, verl's metrics, the
float32 weights and uint8 mask -- in float64 as verl computes it, on 2^25
float32 tokens with an 80% mask, rows of 1024. Prints tokens/s as JSON."""
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
C, K1_LO, K1_UP, K3_UP, VETO = 2.0, np.log(0.5), np.log(2.0), 0.01, 1e-4


def correct(t, r, m):
    mb = m.astype(bool)
    mf = mb.astype(np.float64)
    N = mf.sum()
    L = mf.sum(axis=1)
    ok = L > 0
    d = t.astype(np.float64) - r.astype(np.float64)
    dc = np.clip(d, -20, 20)
    w = np.exp(dc) * mf
    out = {}
    # IS metrics (before truncation)
    out["rollout_is_mean"] = w.sum() / N
    out["rollout_is_ratio_fraction_high"] = ((w > C) & mb).sum() / N
    out["rollout_is_ratio_fraction_low"] = ((w < 1 / C) & mb).sum() / N
    out["rollout_is_max"] = w[mb].max()
    out["rollout_is_min"] = w[mb].min()
    wc = np.clip(w, 1 / C, C)
    m1 = (wc * mf).sum() / N
    out["rollout_is_std"] = np.sqrt(max((wc * wc * mf).sum() / N - m1 * m1, 0))
    out["rollout_is_eff_sample_size"] = m1 * m1 / ((wc * wc * mf).sum() / N)
    sm = w.sum(axis=1)[ok] / L[ok]
    out.update(rollout_is_seq_mean=sm.mean(), rollout_is_seq_std=sm.std(ddof=1), rollout_is_seq_max=sm.max(),
               rollout_is_seq_min=sm.min(), rollout_is_seq_max_deviation=np.abs(sm - 1).max(),
               rollout_is_seq_fraction_high=(sm > C).mean(), rollout_is_seq_fraction_low=(sm < 1 / C).mean())
    tw = np.minimum(w, C)
    # rejection
    keep = mb.copy()
    for name, x, lo, up in (("token_k1", -dc, K1_LO, K1_UP), ("token_k3", np.expm1(dc) - dc, 0.0, K3_UP)):
        k = (x >= lo) & (x <= up) if name.endswith("k1") else x <= up
        xm = x[mb]
        out[f"rollout_rs_{name}_mean"] = xm.mean()
        out[f"rollout_rs_{name}_max"] = xm.max()
        out[f"rollout_rs_{name}_min"] = xm.min()
        out[f"rollout_rs_{name}_fraction_high"] = (xm > up).mean()
        out[f"rollout_rs_{name}_fraction_low"] = (xm < lo).mean() if name.endswith("k1") else 0.0
        xc = np.clip(xm, lo, up)
        out[f"rollout_rs_{name}_std"] = np.sqrt(max((xc * xc).mean() - xc.mean() ** 2, 0))
        sx = np.where(mb, x, 0).sum(axis=1)[ok] / L[ok]
        out[f"rollout_rs_{name}_seq_mean"] = sx.mean()
        out[f"rollout_rs_{name}_seq_std"] = sx.std(ddof=1)
        out[f"rollout_rs_{name}_seq_max"] = sx.max()
        out[f"rollout_rs_{name}_seq_min"] = sx.min()
        out[f"rollout_rs_{name}_masked_fraction"] = (~k & mb).sum() / N
        out[f"rollout_rs_{name}_seq_masked_fraction"] = (~k & mb).any(axis=1)[ok].mean()
        keep &= k
    out["rollout_rs_masked_fraction"] = (~keep & mb).sum() / N
    out["rollout_rs_seq_masked_fraction"] = (~keep & mb).any(axis=1)[ok].mean()
    cat = (d < np.log(VETO)) & mb
    vetoed = cat.any(axis=1)
    out["rollout_is_veto_fraction"] = vetoed[ok].mean()
    out["rollout_is_catastrophic_token_fraction"] = cat.sum() / N
    keep &= ~vetoed[:, None]
    # off-policy
    mt = np.where(mb, t, 0).sum(axis=1, dtype=np.float64)[ok] / L[ok]
    mr = np.where(mb, r, 0).sum(axis=1, dtype=np.float64)[ok] / L[ok]
    dm = d[mb]
    lpd = mr - mt
    out.update(kl=-dm.mean(), k3_kl=(np.expm1(dm) - dm).mean(), training_ppl=np.exp(-mt).mean(),
               training_log_ppl=(-mt).mean(), rollout_ppl=np.exp(-mr).mean(), rollout_log_ppl=(-mr).mean(),
               log_ppl_diff=lpd.mean(), log_ppl_abs_diff=np.abs(lpd).mean(), log_ppl_diff_max=lpd.max(),
               log_ppl_diff_min=lpd.min(), ppl_ratio=np.exp(lpd).mean(), chi2_token=np.expm1(2 * dc[mb]).mean(),
               chi2_seq=np.expm1(2 * np.clip(np.where(mb, d, 0).sum(axis=1)[ok], -20, 20)).mean())
    return tw.astype(np.float32), keep.astype(np.uint8), out


best = float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    correct(train, rollout, mask)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"tokens": n, "numpy": np.__version__, "correction_tokens_per_s": n / best}))
