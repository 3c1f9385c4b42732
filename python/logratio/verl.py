"""Drop-in for verl's rollout-correction helper: swap one import.

    # from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_and_rejection_mask
    from logratio.verl import compute_rollout_correction_and_rejection_mask

The public surface of verl/trainer/ppo/rollout_corr_helper.py
(github.com/volcengine/verl at commit b178a3cd56f58b2d502255daba591e92833930a7):
the same names, signatures and return values, computed on logratio's kernels.
The IS weights come wrapped as verl does (verl's DataProto when verl is
importable, else a stand-in with the same ``.batch`` / ``from_dict`` /
``union``), in the dtype verl gives (torch's promotion of the log-ratio's and
the mask's dtypes) and on the input's device (non-CPU tensors are copied to
the host and back); the response mask in the input mask's dtype; the metrics
under verl's names. docs/verl.md describes the differences.

verl's contract, not logratio's: values verl accepts are computed as verl
computes them, positive "log-probs" included (logratio.correct refuses them);
``strict=True`` keeps logratio's refusal. The older keyword arguments
(rollout_rs_threshold_lower, rollout_token_veto_threshold; verl 4424616d7's
rollout_is_level with rollout_is_mode='truncate') are accepted too.
"""
from typing import Any, Dict, Optional, Tuple, Union

from . import _verl_support as _s
from ._verl_support import SAFETY_BOUND, RolloutWeights, compute_is_metrics, compute_rs_metrics

__all__ = [
    "SAFETY_BOUND", "SUPPORTED_ROLLOUT_RS_OPTIONS", "TOKEN_LEVEL_ROLLOUT_RS_OPTIONS", "DataProto",
    "compute_rollout_rejection_mask", "compute_rs_metrics", "compute_rollout_correction_weights",
    "compute_is_metrics", "compute_rollout_correction_and_rejection_mask", "compute_offpolicy_metrics",
    "compute_rollout_correction_and_add_to_batch", "compute_rollout_corr_metrics_from_logprobs",
    "apply_bypass_mode", "RolloutWeights",
]

SUPPORTED_ROLLOUT_RS_OPTIONS = {
    "token_k1", "token_k2", "token_k3", "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
    "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3",
}
TOKEN_LEVEL_ROLLOUT_RS_OPTIONS = {"token_k1", "token_k2", "token_k3"}



def __getattr__(name):
    """DataProto: verl's class when verl is importable, else the stand-in -- looked up on first use,
    so importing logratio.verl does not import verl."""
    if name == "DataProto":
        return _s.data_proto_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _older_is_level(rollout_is, level, mode):
    """rollout_is from verl 4424616d7's rollout_is_level / rollout_is_mode (or rollout_is itself)."""
    if mode is not None and mode != "truncate":
        raise ValueError(f"rollout_is_mode={mode!r} is not supported: only 'truncate' (later verl's IS "
                         "weights); for masking use rollout_rs with the same level and thresholds")
    if level is None:
        return rollout_is
    if rollout_is is not None and rollout_is != level:
        raise ValueError(f"rollout_is={rollout_is!r} and rollout_is_level={level!r} disagree; give one")
    return level


def _kernel(old, rollout, mask, strict, empty_error=ValueError, **options):
    """logratio.correct on host tensors; positive log-probs as verl computes them unless strict.

    logratio refuses a positive log-prob; verl's arithmetic is that of the
    differences (IS, rejection, kl, chi2, log_ppl_diff ...) plus four
    metrics of the absolute values (the ppls). Both inputs are shifted down by
    their largest masked-in value in float64 -- the differences stay exactly
    the same, so do the kernel's weights, masks and those metrics -- and the
    four absolute metrics are computed from the unshifted values.
    """
    from . import Error, correct
    prefix = options.get("prefix", "")
    try:
        w, keep, metrics = correct(old, rollout, mask, **options)
    except Error as e:
        if strict or "positive log-prob" not in str(e):
            raise
        o, r = _s.shifted_down(old, rollout, mask)
        w, keep, metrics = correct(o, r, mask, **options)
        for k, v in _s.absolute_metrics(old, rollout, mask).items():
            if prefix + k in metrics:
                metrics[prefix + k] = v
    # verl refuses a mask without a valid token; the kernel's ppl is undefined (None, as in
    # panel()) only then (a NaN or Inf log-prob raises), so the mask is scanned only in
    # that case, not on every call
    if metrics[prefix + "training_ppl"] is None:
        _s.require_valid_token(mask, empty_error)
    return w, keep, metrics


def _on_log_ratio(log_ratio, response_mask, **options):
    """The kernel on a log-ratio: fed (min(r, 0), min(-r, 0)), whose difference is r exactly."""
    lr, mask = _s.on_host(log_ratio), _s.on_host(response_mask)
    train, rollout = _s.split_log_ratio(lr)
    return _kernel(train, rollout, mask, True, **options)  # strict: nothing is positive


