"""Calling logratio from a Python trainer: numpy arrays (or torch tensors via
.numpy() / .view(torch.int16).numpy() for bf16) go in without a copy.

    PYTHONPATH=build/release/examples/python/module /usr/bin/python3 examples/python/example.py
"""
import numpy as np
import logratio

rng = np.random.default_rng(0)
B, T = 8, 64
rollout = -np.abs(rng.normal(size=(B, T))).astype(np.float32)          # l_E, recorded by the engine
train = np.minimum(rollout + 0.01 * rng.normal(size=(B, T)), 0).astype(np.float32)  # l_T, recomputed
mask = np.arange(T)[None, :] < rng.integers(1, T + 1, size=B)[:, None]  # response tokens

p = logratio.panel(train, rollout, mask)                                # dict with SPEC.md's keys
print(f"mean|d| {p['delta_abs_mean']:.4g}  kl_k3 {p['kl_k3']:.3g}  abs_delta_q0.999 {p['abs_delta_q0.999']:.3g}")

w, keep, m = logratio.correct(train, rollout, mask, is_level="token", is_threshold=2.0,
                              rs="token_k1", rs_threshold="0.5_2.0", veto=1e-4)
print(f"TIS weights mean {m['rollout_is_mean']:.4f}, rejected {m['rollout_rs_masked_fraction']:.3f}")
loss_weights = w * keep                                                  # what the policy loss multiplies by

bf16 = lambda a: (a.view(np.uint32) >> 16).astype(np.uint16)            # bf16 bits (truncation, for the demo)
print("bf16 panel:", logratio.panel(bf16(train), bf16(rollout), mask)["delta_abs_mean"])
print("q:", logratio.quantiles(train, rollout, mask, q=[0.5, 0.99], of="abs_delta"))
