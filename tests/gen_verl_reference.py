#!/usr/bin/python3
"""Reference outputs of verl's own rollout correction on the fixtures.

Runs verl's `compute_rollout_correction_and_rejection_mask`
(verl/trainer/ppo/rollout_corr_helper.py) -- verl's code, read from a verl git
repository at a fixed commit, not a re-implementation -- on
tests/data/<size>/padded.safetensors (float32 values widened to float64) and
writes, per option set, tests/data/<size>/verl/<config>/:

  args.json              the `logratio correct` arguments and verl's keyword arguments
  metrics.json           verl's metrics (its key names, "rollout_corr/" prefix)
  response_mask.npy      verl's modified response mask, uint8 [B, T]
  rollout_is_weights.npy verl's IS weights rounded to float32 [B, T] (with IS only)

Two verl commits are used:
  b178a3cd (the fixtures' commit): rollout_rs options token_k*, seq_sum_k*, ... .
  7eb030e9 (the parent of verl PR #4511, which removed them): the older
           rollout_rs level names token / sequence / geometric with
           rollout_rs_threshold_lower, and rollout_token_veto_threshold.
verl's package imports (ray, transformers, tensordict, ...) are replaced by
stubs: its masked_sum / masked_mean are taken from verl's own
verl/utils/torch_functional.py at the same commit; DataProto is a holder of
the weights tensor; the config classes are only type annotations there.

Needs Debian's python3-torch (1.13) and numpy; run with Debian's interpreter:
  /usr/bin/python3 tests/gen_verl_reference.py --verl-git /path/to/verl/.git [--check]
--check regenerates into a temporary directory and compares with the
committed files (the configs that existed before this script reproduce too).

--bench SIZES times verl's helper against logratio.verl (needs logratio on
PYTHONPATH) on B x T inputs, e.g. --bench 64x1024,256x4096, and the host copy
a CUDA input costs on the host side (a clone of the inputs and outputs).

--api writes tests/data/verl_api/ instead: verl b178a3cd's public helpers
(every function of rollout_corr_helper.py but the batch/config ones) on
torch.randn "log-probs" -- positive values, as verl's own unit tests draw --
in float32, float64 and bfloat16, the inputs in inputs.npz, verl's arrays in
expected.npz (bf16 widened to float32) and its metrics and dtypes in
expected.json. python/tests/test_verl_api.py compares logratio.verl with them.
"""
import argparse
import ast
import json
import os
import struct
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
NEW = "b178a3cd"  # the fixtures' verl commit
OLD = "7eb030e9e593c4dc4b3baf63a92a10769b492053"  # parent of verl PR #4511 (veto, rs level names)
# verl PR #3915: verl/trainer/ppo/mismatch_helper.py had a geometric IS level
# (exp of the sequence's mean log-ratio, truncated at C), named "mismatch/..."
GEO = "4424616d7dfe03cc564866dc5e99dfaba1daba2e"

