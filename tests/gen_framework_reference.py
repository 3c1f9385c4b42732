#!/usr/bin/env python3
"""Reference outputs of slime's and TRL's own importance-sampling code on the
test fixtures, committed as data so the C++ tests need no torch.

  /usr/bin/python3 tests/gen_framework_reference.py --slime SLIME_SRC --trl TRL_SRC [--data tests/data]

SLIME_SRC / TRL_SRC are source trees at the pinned commits, e.g.
  git -C slime archive 624b824a slime examples/train_infer_mismatch_helper | tar -x -C SLIME_SRC
  git -C trl archive f2cd5771 trl | tar -x -C TRL_SRC
(THUDM/slime commit 624b824a, huggingface/trl commit f2cd5771; Debian 12
python3-torch 1.13, CPU).

slime: its functions are imported and called as they are:
  slime/backends/megatron_utils/loss.py       vanilla_tis_function, icepop_function
  slime/backends/megatron_utils/cp_utils.py   get_sum_of_sample_mean (the metric reducer)
  slime/observability/train_metric_utils.py   reduce_train_step_metrics (the division by the batch)
  examples/train_infer_mismatch_helper/mis.py compute_mis_weights_with_cp (the MIS helper)
with stub modules for Megatron (context-parallel size 1), torch.distributed's
all_reduce (one rank, a no-op, as slime's own tests do) and the slime.utils /
observability modules those files import but these functions do not use.
train_rollout_logprob_abs_diff is loss.py line 1140, inline in
policy_loss_function: that expression is copied below with its citation.

TRL: the importance-sampling ratio and the sampling/* metrics are inline in
GRPOTrainer._generate_and_score_completions (trl/trainer/grpo_trainer.py at
f2cd5771, lines 2579-2624 and 2779-2813); they are cut out below verbatim
(only dedented), run with `self` a namespace of the trainer's attributes and
one process (accelerator.gather is the identity). nanmin / nanmax are copied
from trl/trainer/utils.py (lines 960-987).

Also writes tests/data/names/{verl,slime,trl}.safetensors: the small fixture
under each framework's tensor names (read as they are by `logratio`).

Inputs: tests/data/{small,medium}/padded.safetensors, tests/data/rejection/
padded.safetensors (written here, make_rejection: 23 x 61, its own seed, made
so that every rejection fires; the REJECTION_* configurations run on it too)
and two heavier-tailed
variants written here, tests/data/heavy_x{5,20}/padded.safetensors: rows
0..15 of the medium fixture with both log-probs multiplied by 5 and 20 (so
delta is scaled by 5 and 20 and the log-probs stay <= 0). Each row of a padded
fixture is one slime sample of response length T with loss_mask = the row's
mask (one sample per rollout), and one TRL completion with completion_mask =
the row's mask. Everything runs in float32, as the frameworks do.

Outputs, per case and configuration, tests/data/<case>/{slime,trl}/<config>/:
  args.json     {"logratio_args": the `logratio correct` (or `panel`) arguments,
                 "slime_args" / "trl_kwargs": the framework's own settings}
  metrics.json  the framework's metrics under its own key names
  weights.npy   F32 [B, T]: slime's IS weights (the factor pg_loss is multiplied
                by) / TRL's importance_sampling_ratio ([B, T] or [B, 1])
  mask.npy      U8 [B, T]: slime's modified_response_masks (slime only; absent
                where it is the input's mask, unchanged)
"""
import argparse
import json
import math
import os
import struct
import sys
import types
from types import SimpleNamespace

import numpy as np
import torch

# ---------------------------------------------------------------- safetensors

_DT = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "BOOL": np.bool_, "I32": np.int32, "I64": np.int64}


def read_safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    out = {}
    for k, v in h.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        out[k] = np.frombuffer(b[8 + n + s:8 + n + e], dtype=_DT[v["dtype"]]).reshape(v["shape"]).copy()
    return out


