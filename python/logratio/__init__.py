"""logratio: statistics of the train-inference log-prob mismatch (delta = l_T - l_E) of RL for LLMs.

Takes tensors as trainers hold them, without copying them: torch tensors
(any object with ``__dlpack__``) and numpy arrays (the buffer protocol);
float32, float64, float16 and bfloat16 log-probs (numpy uint16 arrays are
read as bfloat16 bits); masks of bool, uint8, int8, int16, int32, int64,
float32 or float64; padded ``[B, T]`` with any row stride (``full[:, -T:]``
is read in place) or packed 1-D with ``cu_seqlens`` (int32 or int64).

The kernels run at the widest SIMD level the CPU has (see ``simd_level()``)
with the GIL released. Errors: ``TypeError`` / ``ValueError`` naming the
argument, its dtype and shape; bad values (NaN, Inf, positive log-probs)
raise ``logratio.Error`` (a ``ValueError``) naming tensor, row and column.

Functions: panel, correct, quantiles, split_mismatch, logits, panel_state,
merge_panel_states, simd_level, available_simd_levels, set_simd_level;
class KLLSketch; module logratio.verl (verl's drop-in).
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _logratio as _C
from ._logratio import Error, KLLSketch

__version__ = _C.__version__
__all__ = ["panel", "correct", "diagnose", "quantiles", "split_mismatch", "logits", "panel_state", "merge_panel_states",
           "simd_level", "available_simd_levels", "set_simd_level", "KLLSketch", "Error", "__version__"]


# ---- argument checks that pybind11 would otherwise answer with a signature dump

def _int_arg(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import operator
            value = operator.index(value)  # numpy / torch integer scalars
        except TypeError:
            raise TypeError(f"{name}: expected an int >= {minimum}, got {type(value).__name__}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _opt_float(name: str, value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a float or None, got bool")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a float or None, got {type(value).__name__}") from None


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _mask_like(keep, mask, like):
    """The response mask (uint8 numpy from the kernel) in the kind and dtype of the input mask."""
    import numpy as np
    if mask is None:
        out = keep.view(np.bool_)
        if _is_torch(like):
            import torch
            return torch.from_numpy(out)
        return out
    if _is_torch(mask):
        import torch
        if mask.dtype == torch.bool:
            return torch.from_numpy(keep.view(np.bool_))
        if mask.dtype == torch.uint8:
            return torch.from_numpy(keep)
        if mask.dtype == torch.int8:
            return torch.from_numpy(keep.view(np.int8))
        return torch.from_numpy(keep).to(mask.dtype)
    dt = getattr(mask, "dtype", None)
    if dt is None:
        return keep
    dt = np.dtype(dt)
    if dt == np.bool_:
        return keep.view(np.bool_)
    if dt == np.uint8:
        return keep
    if dt == np.int8:
        return keep.view(np.int8)
    return keep.astype(dt)


# ---- dispatch

def simd_level() -> str:
    """The instruction-set level the kernels run: 'avx512', 'avx2', 'sse2' or 'scalar'.

    Chosen once, on first use: the widest level this CPU (and OS) runs, or
    the level named by the environment variable LOGRATIO_SIMD
    (scalar|sse2|avx2|avx512; an unknown level or one the CPU cannot run is
    an error). Every level gives the same results as the scalar path
    (tests/test_simd_levels.py).
    """
    return _C.simd_level()


def available_simd_levels() -> List[str]:
    """The levels this CPU can run, narrowest first (always 'scalar' and 'sse2')."""
    return list(_C.available_simd_levels())


def set_simd_level(name: str) -> None:
    """Run every later call at level `name` (one of available_simd_levels()); for tests and benchmarks."""
    _C.set_simd_level(_choice("name", name, ("scalar", "sse2", "avx2", "avx512")))


# ---- panel

def panel(train, rollout, mask=None, cu_seqlens=None, *, quantiles: bool = True, threads: int = 1,
          nonfinite: str = "raise", flavour: str = "verl") -> Dict[str, Any]:
    """The ratio panel: every per-update mismatch statistic of SPEC.md, as a dict.

    Args:
        train: trainer log-probs l_T, ``[B, T]`` (padded; rows may be any
            stride apart, e.g. ``full[:, -T:]``) or ``[N]`` (packed, with
            `cu_seqlens`). torch tensor (CPU; requires_grad is fine) or numpy
            array; float32, float64, float16 or bfloat16 (numpy: uint16 bits).
        rollout: inference-engine log-probs l_E, same shape and dtype as `train`.
        mask: which tokens count, same shape as `train`: 1 = counted, 0 =
            left out, any other value (0.5, 2, NaN) is a ValueError naming
            the row and column; bool, uint8, int8, int16, int32, int64,
            float32 or float64. None: every token counts.
        cu_seqlens: packed layout only: S+1 sequence offsets (int32/int64),
            0 first and N last; None for the padded layout.
        quantiles: also compute the exact delta and |delta| quantiles
            (delta_q*, abs_delta_q*; a second pass).
        threads: worker threads (>= 1); sequences are split between them.
        nonfinite: what a masked-in NaN or +-Inf log-prob does: 'raise' (an
            Error naming tensor, row and column) or 'omit' (the token is left
            out and counted in 'nonfinite_tokens'). A positive log-prob is
            an Error under both: it is not a probability, and omitting it
            would hide a bug upstream.
        flavour: 'verl' (SPEC's keys only), 'slime' or 'trl': also that
            framework's own mismatch metrics under its names and
            aggregation (slime: train_rollout_logprob_abs_diff and the MIS
            helper's mis_* under sum_of_sample_mean; TRL:
            sampling/sampling_logp_difference/*), as a dict under the key
            'slime' or 'trl' (as `logratio panel --flavour`).

    Returns:
        dict of SPEC's keys (tokens, sequences, delta_mean, delta_abs_mean,
        delta_std, delta_min, delta_max, delta_abs_max, ratio_*, kl_k1,
        kl_k2, kl_k3, kl_reverse, chi2, tv, ess_fraction, ppl, seq_* ,
        frac_abs_delta_gt_*, delta_q*, abs_delta_q*; None when no token
        counts) plus 'delta_abs_max_row' and 'delta_abs_max_column': where
        the largest |delta| is (row = sequence, column = position in it).
    """
    return _C.panel(train, rollout, mask, cu_seqlens, bool(quantiles), _int_arg("threads", threads),
                    _choice("nonfinite", nonfinite, ("raise", "omit")),
                    _choice("flavour", flavour, ("verl", "slime", "trl")))


def panel_state(train, rollout, mask=None, cu_seqlens=None, *, nonfinite: str = "raise") -> bytes:
    """The panel's mergeable state of one shard (bytes), e.g. for torch.distributed.all_gather_object.

    Arguments as in panel(). merge_panel_states() of the shards' states
    gives the panel of their union (without quantiles).
    """
    return _C.panel_state(train, rollout, mask, cu_seqlens, _choice("nonfinite", nonfinite, ("raise", "omit")))


def merge_panel_states(states: Sequence[bytes]) -> Dict[str, Any]:
    """Merges panel_state() bytes (in order) and returns the panel dict (without quantiles).

    delta_abs_max_row is the row within the shard that held the maximum (a
    state knows only its own rows).
    """
    return _C.merge_panel_states(list(states))


# ---- correction

def correct(train, rollout, mask=None, cu_seqlens=None, *, rollout_is: Optional[str] = None,
            rollout_is_threshold: Union[float, str, None] = 2.0, rollout_is_threshold_lower: Optional[float] = None,
            rollout_is_batch_normalize: bool = False, rollout_rs: Optional[str] = None,
            rollout_rs_threshold: Union[float, str, None] = None, rollout_rs_threshold_lower: Optional[float] = None,
            rollout_token_veto_threshold: Optional[float] = None, threads: int = 1,
            prefix: str = "", flavour: Optional[str] = None, mode: Optional[str] = None,
            mode_options: Optional[Dict[str, Any]] = None, nonfinite: str = "raise") -> Tuple[Any, Any, Dict[str, float]]:
    """verl's rollout correction: truncated IS weights, rejection (response) mask and verl's metrics.

    Args:
        train, rollout, mask, cu_seqlens: as in panel() (train = verl's
            old_log_prob, rollout = rollout_log_prob, mask = response_mask).
        rollout_is: IS level 'token', 'sequence' or 'geometric'; None: no IS
            weights.
        rollout_is_threshold: truncation C (weights = min(w, C)); a float, or
            a str 'C' / 'lower_upper'. None turns IS off (as verl).
        rollout_is_threshold_lower: optional lower truncation c_low.
        rollout_is_batch_normalize: divide the weights by their batch mean.
        rollout_rs: rejection options, e.g. 'token_k1', 'seq_max_k2',
            'token_k1,seq_max_k3' (verl's names; the older 'token',
            'sequence', 'geometric' too).
        rollout_rs_threshold: their thresholds, a str ('0.999_1.001',
            '1.05,0.003') or a float (0.0002), as verl accepts.
        rollout_rs_threshold_lower: lower bound for the older level names.
        rollout_token_veto_threshold: reject a whole sequence holding any
            token with ratio below it (older verl's veto).
        threads: worker threads (>= 1).
        prefix: put before every metric name, e.g. 'rollout_corr/' (verl's).
        flavour: None or 'verl' (the rollout_* arguments above), 'slime' or
            'trl': that framework's weights, masks and metrics (names and
            aggregation as it logs them). 'slime' without a mode gives its
            mismatch metrics only (weights None).
        mode: a slime or TRL mode by name (implies its flavour):
            'slime:tis', 'slime:icepop',
            'slime:mis-{truncate,clip,mask}-{token,sequence,geometric}',
            'trl:token_truncate', 'trl:token_mask', 'trl:sequence_truncate',
            'trl:sequence_mask' -- the same names as `logratio correct --mode`.
        mode_options: the mode's settings under the framework's own argument
            names: slime tis_clip, tis_clip_low (0 allowed), tis_upper_bound,
            tis_lower_bound, use_rs, rs_level, rs_lower_bound, rs_upper_bound,
            rs_veto_threshold, tis_batch_normalize, calculate_per_token_loss;
            TRL clip_min, clip_max. Loss denominators: verl divides by the
            returned (modified) mask, slime and TRL by the original one.
        nonfinite: 'raise' (a masked-in NaN/Inf log-prob is an Error naming
            its row and column) or 'omit' (such tokens are masked out --
            weight 0, mask 0, in no metric -- and counted in the metric
            prefix + 'nonfinite_tokens'). A positive log-prob is an Error
            under both, as in panel().

    Returns:
        (weights, response_mask, metrics): weights float32 of the input's
        shape (0 on masked-out tokens; None without IS); the response mask
        with rejections applied, in the input mask's dtype (bool when no
        mask was given); both torch tensors when `train` is a torch tensor,
        numpy arrays otherwise; metrics: dict of verl's names (slime's /
        TRL's with a flavour); a metric with no token to be computed over
        (an all-masked batch) is None, as in panel().
    """
    if rollout_is_threshold is None:
        rollout_is = None  # verl: no threshold, no IS
    w, keep, metrics = _C.correct(
        train, rollout, mask, cu_seqlens, rollout_is, rollout_is_threshold,
        _opt_float("rollout_is_threshold_lower", rollout_is_threshold_lower), bool(rollout_is_batch_normalize),
        rollout_rs, rollout_rs_threshold, _opt_float("rollout_rs_threshold_lower", rollout_rs_threshold_lower),
        _opt_float("rollout_token_veto_threshold", rollout_token_veto_threshold), _int_arg("threads", threads),
        _str_arg("prefix", prefix), "" if flavour is None else _choice("flavour", flavour, ("verl", "slime", "trl")),
        "" if mode is None else _str_arg("mode", mode), mode_options,
        _choice("nonfinite", nonfinite, ("raise", "omit")))
    keep = _mask_like(keep, mask, train)
    if w is not None and _is_torch(train):
        import torch
        w = torch.from_numpy(w)
    return w, keep, metrics


# ---- doctor

def diagnose(train, rollout, mask=None, cu_seqlens=None, *, old=None, threads: int = 1) -> Dict[str, Any]:
    """logratio doctor: what is wrong with these log-probs, with evidence.

    Args:
        train, rollout, mask, cu_seqlens: as in panel().
        old: optional trainer log-probs under the rollout's weights (verl's
            old_log_prob when `train` is the current policy's), same shape
            and dtype as `train`: enables the policy_lag check.
        threads: worker threads (>= 1).

    Returns:
        dict {"findings": [{"check", "severity" ('ok'|'warn'|'fail'),
        "summary", "evidence": {...}}], "breakdowns": {"by_position",
        "by_rollout_prob", "joint"}, "worst": 'ok'|'warn'|'fail'} -- the
        JSON `logratio doctor --json` prints, plus the worst severity.
        Checks: alignment, filled_values, temperature, processed_logprobs,
        desync, position, low_probability, policy_lag, numeric (README,
        "Doctor", gives each rule and its measured thresholds).
    """
    import json
    text, worst = _C.diagnose(train, rollout, mask, cu_seqlens, old, _int_arg("threads", threads))
    out = json.loads(text)
    out["worst"] = ("ok", "warn", "fail")[worst]
    return out


def _str_arg(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
    return value


# ---- quantiles, split, logits

def quantiles(train, rollout, mask=None, cu_seqlens=None, *, q: Sequence[float] = (0.5, 0.9, 0.99, 0.999),
              of: str = "delta", method: str = "linear", nonfinite: str = "raise"):
    """Exact quantiles (numpy.quantile's result) of delta, |delta| or the ratio over the counted tokens.

    Args:
        train, rollout, mask, cu_seqlens: as in panel().
        q: probabilities in [0, 1].
        of: 'delta', 'abs_delta' or 'ratio'.
        method: numpy's quantile method name ('linear', 'lower', 'higher',
            'nearest', 'midpoint', 'median_unbiased', ...).
        nonfinite: 'raise' or 'omit', as in panel().

    Returns:
        float64 numpy array, one value per probability (empty when no token counts).
    """
    try:
        probs = [float(x) for x in q]
    except (TypeError, ValueError):
        raise TypeError(f"q: expected a sequence of floats, got {type(q).__name__}") from None
    return _C.quantiles(train, rollout, mask, cu_seqlens, probs, _choice("of", of, ("delta", "abs_delta", "ratio")),
                        _str_arg("method", method), _choice("nonfinite", nonfinite, ("raise", "omit")))


def split_mismatch(train, rollout, old, mask=None, cu_seqlens=None, *, threads: int = 1,
                   nonfinite: str = "raise") -> Dict[str, Any]:
    """Splits the mismatch into its numeric part (old vs rollout) and its policy-lag part (train vs old).

    Args:
        train: trainer log-probs under the current weights l_T(theta).
        rollout: inference-engine log-probs l_E.
        old: trainer log-probs under the rollout's weights l_T(theta_old);
            same shape, dtype and layout as `train`.
        mask, cu_seqlens, threads, nonfinite: as in panel().

    Returns:
        {'tokens': n, 'total': part, 'numeric': part, 'lag': part}, each part a
        dict of delta_mean, delta_abs_mean, delta_std, kl_k3.
    """
    return _C.split_mismatch(train, rollout, old, mask, cu_seqlens, _int_arg("threads", threads),
                             _choice("nonfinite", nonfinite, ("raise", "omit")))


def logits(train, rollout=None, tokens=None, *, temperature: float = 1.0, threads: int = 1) -> Dict[str, Any]:
    """Per-row entropy, KL both ways and TV from two logit tensors (full distributions).

    Args:
        train: trainer logits ``[N, V]`` or ``[B, T, V]``; float32, float64,
            float16 or bfloat16.
        rollout: engine logits, same shape and dtype; None: `train` alone
            (entropies only, divergences 0).
        tokens: sampled token ids, one per row (int32/int64, ``[N]`` or
            ``[B, T]``); adds train_logprob, rollout_logprob, sampled_prob_gap.
        temperature: logits are divided by it (> 0).
        threads: worker threads (>= 1).

    Returns:
        dict of numpy arrays of shape ``[N]`` / ``[B, T]``: train_entropy,
        rollout_entropy, kl_train_rollout (KL(pi_T || pi_E)),
        kl_rollout_train (KL(pi_E || pi_T)), tv, argmax_match, train_argmax,
        rollout_argmax (+ the token values when `tokens` is given).
    """
    t = _opt_float("temperature", temperature)
    return _C.logits(train, rollout, tokens, t if t is not None else 1.0, _int_arg("threads", threads))


from . import verl  # noqa: E402  (logratio.verl, the drop-in)
