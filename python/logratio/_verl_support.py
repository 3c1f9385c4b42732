"""Support for logratio.verl: verl's DataProto stand-in, host/device and dtype
handling, verl's semantics for positive "log-probs", and verl's two metric
helpers that take precomputed weights / statistics (compute_is_metrics,
compute_rs_metrics) written on torch.

Definitions follow verl/trainer/ppo/rollout_corr_helper.py at verl commit
b178a3cd56f58b2d502255daba591e92833930a7 (github.com/volcengine/verl); the
code here is logratio's own. Masked means divide by the token count (verl adds
1e-8 to the count: logratio's documented difference, a relative 1e-8).
"""
from typing import Any, Dict, Optional

SAFETY_BOUND = 20.0  # verl's clamp of log-ratios before exp (exp(±20))

# Metrics computed from the absolute log-probs (not from their difference):
# under a common shift of both inputs these move, every other metric stays.
ABSOLUTE_METRICS = ("training_ppl", "training_log_ppl", "rollout_ppl", "rollout_log_ppl")


class DataProto:
    """verl's DataProto stand-in, used when verl is not installed.

    Holds ``batch`` (tensors by name), ``non_tensor_batch`` and ``meta_info``
    like verl's class; ``from_dict`` and ``union`` as verl's trainer uses
    them with the rollout-correction helper.
    """

    def __init__(self, batch=None, non_tensor_batch=None, meta_info=None):
        self.batch = dict(batch or {})
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    @classmethod
    def from_dict(cls, tensors=None, non_tensors=None, meta_info=None):
        return cls(tensors, non_tensors, meta_info)

    def union(self, other):
        """Adds `other`'s entries (verl: an error when a shared key holds different values)."""
        for mine, theirs in ((self.batch, other.batch), (self.non_tensor_batch, other.non_tensor_batch),
                             (self.meta_info, other.meta_info)):
            for k, v in theirs.items():
                if k in mine and mine[k] is not v and not _same_values(mine[k], v):
                    raise ValueError(f"DataProto.union: key {k!r} holds different values in the two batches")
                mine[k] = v
        return self

    def __len__(self):
        for v in self.batch.values():
            return int(v.shape[0])
        return 0

    def __repr__(self):
        items = ", ".join(f"{k}: shape {tuple(v.shape)}, dtype {v.dtype}" for k, v in self.batch.items())
        return f"DataProto({items})"


RolloutWeights = DataProto  # the name of this stand-in before verl's full surface


def _same_values(a, b):
    try:
        return bool((a == b).all())
    except Exception:
        return False


_PROTO = []


def data_proto_class():
    """verl's DataProto when verl is importable, else the stand-in (looked up once)."""
    if not _PROTO:
        try:
            from verl.protocol import DataProto as cls  # type: ignore
        except Exception:  # verl absent (or failing to import): the stand-in
            cls = DataProto
        _PROTO.append(cls)
    return _PROTO[0]


def wrap_weights(weights):
    return data_proto_class().from_dict(tensors={"rollout_is_weights": weights})


# ---- host / device / dtype

def is_torch(x):
    return type(x).__module__.startswith("torch")


def on_host(x):
    """A CPU view of a torch tensor (detached; a copy only when it lives on another device)."""
    if x is None or not is_torch(x):
        return x
    x = x.detach()
    return x if x.device.type == "cpu" else x.to("cpu")


def device_of(x):
    return x.device if x is not None and is_torch(x) else None


def to_device(x, device):
    if x is None or device is None or device.type == "cpu":
        return x
    return x.to(device)


def weights_dtype(log_ratio_like, mask):
    """The dtype verl's weights have: exp(log-ratio) * mask, torch's promotion (float32 for numpy)."""
    if not is_torch(log_ratio_like):
        return None
    import torch
    dt = log_ratio_like.dtype if log_ratio_like.dtype.is_floating_point else torch.float32
    return dt if mask is None or not is_torch(mask) else torch.promote_types(dt, mask.dtype)


def as_verl_weights(w, dtype, device):
    """Kernel weights (float32, host) in verl's dtype and on the input's device; no copy when already so."""
    if w is None:
        return None
    if dtype is not None and w.dtype != dtype:
        w = w.to(dtype)
    return to_device(w, device)


def promoted_like(a, b):
    """A tensor standing for a - b's dtype (what verl's log_ratio has)."""
    if is_torch(a) and is_torch(b):
        import torch
        return a.new_empty(0, dtype=torch.promote_types(a.dtype, b.dtype))
    return a