def write_safetensors(path, tensors):
    names = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}
    header, blobs, off = {}, [], 0
    for k, a in tensors.items():
        a = np.ascontiguousarray(a)
        header[k] = {"dtype": names[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make_heavy(data, k):
    d = read_safetensors(os.path.join(data, "medium/padded.safetensors"))
    rows = slice(0, 16)
    out = {
        "train_logprobs": (d["train_logprobs"][rows] * np.float32(k)).astype(np.float32),
        "rollout_logprobs": (d["rollout_logprobs"][rows] * np.float32(k)).astype(np.float32),
        "mask": d["mask"][rows].astype(np.uint8),
    }
    write_safetensors(os.path.join(data, f"heavy_x{k}/padded.safetensors"), out)


def make_rejection(data, seed=20261206, rows=23, cols=61):
    """tests/data/rejection/padded.safetensors: a batch built to make every
    rejection fire (other seed and size than the fixtures): heavy-tailed
    delta (Student t, 3 dof, scale 0.08), a few catastrophic tokens (delta
    near -12, below log(1e-4)), ragged masks with holes (multi-turn tool
    tokens), two all-masked rows; log-probs <= 0."""
    g = np.random.default_rng(seed)
    rollout = -g.exponential(1.5, size=(rows, cols))
    delta = 0.08 * g.standard_t(3, size=(rows, cols))
    cat = g.random((rows, cols)) < 0.004
    delta[cat] = -12.0 + g.normal(0, 0.5, cat.sum())
    train = np.minimum(rollout + delta, 0.0)
    mask = np.zeros((rows, cols), dtype=np.uint8)
    for i in range(rows):
        n = int(g.integers(1, cols + 1))
        mask[i, :n] = 1
        holes = g.random(cols) < 0.1
        mask[i, holes] = 0
    mask[3] = 0
    mask[rows - 2] = 0
    write_safetensors(os.path.join(data, "rejection/padded.safetensors"),
                      {"train_logprobs": train.astype(np.float32), "rollout_logprobs": rollout.astype(np.float32),
                       "mask": mask})
    # the same with a float mask holding 0.5 at row 1, column 2: an error naming the place
    half = mask.astype(np.float32)
    half[1, 2] = 0.5
    write_safetensors(os.path.join(data, "rejection/mask_half.safetensors"),
                      {"train_logprobs": train.astype(np.float32), "rollout_logprobs": rollout.astype(np.float32),
                       "mask": half})


def make_named(data):
    """The small fixture under each framework's tensor names (tests/data/names/)."""
    d = read_safetensors(os.path.join(data, "small/padded.safetensors"))
    names = {"verl": ("old_log_probs", "rollout_log_probs", "response_mask"),
             "slime": ("log_probs", "rollout_log_probs", "loss_mask"),
             "trl": ("old_per_token_logps", "sampling_per_token_logps", "completion_mask")}
    for fw, (t, r, m) in names.items():
        write_safetensors(os.path.join(data, f"names/{fw}.safetensors"),
                          {t: d["train_logprobs"], r: d["rollout_logprobs"], m: d["mask"].astype(np.uint8)})


def save_config(dirpath, args, metrics, weights=None, mask=None):
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, "args.json"), "w") as f:
        json.dump(args, f, indent=1)
        f.write("\n")
    with open(os.path.join(dirpath, "metrics.json"), "w") as f:
        json.dump({k: float(v) for k, v in metrics.items()}, f, indent=1)
        f.write("\n")
    if weights is not None:
        np.save(os.path.join(dirpath, "weights.npy"), np.ascontiguousarray(weights, dtype=np.float32))
    if mask is not None:  # only where it differs from the input's mask
        np.save(os.path.join(dirpath, "mask.npy"), np.ascontiguousarray(mask, dtype=np.uint8))


# ---------------------------------------------------------------------- slime


