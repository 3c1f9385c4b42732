#!/usr/bin/python3
"""numpy side of the logits benchmark: the same per-row values as
bench_logits.cpp (entropies, KL both ways, TV, selected-token log-probs) from
float32 log_softmax, on 32 rows of V = 151,936. Prints logit pairs/s as JSON."""
import json
import time

import numpy as np

V, N = 151936, 32
rng = np.random.default_rng(7)
z = rng.normal(0, 3, (N, V)).astype(np.float32)
y = (z + rng.normal(0, 0.02, (N, V))).astype(np.float32)
tok = (np.arange(N) * 7919) % V


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def run():
    lp, lq = log_softmax(z), log_softmax(y)
    p, q = np.exp(lp), np.exp(lq)
    out = dict(train_entropy=-(p * lp).sum(1), rollout_entropy=-(q * lq).sum(1),
               kl_train_rollout=(p * (lp - lq)).sum(1), kl_rollout_train=(q * (lq - lp)).sum(1),
               tv=0.5 * np.abs(p - q).sum(1), train_logprob=lp[np.arange(N), tok],
               rollout_logprob=lq[np.arange(N), tok], argmax_match=z.argmax(1) == y.argmax(1))
    return out


best = float("inf")
for _ in range(5):
    t0 = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"numpy": np.__version__, "logit_pairs_per_s": N * V / best}))