# name: (verl commit, verl kwargs, logratio correct arguments)
CONFIGS = {
    # b178a3cd: the remaining divergence options
    "rs_token_k2": (NEW, {"rollout_rs": "token_k2", "rollout_rs_threshold": "0.002"},
                    ["--rs", "token_k2", "--rs-threshold", "0.002"]),
    "rs_seq_sum_k2": (NEW, {"rollout_rs": "seq_sum_k2", "rollout_rs_threshold": "0.045"},
                      ["--rs", "seq_sum_k2", "--rs-threshold", "0.045"]),
    "rs_seq_sum_k3": (NEW, {"rollout_rs": "seq_sum_k3", "rollout_rs_threshold": "0.2"},
                      ["--rs", "seq_sum_k3", "--rs-threshold", "0.2"]),
    "is_token_rs_seq_sum_k3_bn": (NEW, {"rollout_is": "token", "rollout_is_threshold": 1.05,
                                        "rollout_is_batch_normalize": True,
                                        "rollout_rs": "seq_sum_k3", "rollout_rs_threshold": "0.04"},
                                  ["--is", "token", "--is-threshold", "1.05", "--batch-normalize",
                                   "--rs", "seq_sum_k3", "--rs-threshold", "0.04"]),
    # 7eb030e9: veto and the older level names (aliases)
    # 4424616d7: geometric IS (truncate mode); its metric names mapped to the
    # later ones: "mismatch/mismatch_<k>" -> "rollout_corr/<k>", "mismatch/<k>" -> "rollout_corr/<k>"
    "old_is_geometric": (GEO, {"rollout_is_level": "geometric", "rollout_is_mode": "truncate",
                               "rollout_is_threshold": 1.003},
                         ["--is", "geometric", "--is-threshold", "1.003"]),
    "old_veto": (OLD, {"rollout_is": "token", "rollout_is_threshold": 2.0, "rollout_token_veto_threshold": 0.85},
                 ["--is", "token", "--is-threshold", "2", "--veto", "0.85"]),
    "old_alias_token": (OLD, {"rollout_rs": "token", "rollout_rs_threshold": 1.05},
                        ["--rs", "token", "--rs-threshold", "1.05"]),
    "old_alias_token_lower": (OLD, {"rollout_rs": "token", "rollout_rs_threshold": 1.1,
                                    "rollout_rs_threshold_lower": 0.97},
                              ["--rs", "token", "--rs-threshold", "1.1", "--rs-threshold-lower", "0.97"]),
    "old_alias_sequence": (OLD, {"rollout_rs": "sequence", "rollout_rs_threshold": 1.2,
                                 "rollout_rs_threshold_lower": 0.9},
                           ["--rs", "sequence", "--rs-threshold", "1.2", "--rs-threshold-lower", "0.9"]),
    "old_alias_geometric_veto": (OLD, {"rollout_is": "sequence", "rollout_is_threshold": 1.5,
                                       "rollout_rs": "geometric", "rollout_rs_threshold": 1.01,
                                       "rollout_token_veto_threshold": 0.8},
                                 ["--is", "sequence", "--is-threshold", "1.5", "--rs", "geometric",
                                  "--rs-threshold", "1.01", "--veto", "0.8"]),
}