def import_slime(src):
    """slime's modules with stubs for what they import but these functions do not use."""
    sys.path.insert(0, src)
    sys.path.insert(0, os.path.join(src, "examples/train_infer_mismatch_helper"))

    class mpu:  # Megatron's parallel state: one rank, no context parallelism
        get_context_parallel_world_size = staticmethod(lambda: 1)
        get_context_parallel_rank = staticmethod(lambda: 0)
        get_context_parallel_group = staticmethod(lambda: None)
        get_data_parallel_world_size = staticmethod(lambda with_context_parallel=False: 1)

    def stub(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def unused(*a, **k):
        raise RuntimeError("stub: not used by the reference")

    stub("megatron", core=stub("megatron.core", mpu=mpu))
    stub("slime.utils.distributed_utils", distributed_masked_whiten=unused)
    stub("slime.utils.misc", load_function=unused)
    stub("slime.utils.ppo_utils", **{n: unused for n in (
        "calculate_log_probs_and_entropy", "compute_approx_kl", "compute_cispo_loss", "compute_gspo_kl",
        "compute_opsm_mask", "compute_policy_loss", "get_advantages_and_returns_batch", "get_grpo_returns",
        "get_reinforce_plus_plus_baseline_advantages", "get_reinforce_plus_plus_returns")})
    stub("slime.utils.types", RolloutBatch=dict)
    stub("slime.utils.flops_utils", calculate_fwd_flops=unused)
    stub("slime.observability.logging_utils")
    stub("slime.observability.metric_utils", compute_pass_rate=unused, compute_rollout_step=unused)
    stub("slime.observability.timer", Timer=unused)
    # slime/backends/megatron_utils/__init__.py sets up accelerators: skip it.
    import importlib.util

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, os.path.join(src, path))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    stub("slime.backends")
    stub("slime.backends.megatron_utils", __path__=[os.path.join(src, "slime/backends/megatron_utils")])
    stub("slime.observability", __path__=[os.path.join(src, "slime/observability")])
    cp = load("slime.backends.megatron_utils.cp_utils", "slime/backends/megatron_utils/cp_utils.py")
    loss = load("slime.backends.megatron_utils.loss", "slime/backends/megatron_utils/loss.py")
    tmu = load("slime.observability.train_metric_utils", "slime/observability/train_metric_utils.py")
    mis = load("mis", "examples/train_infer_mismatch_helper/mis.py")
    return SimpleNamespace(cp=cp, loss=loss, tmu=tmu, mis=mis)


SLIME_CONFIGS = {
    # name: (logratio args, slime args)
    "tis": (["--mode", "slime:tis", "--tis-clip", "2", "--tis-clip-low", "0"],
            dict(tis="vanilla", tis_clip=2.0, tis_clip_low=0.0)),
    "tis_band": (["--mode", "slime:tis", "--tis-clip", "1.1", "--tis-clip-low", "0.9"],
                 dict(tis="vanilla", tis_clip=1.1, tis_clip_low=0.9)),
    "tis_band_per_token": (["--mode", "slime:tis", "--tis-clip", "1.1", "--tis-clip-low", "0.9",
                            "--calculate-per-token-loss"],
                           dict(tis="vanilla", tis_clip=1.1, tis_clip_low=0.9, calculate_per_token_loss=True)),
    "icepop": (["--mode", "slime:icepop", "--tis-clip", "1.1", "--tis-clip-low", "0.9"],
               dict(tis="icepop", tis_clip=1.1, tis_clip_low=0.9)),
    "icepop_wide": (["--mode", "slime:icepop", "--tis-clip", "2", "--tis-clip-low", "0.5"],
                    dict(tis="icepop", tis_clip=2.0, tis_clip_low=0.5)),
}


def _mis(mode, level, upper, lower=None, rs=None, veto=None, bn=False, per_token=False):
    la = ["--mode", f"slime:mis-{mode}-{level}", "--tis-upper-bound", repr(upper)]
    sa = dict(tis="mis", use_tis=True, tis_mode=mode, tis_level=level, tis_upper_bound=upper, tis_lower_bound=lower,
              use_rs=rs is not None, rs_level=level, rs_lower_bound=None, rs_upper_bound=None,
              rs_veto_threshold=veto, tis_batch_normalize=bn, calculate_per_token_loss=per_token)
    if lower is not None:
        la += ["--tis-lower-bound", repr(lower)]
    if rs is not None:
        la += ["--use-rs", "--rs-level", rs[0]]
        sa["rs_level"] = rs[0]
        if rs[1] is not None:
            la += ["--rs-lower-bound", repr(rs[1]), "--rs-upper-bound", repr(rs[2])]
            sa["rs_lower_bound"], sa["rs_upper_bound"] = rs[1], rs[2]
        if veto is not None:
            la += ["--rs-veto-threshold", repr(veto)]
    if bn:
        la += ["--tis-batch-normalize"]
    if per_token:
        la += ["--calculate-per-token-loss"]
    return la, sa