def compute_rollout_correction_and_rejection_mask(
    old_log_prob,
    rollout_log_prob,
    response_mask,
    rollout_is: Optional[str] = None,
    rollout_is_threshold: Union[float, str, None] = 2.0,
    rollout_is_batch_normalize: bool = False,
    rollout_rs: Optional[str] = None,
    rollout_rs_threshold: Union[float, str, None] = None,
    *,
    rollout_rs_threshold_lower: Optional[float] = None,
    rollout_token_veto_threshold: Optional[float] = None,
    rollout_is_level: Optional[str] = None,
    rollout_is_mode: Optional[str] = None,
    threads: int = 1,
    strict: bool = False,
) -> Tuple[Optional[Any], Any, Dict[str, float]]:
    """verl's compute_rollout_correction_and_rejection_mask on logratio's kernels.

    Args:
        old_log_prob: training-policy log-probs ``[B, T]`` (torch or numpy).
        rollout_log_prob: rollout-policy log-probs, same shape.
        response_mask: valid tokens ``[B, T]`` (verl: int64; any mask dtype).
        rollout_is: 'token', 'sequence', 'geometric' or None.
        rollout_is_threshold: IS truncation (float or str); None: no IS.
        rollout_is_batch_normalize: normalize the weights to batch mean 1.
        rollout_rs: rejection options (verl's names, comma-separated).
        rollout_rs_threshold: their thresholds (str or float).
        rollout_rs_threshold_lower, rollout_token_veto_threshold: older
            verl's options.
        rollout_is_level, rollout_is_mode: verl 4424616d7's names for the IS
            level (as rollout_is) and its mode; only 'truncate' (the
            weights of every later verl) is accepted.
        threads: worker threads (not in verl; default 1).
        strict: refuse positive log-probs as logratio does (not in verl;
            default False: computed as verl computes them).

    Returns:
        (weights_proto or None, modified_response_mask, metrics) as verl:
        the weights in torch's promotion of the log-ratio's and mask's
        dtypes (float32 for numpy inputs), on the inputs' device.
    """
    rollout_is = _older_is_level(rollout_is, rollout_is_level, rollout_is_mode)
    if rollout_rs is not None and rollout_rs_threshold is None:
        raise ValueError("rollout_rs_threshold must be explicitly provided when rollout_rs is enabled. "
                         "Set rollout_rs_threshold to the desired threshold value.")
    device = _s.device_of(old_log_prob)
    dtype = _s.weights_dtype(_s.promoted_like(old_log_prob, rollout_log_prob), response_mask)
    weights, mask, metrics = _kernel(
        _s.on_host(old_log_prob), _s.on_host(rollout_log_prob), _s.on_host(response_mask), strict,
        rollout_is=rollout_is, rollout_is_threshold=rollout_is_threshold,
        rollout_is_batch_normalize=rollout_is_batch_normalize, rollout_rs=rollout_rs,
        rollout_rs_threshold=rollout_rs_threshold, rollout_rs_threshold_lower=rollout_rs_threshold_lower,
        rollout_token_veto_threshold=rollout_token_veto_threshold, threads=threads, prefix="rollout_corr/")
    weights = _s.as_verl_weights(weights, dtype, device)
    return (None if weights is None else _s.wrap_weights(weights)), _s.to_device(mask, device), metrics


def compute_rollout_correction_weights(
    log_ratio,
    response_mask,
    rollout_is: str = "token",
    rollout_is_threshold: float = 2.0,
    rollout_is_batch_normalize: bool = False,
) -> Tuple[Any, Dict[str, float]]:
    """verl's truncated IS weights from a log-ratio (log π_train - log π_rollout, any sign).

    Returns:
        (weights [B, T] in verl's dtype on the input's device, 0 on padding;
        the rollout_is_* metrics, no prefix).
    """
    if rollout_is not in ("token", "sequence", "geometric"):
        raise ValueError(f"Invalid rollout_is: {rollout_is}. Must be one of {{'token', 'sequence'}}.")
    if float(rollout_is_threshold) <= 0:
        raise ValueError(f"rollout_is_threshold must be positive, got {rollout_is_threshold}.")
    weights, _, metrics = _on_log_ratio(log_ratio, response_mask, rollout_is=rollout_is,
                                        rollout_is_threshold=rollout_is_threshold,
                                        rollout_is_batch_normalize=rollout_is_batch_normalize)
    weights = _s.as_verl_weights(weights, _s.weights_dtype(log_ratio, response_mask), _s.device_of(log_ratio))
    return weights, {k: v for k, v in metrics.items() if k.startswith("rollout_is_")}


