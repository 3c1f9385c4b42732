"""logratio.verl against verl's own outputs (tests/data/*/verl: metrics, response mask, weights of
compute_rollout_correction_and_rejection_mask at verl commit b178a3cd on padded.safetensors)."""
import glob
import json
import os

import numpy as np
import pytest

from conftest import DATA, read_safetensors
from logratio.verl import compute_rollout_correction_and_rejection_mask

torch = pytest.importorskip("torch")



# one folder per option set (args.json); tests/data/trackers/verl holds verl's file-logger runs instead
CONFIGS = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(DATA, "*", "verl", "*", "args.json")))


def test_fixtures_present():
    assert len(CONFIGS) >= 20, CONFIGS


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: os.path.relpath(p, DATA))
def test_verl_drop_in(config):
    size_dir = os.path.dirname(os.path.dirname(config))
    inputs = read_safetensors(os.path.join(size_dir, "padded.safetensors"))
    args = json.load(open(os.path.join(config, "args.json")))
    kwargs = args["verl_kwargs"]
    # keys verl logs that logratio does not report, each with its reason (gen_verl_reference.py)
    skipped = {"rollout_corr/" + k for k in args.get("metrics_not_compared", {})}
    old = torch.from_numpy(inputs["train_logprobs"].copy())
    rollout = torch.from_numpy(inputs["rollout_logprobs"].copy())
    mask = torch.from_numpy(inputs["mask"].astype(np.int64))  # verl's response_mask dtype
    proto, new_mask, metrics = compute_rollout_correction_and_rejection_mask(
        old_log_prob=old, rollout_log_prob=rollout, response_mask=mask, **kwargs)
    want = json.load(open(os.path.join(config, "metrics.json")))
    for key, value in want.items():
        if key in skipped:  # defined differently by that verl commit, or reported only with another option
            continue
        assert key in metrics, key
        tol = 2e-7 if "fraction" in key else 1e-6  # verl returns fractions in float32
        assert abs(metrics[key] - value) <= tol * max(1.0, abs(value)), (key, metrics[key], value)
    assert new_mask.dtype == torch.int64
    assert np.array_equal(new_mask.numpy(), np.load(os.path.join(config, "response_mask.npy")).astype(np.int64))
    wpath = os.path.join(config, "rollout_is_weights.npy")
    if os.path.exists(wpath):
        w = proto.batch["rollout_is_weights"]
        assert w.dtype == torch.float32
        ref = np.load(wpath)
        assert np.allclose(w.numpy(), ref, rtol=1.2e-7, atol=0), np.abs(w.numpy() - ref).max()
    else:
        assert proto is None


def test_older_is_mode_names():
    x = np.array([[-1.0, -2.0, -0.5]], dtype=np.float64)
    y = np.array([[-1.1, -1.9, -0.5]], dtype=np.float64)
    m = np.ones((1, 3), dtype=np.int64)
    a = compute_rollout_correction_and_rejection_mask(x, y, m, rollout_is_level="geometric",
                                                      rollout_is_mode="truncate", rollout_is_threshold=1.01)
    b = compute_rollout_correction_and_rejection_mask(x, y, m, rollout_is="geometric", rollout_is_threshold=1.01)
    assert np.array_equal(np.asarray(a[0].batch["rollout_is_weights"]), np.asarray(b[0].batch["rollout_is_weights"]))
    assert a[2] == b[2]
    with pytest.raises(ValueError, match="rollout_is_mode='mask' is not supported"):
        compute_rollout_correction_and_rejection_mask(x, y, m, rollout_is_level="token", rollout_is_mode="mask")
    with pytest.raises(ValueError, match="disagree"):
        compute_rollout_correction_and_rejection_mask(x, y, m, rollout_is="token", rollout_is_level="sequence")