SLIME_CONFIGS["mismatch_metrics"] = (  # --get-mismatch-metrics with the MIS helper, use_tis off
    ["--flavour", "slime"],
    dict(tis="mis", use_tis=False, tis_mode="truncate", tis_level="token", tis_upper_bound=2.0,
         tis_lower_bound=None, use_rs=False, rs_level="token", rs_lower_bound=None, rs_upper_bound=None,
         rs_veto_threshold=None, tis_batch_normalize=False, calculate_per_token_loss=False))

SLIME_CONFIGS.update({
    "mis_truncate_token": _mis("truncate", "token", 1.1, rs=("token", None, None), veto=1e-4, bn=True),
    "mis_truncate_sequence": _mis("truncate", "sequence", 2.0, rs=("geometric", 0.99, 1.01), bn=True),
    "mis_truncate_geometric": _mis("truncate", "geometric", 1.01),
    "mis_clip_token": _mis("clip", "token", 1.1, 0.95, rs=("token", None, None), veto=1e-4),
    "mis_clip_token_per_token": _mis("clip", "token", 1.1, 0.95, rs=("token", None, None), veto=1e-4,
                                     per_token=True),
    "mis_clip_sequence": _mis("clip", "sequence", 1.5, 0.7, bn=True),
    "mis_clip_geometric": _mis("clip", "geometric", 1.01, 0.99, rs=("sequence", 0.5, 2.0), veto=1e-4),
    "mis_mask_token": _mis("mask", "token", 1.1, rs=("token", None, None), veto=1e-4, bn=True),
    "mis_mask_sequence": _mis("mask", "sequence", 1.5, 0.7),
    "mis_mask_geometric": _mis("mask", "geometric", 1.01, 0.99, rs=("token", 0.8, 1.25), veto=1e-4),
})


# Every mode with a rejection (a mask change or zero weights), run on the
# rejection case only, beside the configurations above.
REJECTION_SLIME = {
    "icepop_band": (["--mode", "slime:icepop", "--tis-clip", "1.05", "--tis-clip-low", "0.95"],
                    dict(tis="icepop", tis_clip=1.05, tis_clip_low=0.95)),
    "mis_mask_token_rs_per_token": _mis("mask", "token", 1.2, 0.8, rs=("token", 0.7, 1.4), veto=1e-4,
                                        per_token=True),
    "mis_mask_sequence_rs": _mis("mask", "sequence", 3.0, 0.3, rs=("geometric", 0.95, 1.05), veto=1e-3),
    "mis_mask_geometric_rs": _mis("mask", "geometric", 1.02, 0.98, rs=("sequence", 0.2, 5.0)),
    "mis_truncate_token_rs_bn": _mis("truncate", "token", 1.3, rs=("token", 0.9, 1.1), veto=1e-4, bn=True),
    "mis_truncate_geometric_rs": _mis("truncate", "geometric", 1.5, rs=("token", 0.8, 1.25)),
    "mis_clip_sequence_rs_veto": _mis("clip", "sequence", 2.0, 0.5, rs=("sequence", 0.25, 4.0), veto=1e-4,
                                      bn=True),
    "mis_clip_token_veto_only": _mis("clip", "token", 5.0, 0.2, rs=("token", 1e-6, 1e6), veto=1e-4),
}