def require_valid_token(mask, exc=ValueError):
    """verl's check: at least one valid token (ValueError, or AssertionError where verl asserts)."""
    if mask is None:
        return
    if not bool(mask.any()):
        msg = "response_mask must contain at least one valid token (1)."
        if exc is AssertionError:
            msg = "Expected at least one valid token in response_mask"
        raise exc(msg)


# ---- positive "log-probs": verl's arithmetic through logratio's kernels

def split_log_ratio(log_ratio):
    """(train, rollout), both <= 0, whose difference is exactly log_ratio: min(r, 0) and min(-r, 0)."""
    if is_torch(log_ratio):
        return log_ratio.clamp(max=0), (-log_ratio).clamp(max=0)
    import numpy as np
    return np.minimum(log_ratio, 0), np.minimum(-log_ratio, 0)


def shifted_down(old, rollout, mask):
    """old and rollout in float64 minus one constant c (their largest masked-in value): every
    masked-in value <= 0, each difference old - rollout exactly as before (float32 or float64
    inputs: the subtraction of c in double is exact)."""
    lib = _lib(old)
    o, r = _as_f64(old), _as_f64(rollout)
    keep = _bool_mask(mask, o)
    finite_max = [_masked_finite_max(x, keep, lib) for x in (o, r)]
    c = max(finite_max)
    return o - c, r - c


def absolute_metrics(old, rollout, mask):
    """training/rollout (log-)ppl from the unshifted log-probs, as the kernel defines them:
    per sequence the masked mean, then the mean over sequences with a valid token."""
    o = _as_f64(old)
    keep = _bool_mask(mask, o)
    lib = _lib(o)
    counts = keep.sum(-1)
    rows = counts > 0
    out = {}
    for name, x in (("training", o), ("rollout", None if rollout is None else _as_f64(rollout))):
        if x is None:
            continue
        seq_mean = (lib.where(keep, x, 0.0).sum(-1)[rows] / counts[rows])
        out[f"{name}_ppl"] = float(lib.exp(-seq_mean).mean())
        out[f"{name}_log_ppl"] = float((-seq_mean).mean())
    return out


def _lib(x):
    if is_torch(x):
        import torch
        return torch
    import numpy as np
    return np


def _as_f64(x):
    if is_torch(x):
        import torch
        return x.to(torch.float64)
    import numpy as np
    return np.asarray(x, dtype=np.float64)


def _bool_mask(mask, like):
    if mask is None:
        return (like == like) | (like != like)  # all True, of like's kind
    return mask.bool() if is_torch(mask) else mask.astype(bool)


def _masked_finite_max(x, keep, lib):
    """The largest finite masked-in value (0 without one); where(), not boolean indexing (8x faster)."""
    if (x.numel() if is_torch(x) else x.size) == 0:
        return 0.0
    best = float(lib.where(keep & lib.isfinite(x), x, -float("inf")).max())
    return best if best != -float("inf") else 0.0


# ---- verl's metric helpers over precomputed tensors (torch)

def _masked_mean(x, mask, axis=None):
    m = mask.to(x.dtype) if mask.dtype != x.dtype else mask
    if axis is None:
        return (x * m).sum() / m.sum()
    return (x * m).sum(axis) / m.sum(axis)


