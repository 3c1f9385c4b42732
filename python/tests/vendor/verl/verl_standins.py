"""Stand-ins for the verl modules the vendored tests import besides the helper,
used only when verl is not installed (see README.md): logratio's own minimal
code, not verl's, written to the behaviour verl's classes show at commit
b178a3cd56f58b2d502255daba591e92833930a7 (verl/trainer/config/algorithm.py,
verl/workers/config/actor.py, verl/trainer/ppo/core_algos.py).

- RolloutCorrectionConfig: the five rollout-correction fields, dict-like
  .get, and the decoupled_geo_rs_seq_tis preset the tests call.
- ActorConfig: keyword fields (clip_ratio, clip_ratio_low/high, clip_ratio_c).
- compute_policy_loss_vanilla: PPO's clipped surrogate (dual-clip for negative
  advantages), times the IS weights when given, token-mean over the mask.
"""
from dataclasses import dataclass
from typing import Optional, Union

import torch


class _DictLike:
    def get(self, key, default=None):
        return getattr(self, key, default)

    def __getitem__(self, key):
        return getattr(self, key)


@dataclass
class RolloutCorrectionConfig(_DictLike):
    rollout_is: Optional[str] = "sequence"
    rollout_is_threshold: float = 2.0
    rollout_is_batch_normalize: bool = False
    rollout_rs: Optional[str] = None
    rollout_rs_threshold: Optional[Union[str, float]] = None

    @classmethod
    def decoupled_geo_rs_seq_tis(cls, is_threshold: float = 2.0,
                                 rs_threshold: Optional[Union[str, float]] = "0.999_1.001"):
        """Sequence-level truncated IS with the geometric-mean (seq_mean_k1) rejection."""
        return cls(rollout_is="sequence", rollout_is_threshold=is_threshold, rollout_rs="seq_mean_k1",
                   rollout_rs_threshold=rs_threshold)


class ActorConfig(_DictLike):
    def __init__(self, clip_ratio: float = 0.2, clip_ratio_low: Optional[float] = None,
                 clip_ratio_high: Optional[float] = None, clip_ratio_c: float = 3.0, **others):
        self.clip_ratio, self.clip_ratio_low, self.clip_ratio_high = clip_ratio, clip_ratio_low, clip_ratio_high
        self.clip_ratio_c = clip_ratio_c
        self.__dict__.update(others)


class PolicyLossConfig(dict):
    pass


def _token_mean(x, mask):
    mask = mask.to(x.dtype)
    return (x * mask).sum() / mask.sum()


def compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                                config=None, rollout_is_weights=None):
    if loss_agg_mode != "token-mean":
        raise NotImplementedError("the stand-in aggregates by token-mean only")
    low = config.clip_ratio_low if config.clip_ratio_low is not None else config.clip_ratio
    high = config.clip_ratio_high if config.clip_ratio_high is not None else config.clip_ratio
    log_ratio = (log_prob - old_log_prob).clamp(-20.0, 20.0)
    ratio = log_ratio.exp()
    unclipped, clipped = -advantages * ratio, -advantages * ratio.clamp(1 - low, 1 + high)
    surrogate = torch.maximum(unclipped, clipped)
    dual = torch.minimum(surrogate, -advantages * config.clip_ratio_c)
    losses = torch.where(advantages < 0, dual, surrogate)
    if rollout_is_weights is not None:
        losses = losses * rollout_is_weights
    metrics = {"actor/ppo_kl": _token_mean(-log_ratio, response_mask).item(),
               "actor/pg_clipfrac": _token_mean((clipped > unclipped).float(), response_mask).item()}
    return _token_mean(losses, response_mask), metrics