def run_slime(S, d, sa):
    train, rollout, m = d["train_logprobs"], d["rollout_logprobs"], d["mask"]
    B, T = train.shape
    per_token = sa.get("calculate_per_token_loss", False)
    train_log_probs = [torch.from_numpy(train[i].astype(np.float32)) for i in range(B)]
    rollout_log_probs = [torch.from_numpy(rollout[i].astype(np.float32)) for i in range(B)]
    loss_masks = [torch.from_numpy(m[i].astype(np.int32)) for i in range(B)]
    total_lengths = [T] * B
    response_lengths = [T] * B
    # slime/ray/rollout.py 695-700: one sample per rollout, so each sample's
    # denominator is its own mask sum (float32, actor.py 264-269).
    rollout_mask_sums = torch.tensor([float(x.sum()) for x in loss_masks], dtype=torch.float32)
    pg_loss = torch.ones(B * T, dtype=torch.float32)
    kw = dict(pg_loss=pg_loss, train_log_probs=train_log_probs, rollout_log_probs=rollout_log_probs,
              loss_masks=loss_masks, total_lengths=total_lengths, response_lengths=response_lengths)
    args = SimpleNamespace(**sa)
    if sa["tis"] == "vanilla":
        out_loss, masks, metrics = S.loss.vanilla_tis_function(args, **kw)
    elif sa["tis"] == "icepop":
        out_loss, masks, metrics = S.loss.icepop_function(args, **kw)
    else:
        out_loss, masks, metrics = S.mis.compute_mis_weights_with_cp(args, **kw)
    # loss.py 1058-1059 and 1161-1163: metrics reduced with the pre-RS masks.
    reducer = S.cp.get_sum_of_sample_mean(total_lengths, response_lengths, loss_masks, rollout_mask_sums, per_token)
    # loss.py 1086-1092: the reducer rebuilt with the returned modified_response_masks
    # (rejected tokens leave the numerators, the denominators stay rollout_mask_sums);
    # it is the one line 1140 reduces train_rollout_logprob_abs_diff with.
    kept_reducer = S.cp.get_sum_of_sample_mean(total_lengths, response_lengths, masks, rollout_mask_sums, per_token)
    log = {}
    # loss.py 1137-1140 (use_rollout_logprobs off: old_log_probs = batch["log_probs"]):
    rollout_cat = torch.cat(rollout_log_probs, dim=0)
    old_cat = torch.cat(train_log_probs, dim=0)
    log["train_rollout_logprob_abs_diff"] = kept_reducer((old_cat - rollout_cat).abs())
    for k, v in metrics.items():
        log[k] = reducer(v)
    # loss.py 1317 and 1361-1381: values[0] = num_tokens (per-token) or 0.
    num_tokens = sum([torch.clamp_min(lm.sum(), 1) for lm in loss_masks])
    values = torch.tensor([num_tokens if per_token else 0] + list(log.values()))
    S.tmu.dist.all_reduce = lambda *a, **k: None  # one rank
    reduced = S.tmu.reduce_train_step_metrics([{"keys": list(log.keys()), "values": values}],
                                              calculate_per_token_loss=per_token, step_global_batch_size=B,
                                              cp_size=1, dp_with_cp_group=None)
    weights = (out_loss / pg_loss).reshape(B, T).numpy()
    mask = torch.stack([x.float() for x in masks]).numpy() if masks is not None else m
    mask = (mask != 0).astype(np.uint8)
    return reduced, weights, (None if np.array_equal(mask, (m != 0).astype(np.uint8)) else mask)


# ------------------------------------------------------------------------ TRL


def nanmin(tensor: torch.Tensor) -> torch.Tensor:  # trl/trainer/utils.py 960-972 at f2cd5771
    if torch.isnan(tensor).all():
        return torch.tensor(float("nan"), dtype=tensor.dtype, device=tensor.device)
    return torch.min(tensor[~torch.isnan(tensor)])


def nanmax(tensor: torch.Tensor) -> torch.Tensor:  # trl/trainer/utils.py 975-987 at f2cd5771
    if torch.isnan(tensor).all():
        return torch.tensor(float("nan"), dtype=tensor.dtype, device=tensor.device)
    return torch.max(tensor[~torch.isnan(tensor)])


