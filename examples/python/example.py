"""Calling logratio from a Python trainer: torch tensors (or numpy arrays) go in as
they are -- bf16, strided slices, int64 masks -- without a copy.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/example.py
    (or after: python3 -m venv --system-site-packages V && V/bin/pip install --no-build-isolation ./python)
"""
import numpy as np

import logratio

rng = np.random.default_rng(0)
B, T, P = 8, 64, 16
rollout = -np.abs(rng.normal(size=(B, P + T))).astype(np.float32)              # l_E over prompt + response
train = np.minimum(rollout + 0.01 * rng.normal(size=(B, P + T)), 0).astype(np.float32)  # l_T, recomputed
mask = (np.arange(T)[None, :] < rng.integers(1, T + 1, size=B)[:, None]).astype(np.int64)  # verl's int64 mask

try:
    import torch
    train_t, rollout_t, mask_t = torch.from_numpy(train).bfloat16(), torch.from_numpy(rollout).bfloat16(), \
        torch.from_numpy(mask)
except ImportError:  # numpy only: uint16 arrays are read as bf16 bits
    def bf16(a):
        return (a.view(np.uint32) >> 16).astype(np.uint16)
    train_t, rollout_t, mask_t = bf16(train), bf16(rollout), mask

resp_t, resp_r = train_t[:, -T:], rollout_t[:, -T:]          # the response slice, read in place
p = logratio.panel(resp_t, resp_r, mask_t)                    # dict with SPEC.md's keys
print(f"SIMD {logratio.simd_level()}: mean|d| {p['delta_abs_mean']:.4g}  kl_k3 {p['kl_k3']:.3g}  "
      f"max|d| at row {p['delta_abs_max_row']}, column {p['delta_abs_max_column']}")

w, keep, m = logratio.correct(resp_t, resp_r, mask_t, rollout_is="token", rollout_is_threshold=2.0,
                              rollout_rs="token_k1", rollout_rs_threshold="0.5_2.0", prefix="rollout_corr/")
print(f"TIS weights mean {m['rollout_corr/rollout_is_mean']:.4f}, "
      f"rejected {m['rollout_corr/rollout_rs_masked_fraction']:.3f}; mask dtype {keep.dtype}")
loss_weights = w * keep                                        # what the policy loss multiplies by
print("q:", logratio.quantiles(resp_t, resp_r, mask_t, q=[0.5, 0.99], of="abs_delta"))
print("example ok")