def git_show(git_dir, commit, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def function_sources(source, names):
    """The source text of the named top-level functions of a module."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            out.append("\n".join(lines[node.lineno - 1:node.end_lineno]))
    missing = set(names) - {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if missing:
        raise SystemExit(f"verl's torch_functional.py lacks {sorted(missing)}")
    return "\n\n".join(out)


def load_verl_helper(git_dir, commit, path="verl/trainer/ppo/rollout_corr_helper.py"):
    """verl's rollout correction module at `commit`, over stubbed imports."""
    tf = types.ModuleType("verl.utils.torch_functional")
    tf.__dict__["torch"] = torch
    src = function_sources(git_show(git_dir, commit, "verl/utils/torch_functional.py"), ["masked_sum", "masked_mean"])
    # The one change to verl's code: masked_mean divides by the count, not by
    # count + 1e-8 (logratio's documented difference, a relative 1e-8 term that
    # otherwise turns exact zeros and ones into 2e-8 and 1 - 6e-11). The
    # fixtures' first configs were made so; --check shows they reproduce.
    if "mask.sum(axis=axis) + 1e-8" not in src:
        raise SystemExit("verl's masked_mean changed: review the epsilon patch")
    src = src.replace("mask.sum(axis=axis) + 1e-8", "mask.sum(axis=axis)")
    exec(compile("from typing import Optional\n" + src, f"verl@{commit}/verl/utils/torch_functional.py", "exec"),
         tf.__dict__)

    class DataProto:  # holds the weights; verl's class needs tensordict
        def __init__(self, tensors):
            self.batch = tensors

        @classmethod
        def from_dict(cls, tensors):
            return cls(dict(tensors))

    stubs = {
        "verl": types.ModuleType("verl"),
        "verl.utils": types.ModuleType("verl.utils"),
        "verl.utils.torch_functional": tf,
        "verl.protocol": types.ModuleType("verl.protocol"),
        "verl.trainer": types.ModuleType("verl.trainer"),
        "verl.trainer.config": types.ModuleType("verl.trainer.config"),
        "verl.trainer.config.algorithm": types.ModuleType("verl.trainer.config.algorithm"),
        "verl.workers": types.ModuleType("verl.workers"),
        "verl.workers.config": types.ModuleType("verl.workers.config"),
        "verl.workers.config.actor": types.ModuleType("verl.workers.config.actor"),
    }
    stubs["verl.utils"].torch_functional = tf
    stubs["verl.protocol"].DataProto = DataProto
    stubs["verl.trainer.config.algorithm"].RolloutCorrectionConfig = type("RolloutCorrectionConfig", (), {})
    stubs["verl.workers.config.actor"].PolicyLossConfig = type("PolicyLossConfig", (), {})
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        mod = types.ModuleType(f"rollout_corr_helper_{commit[:8]}")
        src = git_show(git_dir, commit, path)
        exec(compile(src, f"verl@{commit}/{path}", "exec"), mod.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    types_ = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "BOOL": np.bool_, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(blob[base + b:base + e], dtype=types_[info["dtype"]]).reshape(info["shape"])
    return out


def run_config(helpers, fixture, kwargs, commit):
    t = read_safetensors(fixture)
    old = torch.from_numpy(t["train_logprobs"].astype(np.float64))
    rollout = torch.from_numpy(t["rollout_logprobs"].astype(np.float64))
    mask = torch.from_numpy(t["mask"].copy())  # uint8, as stored
    if commit == GEO:
        weights, new_mask, metrics = helpers[commit].compute_rollout_importance_weights(
            old_log_prob=old, rollout_log_prob=rollout, response_mask=mask, **kwargs)
        metrics = {"rollout_corr/" + k[len("mismatch/"):].replace("mismatch_", "", 1): v for k, v in metrics.items()}
    else:
        weights, new_mask, metrics = helpers[commit].compute_rollout_correction_and_rejection_mask(
            old_log_prob=old, rollout_log_prob=rollout, response_mask=mask, **kwargs)
    w = None if weights is None else weights.batch["rollout_is_weights"].numpy().astype(np.float32)
    m = new_mask.numpy().astype(np.uint8)
    return w, m, {k: float(v) for k, v in metrics.items()}  # (0-d tensors or floats)


# verl metrics the tests do not compare, with the reason (args.json
# "metrics_not_compared"); every other key of metrics.json is compared.
ALIAS_WHY = ("verl before #4511 also summarised the clamped ratio of the level-name options "
             "(mean, extremes, std, ESS, per-sequence values, fractions outside the band); "
             "logratio reports their masked fractions only")
VETO_WHY = "verl before #4511 printed the veto metrics as 0 without a veto; logratio reports them only with --veto"
GEO_SKIP = {
    "rollout_is_ratio_fraction_high": "verl 4424616d7 weights the geometric level's fractions by token; "
                                      "logratio by sequence, as later verl does for sequence-level weights",
    "rollout_is_ratio_fraction_low": "as rollout_is_ratio_fraction_high",
    "rollout_is_veto_fraction": "logratio reports the veto metrics only with --veto",
    "rollout_is_catastrophic_token_fraction": "logratio reports the veto metrics only with --veto",
}


def write_config(dirname, name, commit, kwargs, args, w, m, metrics):
    os.makedirs(dirname, exist_ok=True)
    j = {"logratio_correct_args": args, "verl_kwargs": kwargs, "verl_commit": commit}
    skip = {}
    if kwargs.get("rollout_rs") in ("token", "sequence", "geometric"):
        skip.update({k[len("rollout_corr/"):]: ALIAS_WHY for k in metrics
                     if k.startswith("rollout_corr/rollout_rs_") and not k.endswith("masked_fraction")})
    if commit == OLD and kwargs.get("rollout_token_veto_threshold") is None:
        skip.update({"rollout_is_veto_fraction": VETO_WHY, "rollout_is_catastrophic_token_fraction": VETO_WHY})
    if commit == GEO:
        skip.update(GEO_SKIP)
    skip = {k: v for k, v in skip.items() if "rollout_corr/" + k in metrics}
    if skip:
        j["metrics_not_compared"] = skip
    with open(os.path.join(dirname, "args.json"), "w") as f:
        json.dump(j, f, indent=1)
    with open(os.path.join(dirname, "metrics.json"), "w") as f:
        f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {repr(v)}" for k, v in metrics.items()) + "\n}")
    np.save(os.path.join(dirname, "response_mask.npy"), m)
    if w is not None:
        np.save(os.path.join(dirname, "rollout_is_weights.npy"), w)


def same(a_dir, b_dir):
    for fn in sorted(os.listdir(b_dir)):
        if fn.endswith(".npy"):
            x, y = np.load(os.path.join(a_dir, fn)), np.load(os.path.join(b_dir, fn))
            if x.dtype != y.dtype or x.shape != y.shape:
                return f"{fn}: dtype or shape differs"
            if not np.array_equal(x, y):
                ulps = np.abs(x.view(np.int32).astype(np.int64) - y.view(np.int32).astype(np.int64)).max()
                if x.dtype != np.float32 or ulps > 1:
                    return f"{fn} differs"
                print(f"  {fn}: {int((x != y).sum())} of {x.size} entries differ by one float32 ulp")
    with open(os.path.join(a_dir, "metrics.json")) as f:
        a = json.load(f)
    with open(os.path.join(b_dir, "metrics.json")) as f:
        b = json.load(f)
    if a.keys() != b.keys():
        return "metric keys differ"
    rel = max(abs(a[k] - b[k]) / max(abs(b[k]), 1e-300) for k in a)
    return f"metrics differ by up to {rel:.2g} relative" if rel > 1e-12 else None


API_CALLS = {  # name: (function, keyword arguments besides the tensors)
    "is_token": ("main", {"rollout_is": "token", "rollout_is_threshold": 2.0}),
    "is_sequence_bn": ("main", {"rollout_is": "sequence", "rollout_is_threshold": 5.0,
                                "rollout_is_batch_normalize": True}),
    "rs_chain_is_token": ("main", {"rollout_is": "token", "rollout_is_threshold": 1.5, "rollout_rs": "token_k1,seq_max_k3",
                                   "rollout_rs_threshold": "0.5_1.5,2.0"}),
    "rs_seq_mean_k1": ("main", {"rollout_rs": "seq_mean_k1", "rollout_rs_threshold": "0.8_1.25"}),
    "none": ("main", {}),
    "weights_token": ("weights", {"rollout_is": "token", "rollout_is_threshold": 2.0}),
    "weights_sequence": ("weights", {"rollout_is": "sequence", "rollout_is_threshold": 3.0}),
    "rejection_seq_sum_k2": ("rejection", {"rollout_rs": "seq_sum_k2", "rollout_rs_threshold": 2.5}),
    "rejection_token_k3": ("rejection", {"rollout_rs": "token_k3", "rollout_rs_threshold": 1.0}),
    "offpolicy": ("offpolicy", {}),
    "offpolicy_no_rollout": ("offpolicy_train_only", {}),
}
API_DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}