def compute_rollout_rejection_mask(
    log_ratio,
    response_mask,
    rollout_rs: str = "token_k1",
    rollout_rs_threshold: Union[float, str, None] = None,
) -> Tuple[Any, Dict[str, float]]:
    """verl's rejection (hard trust region) from a log-ratio: (modified response mask, rollout_rs_* metrics)."""
    if rollout_rs is None or not isinstance(rollout_rs, str):
        raise ValueError("rollout_rs must be a non-empty string (comma separated for multiple options).")
    if rollout_rs_threshold is None:
        raise ValueError("rollout_rs_threshold must be provided for rejection sampling.")
    if log_ratio.shape[0] == 0:
        return response_mask, {}
    _, mask, metrics = _on_log_ratio(log_ratio, response_mask, rollout_is=None, rollout_rs=rollout_rs,
                                     rollout_rs_threshold=rollout_rs_threshold)
    return _s.to_device(mask, _s.device_of(response_mask)), {k: v for k, v in metrics.items()
                                                            if k.startswith("rollout_rs_")}


def compute_offpolicy_metrics(old_log_prob, rollout_log_prob, response_mask, *, strict: bool = False) -> Dict[str, Any]:
    """verl's off-policy diagnostics (kl, k3_kl, ppls, log_ppl_diff*, ppl_ratio, chi2_token/seq), no prefix.

    rollout_log_prob None: training_ppl and training_log_ppl only (as verl).
    """
    old = _s.on_host(old_log_prob)
    rollout = old if rollout_log_prob is None else _s.on_host(rollout_log_prob)
    _, _, metrics = _kernel(old, rollout, _s.on_host(response_mask), strict, AssertionError,  # verl asserts here
                            rollout_is=None)
    if rollout_log_prob is None:
        return {k: metrics[k] for k in ("training_ppl", "training_log_ppl")}
    return {k: v for k, v in metrics.items() if not k.startswith(("rollout_is_", "rollout_rs_"))}


def compute_rollout_corr_metrics_from_logprobs(log_prob, rollout_log_prob, response_mask,
                                               *, strict: bool = False) -> Dict[str, float]:
    """compute_offpolicy_metrics under verl's "rollout_corr/" prefix (verl's actor-side call)."""
    metrics = compute_offpolicy_metrics(log_prob, rollout_log_prob, response_mask, strict=strict)
    return {f"rollout_corr/{k}": v for k, v in metrics.items()}


def _config_value(config, key, default):
    if hasattr(config, "get"):
        return config.get(key, default)
    return getattr(config, key, default)


def compute_rollout_correction_and_add_to_batch(batch, rollout_corr_config) -> Tuple[Any, dict]:
    """verl's trainer step: the batch's response_mask replaced by the rejected one (always), and
    rollout_is_weights added (with IS); returns (batch, metrics with the "rollout_corr/" prefix)."""
    weights, mask, metrics = compute_rollout_correction_and_rejection_mask(
        old_log_prob=batch.batch["old_log_probs"],
        rollout_log_prob=batch.batch["rollout_log_probs"],
        response_mask=batch.batch["response_mask"],
        rollout_is=_config_value(rollout_corr_config, "rollout_is", None),
        rollout_is_threshold=_config_value(rollout_corr_config, "rollout_is_threshold", 2.0),
        rollout_is_batch_normalize=_config_value(rollout_corr_config, "rollout_is_batch_normalize", False),
        rollout_rs=_config_value(rollout_corr_config, "rollout_rs", None),
        rollout_rs_threshold=_config_value(rollout_corr_config, "rollout_rs_threshold", None),
    )
    batch.batch["response_mask"] = mask
    if weights is not None:
        batch = batch.union(weights)
    return batch, metrics


def apply_bypass_mode(batch, rollout_corr_config=None, policy_loss_config=None) -> None:
    """verl's bypass mode: old_log_probs := rollout_log_probs, and the policy-loss config set to
    verl's "bypass_mode" loss with the rollout-correction config (omegaconf's open_dict when the
    config is a DictConfig)."""
    if "rollout_log_probs" not in batch.batch:
        raise ValueError("bypass_mode=True requires rollout_log_probs in batch. "
                         "Ensure rollout worker is configured to calculate_log_probs=true.")
    batch.batch["old_log_probs"] = batch.batch["rollout_log_probs"]
    try:
        from omegaconf import DictConfig, open_dict
    except ImportError:
        DictConfig = None
    if DictConfig is not None and isinstance(policy_loss_config, DictConfig):
        with open_dict(policy_loss_config):
            policy_loss_config["rollout_correction"] = rollout_corr_config
            policy_loss_config["loss_mode"] = "bypass_mode"
    else:
        policy_loss_config["rollout_correction"] = rollout_corr_config
        policy_loss_config["loss_mode"] = "bypass_mode"