def compute_is_metrics(rollout_is_weights, log_ratio_for_metrics, response_mask, rollout_is: str,
                       rollout_is_threshold: float) -> Dict[str, float]:
    """verl's IS-weight summary over weights taken before truncation (verl's definitions)."""
    import torch
    require_valid_token(response_mask)
    w, keep = rollout_is_weights, response_mask.bool()
    upper, lower = float(rollout_is_threshold), 1.0 / float(rollout_is_threshold)
    out: Dict[str, float] = {"rollout_is_mean": _masked_mean(w, response_mask).item()}
    if rollout_is == "sequence":  # extremes and fractions from the (unclamped) sequence log-ratios
        lr = log_ratio_for_metrics
        out["rollout_is_max"] = torch.exp(lr.max().clamp(max=SAFETY_BOUND)).item()
        out["rollout_is_min"] = torch.exp(lr.min()).item()
        log_upper = torch.log(torch.tensor(upper, device=w.device))
        log_lower = torch.log(torch.tensor(lower, device=w.device))
        out["rollout_is_ratio_fraction_high"] = (lr > log_upper).float().mean().item()
        out["rollout_is_ratio_fraction_low"] = (lr < log_lower).float().mean().item()
    else:
        out["rollout_is_ratio_fraction_high"] = _masked_mean((w > upper).float(), response_mask).item()
        out["rollout_is_ratio_fraction_low"] = _masked_mean((w < lower).float(), response_mask).item()
        out["rollout_is_max"] = w.masked_fill(~keep, float("-inf")).max().item()
        out["rollout_is_min"] = w.masked_fill(~keep, float("inf")).min().item()
    banded = w.clamp(min=lower, max=upper)
    band_mean = _masked_mean(banded, response_mask)
    if response_mask.sum() > 1:
        var = _masked_mean(banded.square(), response_mask) - band_mean.square()
        out["rollout_is_std"] = var.clamp(min=0.0).sqrt().item()
    else:
        out["rollout_is_std"] = 0.0
    normalized = banded / (band_mean + 1e-8)
    out["rollout_is_eff_sample_size"] = 1.0 / _masked_mean(normalized.square(), response_mask).item()
    if w.dim() > 1:
        seq = _masked_mean(w, response_mask, axis=-1)
        out["rollout_is_seq_mean"] = seq.mean().item()
        out["rollout_is_seq_std"] = seq.std().item() if seq.numel() > 1 else 0.0
        out["rollout_is_seq_max"] = seq.max().item()
        out["rollout_is_seq_min"] = seq.min().item()
        out["rollout_is_seq_max_deviation"] = (seq - 1.0).abs().max().item()
        out["rollout_is_seq_fraction_high"] = (seq > upper).float().mean().item()
        out["rollout_is_seq_fraction_low"] = (seq < lower).float().mean().item()
    return out


def compute_rs_metrics(option_name: str, rs_statistic, response_mask, seq_valid_mask, *, level: str,
                       per_sequence_values: Optional[Any], rollout_rs_threshold: float,
                       rollout_rs_threshold_lower: float, apply_lower_threshold: bool) -> Dict[str, float]:
    """verl's summary of one rejection option's statistic (verl's definitions and names)."""
    require_valid_token(response_mask)
    p = f"rollout_rs_{option_name}"
    keep = response_mask.bool()
    seq = per_sequence_values if per_sequence_values is not None else _masked_mean(rs_statistic, response_mask, -1)
    if seq.dim() > 1:
        seq = seq.squeeze(-1)
    seq = seq[seq_valid_mask]
    upper, lower = rollout_rs_threshold, rollout_rs_threshold_lower
    by_seq = level == "sequence" and seq.numel() > 0
    out: Dict[str, float] = {f"{p}_mean": _masked_mean(rs_statistic, response_mask).item()}
    if by_seq:
        out[f"{p}_max"], out[f"{p}_min"] = seq.max().item(), seq.min().item()
        high = (seq > upper).float().mean().item()
        low = (seq < lower).float().mean().item() if apply_lower_threshold else 0.0
    else:
        out[f"{p}_max"] = rs_statistic.masked_fill(~keep, float("-inf")).max().item()
        out[f"{p}_min"] = rs_statistic.masked_fill(~keep, float("inf")).min().item()
        high = _masked_mean((rs_statistic > upper).float(), response_mask).item()
        low = _masked_mean((rs_statistic < lower).float(), response_mask).item() if apply_lower_threshold else 0.0
    out[f"{p}_fraction_high"], out[f"{p}_fraction_low"] = high, low
    if response_mask.sum() > 1:
        banded = rs_statistic.clamp(min=lower if apply_lower_threshold else 0.0, max=upper)
        var = _masked_mean(banded.square(), response_mask) - _masked_mean(banded, response_mask).square()
        out[f"{p}_std"] = var.clamp(min=0.0).sqrt().item()
    else:
        out[f"{p}_std"] = 0.0
    if seq.numel() > 0:
        out[f"{p}_seq_mean"] = seq.mean().item()
        out[f"{p}_seq_std"] = seq.std().item() if seq.numel() > 1 else 0.0
        out[f"{p}_seq_max"], out[f"{p}_seq_min"] = seq.max().item(), seq.min().item()
        out[f"{p}_seq_max_deviation"] = seq.abs().max().item()
        out[f"{p}_seq_fraction_high"] = (seq > upper).float().mean().item()
        if apply_lower_threshold:
            out[f"{p}_seq_fraction_low"] = (seq < lower).float().mean().item()
    else:
        for k in ("seq_mean", "seq_std", "seq_max", "seq_min", "seq_max_deviation", "seq_fraction_high",
                  "seq_fraction_low"):
            out[f"{p}_{k}"] = 0.0
    return out