def api_inputs(seed=42, batch=6, length=12):
    """torch.randn log-probs as verl's tests draw them (positive ones too), padded tails, no empty row."""
    g = torch.Generator().manual_seed(seed)
    old = torch.randn(batch, length, generator=g)
    rollout = old + 0.3 * torch.randn(batch, length, generator=g)
    lengths = torch.randint(3, length + 1, (batch,), generator=g)
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(torch.int64)
    return old, rollout, mask


def run_api_call(helper, fn, kwargs, old, rollout, mask):
    """(arrays, metrics) of one verl call."""
    if fn == "main":
        proto, new_mask, metrics = helper.compute_rollout_correction_and_rejection_mask(
            old_log_prob=old, rollout_log_prob=rollout, response_mask=mask, **kwargs)
        arrays = {"response_mask": new_mask}
        if proto is not None:
            arrays["rollout_is_weights"] = proto.batch["rollout_is_weights"]
    elif fn == "weights":
        w, metrics = helper.compute_rollout_correction_weights(log_ratio=old - rollout, response_mask=mask, **kwargs)
        arrays = {"rollout_is_weights": w}
    elif fn == "rejection":
        new_mask, metrics = helper.compute_rollout_rejection_mask(log_ratio=old - rollout, response_mask=mask,
                                                                  **kwargs)
        arrays = {"response_mask": new_mask}
    else:
        metrics = helper.compute_offpolicy_metrics(
            old_log_prob=old, rollout_log_prob=None if fn == "offpolicy_train_only" else rollout,
            response_mask=mask)
        arrays = {}
    return arrays, {k: float(v) for k, v in metrics.items()}


