"""Drop-in for verl's rollout correction: swap one import.

    # from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_and_rejection_mask
    from logratio.verl import compute_rollout_correction_and_rejection_mask

Same arguments and return values as verl's function
(verl/trainer/ppo/rollout_corr_helper.py, github.com/volcengine/verl; the
tests compare with verl's own outputs at commit b178a3cd, committed under
tests/data/*/verl): the IS weights wrapped as verl does (a DataProto with
batch["rollout_is_weights"] when verl is installed, else an object with the
same ``.batch`` mapping), the response mask with the rejections applied (the
input mask's dtype), and the metrics under verl's ``rollout_corr/`` names.
The older keyword arguments (rollout_rs_threshold_lower,
rollout_token_veto_threshold; verl 4424616d7's rollout_is_level with
rollout_is_mode='truncate') are accepted too.
"""
from typing import Any, Dict, Optional, Tuple, Union

__all__ = ["compute_rollout_correction_and_rejection_mask", "RolloutWeights"]


class RolloutWeights:
    """verl's DataProto stand-in when verl is not installed: ``.batch['rollout_is_weights']``."""

    def __init__(self, weights):
        self.batch = {"rollout_is_weights": weights}

    def __repr__(self):
        w = self.batch["rollout_is_weights"]
        return f"RolloutWeights(rollout_is_weights: shape {tuple(w.shape)}, dtype {w.dtype})"


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


def _wrap(weights):
    try:
        from verl import DataProto  # type: ignore
    except Exception:  # verl absent (or failing to import): the stand-in
        return RolloutWeights(weights)
    return DataProto.from_dict(tensors={"rollout_is_weights": weights})


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

    Returns:
        (weights_proto or None, modified_response_mask, metrics) as verl.
    """
    from . import correct

    rollout_is = _older_is_level(rollout_is, rollout_is_level, rollout_is_mode)
    weights, mask, metrics = correct(
        old_log_prob, rollout_log_prob, response_mask,
        rollout_is=rollout_is, rollout_is_threshold=rollout_is_threshold,
        rollout_is_batch_normalize=rollout_is_batch_normalize, rollout_rs=rollout_rs,
        rollout_rs_threshold=rollout_rs_threshold, rollout_rs_threshold_lower=rollout_rs_threshold_lower,
        rollout_token_veto_threshold=rollout_token_veto_threshold, threads=threads, prefix="rollout_corr/")
    return (_wrap(weights) if weights is not None else None), mask, metrics