def trl_importance_sampling(self, old_per_token_logps, sampling_per_token_logps, completion_mask, tool_mask=None,
                            device="cpu", mode="train"):
    # ---- trl/trainer/grpo_trainer.py lines 2579-2624 at f2cd5771, verbatim (dedented by 8) ----
    if self.use_vllm and self.vllm_importance_sampling_correction:
        mask = completion_mask if tool_mask is None else completion_mask * tool_mask
        per_token_logps_diff = (old_per_token_logps - sampling_per_token_logps) * mask

        sequence_level_is = self.vllm_importance_sampling_mode in ["sequence_mask", "sequence_truncate"]
        if sequence_level_is:
            per_sequence_logps_diff = per_token_logps_diff.sum(dim=-1, keepdim=True)
            logps_diff = per_sequence_logps_diff
        else:
            logps_diff = per_token_logps_diff

        vllm_importance_sampling_ratio = torch.exp(logps_diff)

        # vllm_importance_sampling_ratio.shape:
        #   token_* modes:     (B, T)  (per-token ratio)
        #   sequence_* modes:  (B, 1)  (per-sequence ratio)

        if self.vllm_importance_sampling_mode in ["sequence_truncate", "token_truncate"]:
            vllm_importance_sampling_ratio = torch.clamp(
                vllm_importance_sampling_ratio,
                min=self.vllm_importance_sampling_clip_min,
                max=self.vllm_importance_sampling_clip_max,
            )
        elif self.vllm_importance_sampling_mode in ["sequence_mask", "token_mask"]:
            min_val = (
                self.vllm_importance_sampling_clip_min
                if self.vllm_importance_sampling_clip_min is not None
                else -math.inf
            )
            max_val = (
                self.vllm_importance_sampling_clip_max
                if self.vllm_importance_sampling_clip_max is not None
                else math.inf
            )

            invalid_mis_mask = (vllm_importance_sampling_ratio < min_val) | (
                vllm_importance_sampling_ratio > max_val
            )
            vllm_importance_sampling_ratio = vllm_importance_sampling_ratio.masked_fill(
                invalid_mis_mask, value=0.0
            )
        else:
            raise ValueError(
                f"Unknown vLLM importance sampling level: {self.vllm_importance_sampling_mode}. Possible values are 'token_truncate', 'token_mask', 'sequence_truncate', and 'sequence_mask'."
            )

    # ---- trl/trainer/grpo_trainer.py lines 2779-2813 at f2cd5771, verbatim (dedented by 4) ----
    if self.use_vllm and self.vllm_importance_sampling_correction:
        delta = torch.abs(old_per_token_logps - sampling_per_token_logps)
        mask = completion_mask.bool() if tool_mask is None else (completion_mask * tool_mask).bool()
        delta = delta[mask]
        mean_delta = torch.mean(delta) if delta.numel() > 0 else torch.tensor(0.0, device=device)
        max_delta = torch.max(delta) if delta.numel() > 0 else torch.tensor(0.0, device=device)
        self._metrics[mode]["sampling/sampling_logp_difference/mean"].append(
            self.accelerator.gather(mean_delta).mean().item()
        )
        self._metrics[mode]["sampling/sampling_logp_difference/max"].append(
            self.accelerator.gather(max_delta).max().item()
        )
        if sequence_level_is:
            flat_is_ratio = vllm_importance_sampling_ratio.flatten()
        else:
            flat_is_ratio = vllm_importance_sampling_ratio[mask]

        min_importance_sampling_ratio = (
            torch.min(flat_is_ratio) if flat_is_ratio.numel() > 0 else torch.tensor(0.0, device=device)
        )
        mean_importance_sampling_ratio = (
            torch.mean(flat_is_ratio) if flat_is_ratio.numel() > 0 else torch.tensor(0.0, device=device)
        )
        max_importance_sampling_ratio = (
            torch.max(flat_is_ratio) if flat_is_ratio.numel() > 0 else torch.tensor(0.0, device=device)
        )
        self._metrics[mode]["sampling/importance_sampling_ratio/min"].append(
            nanmin(self.accelerator.gather(min_importance_sampling_ratio)).item()
        )
        self._metrics[mode]["sampling/importance_sampling_ratio/mean"].append(
            self.accelerator.gather(mean_importance_sampling_ratio).nanmean().item()
        )
        self._metrics[mode]["sampling/importance_sampling_ratio/max"].append(
            nanmax(self.accelerator.gather(max_importance_sampling_ratio)).item()
        )
    # ---- end of TRL's lines ----
    return vllm_importance_sampling_ratio


