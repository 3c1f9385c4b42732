#!/usr/bin/env python3
"""logratio's Python package against torch (float32, CPU, one thread) and numpy in the same process.

The issue's case: B = 256 x T = 4096 bf16 log-prob tensors, variable lengths,
heavy-tailed delta. Three computations:
  panel     -- the panel's one-pass statistics (logratio.panel(quantiles=False)
               vs the same sums, extremes, per-sequence and threshold
               statistics written in torch);
  correct   -- token TIS (C = 2) + token_k1 band 0.9_1.1: weights, response
               mask and verl's main metrics;
  quantiles -- 12 exact quantiles of delta (torch.quantile, numpy.quantile).
Each row also gives the C++ kernel time on the same data (logratio's timing
helpers: the kernel alone, after argument conversion, GIL released) and the
Python call's ratio to it. Times are the best of --repeat runs.

    /usr/bin/python3 bench/python_vs_torch.py [--repeat 7] [--json out.json]
(with the package importable: PYTHONPATH=build/<dir>/python, or installed).
"""
import argparse
import json
import math
import time

import numpy as np
import torch

import logratio
from logratio import _logratio as _C

Q = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999]


def make_batch(B=256, T=4096, seed=0):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    rollout = -(torch.distributions.StudentT(3.0).sample((B, T)).abs() * 0.8)
    heavy = torch.distributions.StudentT(1.5).sample((B, T)) * 0.01  # heavy-tailed delta
    train = torch.minimum(rollout + heavy, torch.zeros(()))
    lens = torch.randint(T // 8, T + 1, (B,), generator=g)
    mask = torch.arange(T)[None, :] < lens[:, None]
    return train.to(torch.bfloat16), rollout.to(torch.bfloat16), mask


def best(fn, repeat):
    fn()  # warm-up
    t = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def torch_panel(train, rollout, mask):
    """The panel's one-pass statistics in torch float32."""
    t, r = train.float(), rollout.float()
    m = mask.float()
    n = m.sum()
    d = (t - r) * m
    dc = d.clamp(-20, 20)
    rho = torch.exp(dc) * m
    em = torch.expm1(dc)
    out = {"tokens": n, "delta_mean": d.sum() / n}
    out["delta_abs_mean"] = d.abs().sum() / n
    out["delta_std"] = ((d - out["delta_mean"]) ** 2 * m).sum().div(n).sqrt()
    big = torch.where(mask, d, torch.tensor(-math.inf))
    small = torch.where(mask, d, torch.tensor(math.inf))
    out["delta_max"], out["delta_min"] = big.max(), small.min()
    absd = torch.where(mask, d.abs(), torch.tensor(-1.0))
    out["delta_abs_max"] = absd.max()
    out["delta_abs_max_at"] = absd.argmax()
    out["ratio_mean"] = rho.sum() / n
    out["ratio_std"] = ((rho - out["ratio_mean"]) ** 2 * m).sum().div(n).sqrt()
    out["ratio_max"] = torch.where(mask, rho, torch.tensor(-math.inf)).max()
    out["ratio_min"] = torch.where(mask, rho, torch.tensor(math.inf)).min()
    out["kl_k1"] = -d.sum() / n
    out["kl_k2"] = (0.5 * d * d).sum() / n
    out["kl_k3"] = ((em - dc) * m).sum() / n
    out["kl_reverse"] = (rho * dc).sum() / n
    out["chi2"] = (torch.expm1(2 * dc) * m).sum() / n
    out["tv"] = 0.5 * (em.abs() * m).sum() / n
    out["ess_fraction"] = rho.sum() ** 2 / ((rho * rho).sum() * n)
    out["train_logprob_mean"] = (t * m).sum() / n
    out["rollout_logprob_mean"] = (r * m).sum() / n
    seq = d.sum(1)
    cnt = m.sum(1)
    geo = seq / cnt.clamp(min=1)
    out["seq"] = (seq.mean(), seq.std(), seq.min(), seq.max(), geo.mean(), geo.std(), geo.min(), geo.max())
    out["frac"] = [((d.abs() > th) & mask).sum() / n for th in (1e-3, 0.01, 0.1, 1.0)]
    return out


def torch_correct(train, rollout, mask, C=2.0, lo=0.9, hi=1.1):
    """Token TIS + token_k1 band: weights, mask and verl's main metrics, torch float32."""
    m = mask.float()
    n = m.sum()
    lr = (train.float() - rollout.float()).clamp(-20, 20)
    w_raw = torch.exp(lr)
    w = torch.minimum(w_raw, torch.tensor(C)) * m
    k1 = -lr
    keep = mask & (k1 >= math.log(lo)) & (k1 <= math.log(hi))
    metrics = {}
    metrics["rollout_is_mean"] = w.sum() / n
    metrics["rollout_is_std"] = ((w - metrics["rollout_is_mean"]) ** 2 * m).sum().div(n).sqrt()
    metrics["rollout_is_max"] = torch.where(mask, w, torch.tensor(-math.inf)).max()
    metrics["rollout_is_min"] = torch.where(mask, w, torch.tensor(math.inf)).min()
    metrics["rollout_is_ratio_fraction_high"] = ((w_raw > C) & mask).sum() / n
    metrics["rollout_is_ratio_fraction_low"] = ((w_raw < 1 / C) & mask).sum() / n
    metrics["rollout_is_eff_sample_size"] = w.sum() ** 2 / ((w * w).sum() * n)
    seq_w = w.sum(1) / m.sum(1).clamp(min=1)
    metrics["rollout_is_seq"] = (seq_w.mean(), seq_w.std(), seq_w.max(), seq_w.min(), (seq_w - 1).abs().max())
    metrics["rs_token_k1"] = ((k1 * m).sum() / n, torch.where(mask, k1, torch.tensor(-math.inf)).max(),
                              torch.where(mask, k1, torch.tensor(math.inf)).min())
    metrics["rs_masked_fraction"] = (mask & ~keep).sum() / n
    metrics["rs_seq_masked_fraction"] = ((mask & ~keep).any(1)).float().mean()
    metrics["kl"] = (-lr * m).sum() / n
    metrics["k3_kl"] = ((torch.expm1(lr) - lr) * m).sum() / n
    metrics["chi2_token"] = ((w_raw * w_raw) * m).sum() / n - 1
    return w, keep.to(mask.dtype), metrics


def torch_quantiles(train, rollout, mask):
    d = (train.float() - rollout.float())[mask]
    return torch.quantile(d, torch.tensor(Q))


def numpy_quantiles(train_np, rollout_np, mask_np):
    d = (train_np - rollout_np)[mask_np]
    return np.quantile(d, Q)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3, help="rounds over all rows; each time is the best of all rounds")
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    train, rollout, mask = make_batch()
    tokens = int(mask.sum())
    train_np, rollout_np, mask_np = train.float().numpy().astype(np.float64), rollout.float().numpy().astype(
        np.float64), mask.numpy()
    R = args.repeat
    corr = dict(rollout_is="token", rollout_is_threshold=2.0, rollout_rs="token_k1", rollout_rs_threshold="0.9_1.1")

    # sanity: the same numbers
    p = logratio.panel(train, rollout, mask, quantiles=False)
    tp = torch_panel(train, rollout, mask)
    assert abs(p["kl_k3"] - float(tp["kl_k3"])) <= 1e-3 * abs(p["kl_k3"]) + 1e-9, (p["kl_k3"], float(tp["kl_k3"]))
    w, k, _ = logratio.correct(train, rollout, mask, **corr)
    tw, tk, _ = torch_correct(train, rollout, mask)
    assert torch.equal(k, tk) and torch.allclose(w, tw, rtol=1e-6)
    q = logratio.quantiles(train, rollout, mask, q=Q)
    assert np.allclose(q, numpy_quantiles(train_np, rollout_np, mask_np), rtol=0, atol=0)

    rows = {}

    def row(name, py, cxx, tor, npy=None):
        r = rows.setdefault(name, {"name": name, "logratio_ms": math.inf, "cxx_kernel_ms": math.inf,
                                   "torch_ms": math.inf, "numpy_ms": math.inf if npy is not None else None})
        r["logratio_ms"] = min(r["logratio_ms"], py * 1e3)
        r["cxx_kernel_ms"] = min(r["cxx_kernel_ms"], cxx * 1e3)
        r["torch_ms"] = min(r["torch_ms"], tor * 1e3)
        if npy is not None:
            r["numpy_ms"] = min(r["numpy_ms"], npy * 1e3)

    # The rows are measured round by round (a loaded machine's noise then hits
    # every column alike); each time is the best over all rounds.
    for _ in range(args.rounds):
        row("panel", best(lambda: logratio.panel(train, rollout, mask, quantiles=False), R),
            _C._time_panel(train, rollout, mask, quantiles=False, repeat=R),
            best(lambda: torch_panel(train, rollout, mask), R))
        row("correct (token TIS 2 + token_k1 0.9_1.1)",
            best(lambda: logratio.correct(train, rollout, mask, **corr), R),
            _C._time_correct(train, rollout, mask, "token", 2.0, "token_k1", "0.9_1.1", repeat=R),
            best(lambda: torch_correct(train, rollout, mask), R))
        row("12 exact quantiles of delta", best(lambda: logratio.quantiles(train, rollout, mask, q=Q), R),
            _C._time_quantiles(train, rollout, mask, Q, "delta", repeat=R),
            best(lambda: torch_quantiles(train, rollout, mask), R),
            best(lambda: numpy_quantiles(train_np, rollout_np, mask_np), R))
    rows = list(rows.values())
    for r in rows:
        r["vs_torch"] = r["torch_ms"] / r["logratio_ms"]
        r["python_over_kernel"] = r["logratio_ms"] / r["cxx_kernel_ms"]
        if r["numpy_ms"] is not None:
            r["vs_numpy"] = r["numpy_ms"] / r["logratio_ms"]

    print(f"B=256 x T=4096 bf16, {tokens} masked-in tokens, SIMD level {logratio.simd_level()}, "
          f"torch {torch.__version__} float32 1 thread, numpy {np.__version__} float64, best of {R} x {args.rounds} rounds")
    print(f"{'computation':44s} {'logratio':>9s} {'C++ kernel':>10s} {'py/kernel':>9s} {'torch':>9s} "
          f"{'x torch':>8s} {'numpy':>9s} {'x numpy':>8s}")
    for r in rows:
        npy = f"{r['numpy_ms']:8.2f}m {r['vs_numpy']:7.1f}x" if r["numpy_ms"] is not None else ""
        print(f"{r['name']:44s} {r['logratio_ms']:8.2f}m {r['cxx_kernel_ms']:9.2f}m {r['python_over_kernel']:9.2f} "
              f"{r['torch_ms']:8.2f}m {r['vs_torch']:7.1f}x {npy}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tokens": tokens, "simd_level": logratio.simd_level(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