def write_api_reference(git_dir):
    helper = load_verl_helper(git_dir, NEW)
    old, rollout, mask = api_inputs()
    out_dir = os.path.join(DATA, "verl_api")
    os.makedirs(out_dir, exist_ok=True)
    np.savez(os.path.join(out_dir, "inputs.npz"), old=old.numpy(), rollout=rollout.numpy(), mask=mask.numpy())
    arrays, meta = {}, {"verl_commit": NEW, "inputs": "api_inputs(seed=42, batch=6, length=12)", "calls": {}}
    for dname, dtype in API_DTYPES.items():
        for name, (fn, kwargs) in API_CALLS.items():
            got, metrics = run_api_call(helper, fn, kwargs, old.to(dtype), rollout.to(dtype), mask)
            key = f"{dname}/{name}"
            meta["calls"][key] = {"function": fn, "kwargs": kwargs, "metrics": metrics,
                                  "dtypes": {k: str(v.dtype) for k, v in got.items()}}
            for k, v in got.items():
                arrays[f"{key}/{k}"] = v.to(torch.float32 if v.dtype == torch.bfloat16 else v.dtype).numpy()
    np.savez(os.path.join(out_dir, "expected.npz"), **arrays)
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"wrote {out_dir}: {len(meta['calls'])} calls")


def _best_of(fn, repeat=3):
    import time
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench(git_dir, sizes):
    """Seconds per call, verl vs logratio.verl, valid and positive-valued log-probs, and the copy cost."""
    import logratio.verl as lv
    helper = load_verl_helper(git_dir, NEW)
    kw = {"rollout_is": "token", "rollout_is_threshold": 2.0, "rollout_rs": "token_k1", "rollout_rs_threshold": "0.5_2.0"}
    print("B x T | input | verl s | logratio.verl s | speed-up | host copy s")
    for size in sizes.split(","):
        b, t = (int(x) for x in size.split("x"))
        g = torch.Generator().manual_seed(0)
        old = -torch.rand(b, t, generator=g) * 4
        rollout = (old + 0.02 * torch.randn(b, t, generator=g)).clamp(max=0)
        mask = torch.ones(b, t, dtype=torch.int64)
        for label, o, r in (("valid", old, rollout), ("randn (positive)", old + 2, rollout + 2),
                            ("bf16", old.bfloat16(), rollout.bfloat16())):
            tv = _best_of(lambda: helper.compute_rollout_correction_and_rejection_mask(o, r, mask, **kw))
            tl = _best_of(lambda: lv.compute_rollout_correction_and_rejection_mask(o, r, mask, **kw))
            # what a CUDA input adds, host side: the inputs copied in, weights and mask copied out
            tc = _best_of(lambda: [x.clone() for x in (o, r, mask, o.float(), mask)])
            print(f"{b} x {t} | {label} | {tv:.4f} | {tl:.4f} | {tv / tl:.1f}x | {tc:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verl-git", required=True, help="a verl git directory holding both commits")
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary directory and compare")
    ap.add_argument("--api", action="store_true", help="write tests/data/verl_api (the helpers' public surface)")
    ap.add_argument("--bench", metavar="SIZES", help="time verl vs logratio.verl on BxT sizes (comma-separated)")
    a = ap.parse_args()
    if a.bench:
        bench(a.verl_git, a.bench)
        return
    if a.api:
        write_api_reference(a.verl_git)
        return
    helpers = {c: load_verl_helper(a.verl_git, c) for c in (NEW, OLD)}
    helpers[GEO] = load_verl_helper(a.verl_git, GEO, "verl/trainer/ppo/mismatch_helper.py")
    out_root = tempfile.mkdtemp() if a.check else DATA
    failures = 0
    for size in ("small", "medium"):
        fixture = os.path.join(DATA, size, "padded.safetensors")
        todo = dict(CONFIGS)
        if a.check:  # the configs made before this script too (verl b178a3cd)
            for name in os.listdir(os.path.join(DATA, size, "verl")):
                if name not in todo:
                    with open(os.path.join(DATA, size, "verl", name, "args.json")) as f:
                        j = json.load(f)
                    todo[name] = (NEW, j["verl_kwargs"], j["logratio_correct_args"])
        for name, (commit, kwargs, args) in sorted(todo.items()):
            w, m, metrics = run_config(helpers, fixture, kwargs, commit)
            d = os.path.join(out_root, size, "verl", name)
            write_config(d, name, commit, kwargs, args, w, m, metrics)
            if a.check:
                if not os.path.isdir(os.path.join(DATA, size, "verl", name)):
                    print(f"{size}/{name}: not committed yet")
                    failures += 1
                    continue
                why = same(d, os.path.join(DATA, size, "verl", name))
                failures += why is not None
                print(f"{size}/{name}: {'reproduced' if why is None else 'DIFFERS: ' + why}")
            else:
                print(f"wrote {d}: {int(m.sum())} tokens kept, {len(metrics)} metrics")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