def _trl(mode, clip_max=3.0, clip_min=None):
    la = ["--mode", f"trl:{mode}"]
    if clip_max is not None:
        la += ["--clip-max", repr(clip_max)]
    if clip_min is not None:
        la += ["--clip-min", repr(clip_min)]
    return la, dict(vllm_importance_sampling_mode=mode, vllm_importance_sampling_clip_max=clip_max,
                    vllm_importance_sampling_clip_min=clip_min)


TRL_CONFIGS = {
    "token_truncate": _trl("token_truncate"),
    "token_truncate_band": _trl("token_truncate", 1.05, 0.95),
    "token_mask": _trl("token_mask"),
    "token_mask_band": _trl("token_mask", 1.1, 0.9),
    "sequence_truncate": _trl("sequence_truncate"),
    "sequence_truncate_band": _trl("sequence_truncate", 2.0, 0.5),
    "sequence_mask": _trl("sequence_mask"),
    "sequence_mask_band": _trl("sequence_mask", 1.25, 0.8),
}


REJECTION_TRL = {
    "token_mask_narrow": _trl("token_mask", 1.05, 0.95),
    "token_mask_wide": _trl("token_mask", 1.3, 0.9),
    "sequence_mask_narrow": _trl("sequence_mask", 1.5, 0.67),
    "sequence_mask_max_only": _trl("sequence_mask", 1.2, None),
    "token_truncate_narrow": _trl("token_truncate", 1.02, 0.98),
}


def run_trl(d, kw):
    from collections import defaultdict

    metrics = {"train": defaultdict(list)}
    self = SimpleNamespace(use_vllm=True, vllm_importance_sampling_correction=True, _metrics=metrics,
                           accelerator=SimpleNamespace(gather=lambda t: t), **kw)
    ratio = trl_importance_sampling(self, torch.from_numpy(d["train_logprobs"].astype(np.float32)),
                                    torch.from_numpy(d["rollout_logprobs"].astype(np.float32)),
                                    torch.from_numpy(d["mask"].astype(np.int64)))
    flat = {k: v[-1] for k, v in metrics["train"].items()}
    return flat, ratio.numpy()


# ----------------------------------------------------------------------- main


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--slime", required=True, help="slime source tree at 624b824a")
    p.add_argument("--trl", required=True, help="TRL source tree at f2cd5771 (only checked to exist)")
    p.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    a = p.parse_args()
    if not os.path.exists(os.path.join(a.trl, "trl/trainer/grpo_trainer.py")):
        sys.exit("--trl: no trl/trainer/grpo_trainer.py")
    S = import_slime(a.slime)
    for k in (5, 20):
        make_heavy(a.data, k)
    make_named(a.data)
    make_rejection(a.data)
    for case in ("small", "medium", "heavy_x5", "heavy_x20", "rejection"):
        d = read_safetensors(os.path.join(a.data, case, "padded.safetensors"))
        extra = case == "rejection"
        slime_configs = dict(SLIME_CONFIGS, **(REJECTION_SLIME if extra else {}))
        trl_configs = dict(TRL_CONFIGS, **(REJECTION_TRL if extra else {}))
        for name, (la, sa) in slime_configs.items():
            metrics, w, m = run_slime(S, d, sa)
            save_config(os.path.join(a.data, case, "slime", name),
                        {"logratio_args": la, "slime_args": sa}, metrics, w, m)
        for name, (la, kw) in trl_configs.items():
            metrics, w = run_trl(d, kw)
            save_config(os.path.join(a.data, case, "trl", name), {"logratio_args": la, "trl_kwargs": kw}, metrics, w)
        print(case, "done")


if __name__ == "__main__":
    main()
