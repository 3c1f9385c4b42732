"""flavour / mode / mode_options of correct() and panel(), and diagnose(): through Python, against
the committed slime / TRL reference outputs (tests/gen_framework_reference.py) and the doctor's rules."""
import glob
import json
import os

import numpy as np
import pytest

import logratio
from conftest import DATA, read_safetensors


def mode_of(args):
    """logratio_args (`--mode M --tis-clip 2 --use-rs ...`) -> (mode, mode_options) as Python takes them."""
    mode, opts, i = None, {}, 0
    while i < len(args):
        key = args[i][2:].replace("-", "_")
        value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
        i += 1 if value is None else 2
        if key == "mode":
            mode = value
        elif key == "flavour":
            continue  # correct(flavour=) is given from the config's folder below
        elif value is None:
            opts[key] = True
        else:
            try:
                opts[key] = float(value)
            except ValueError:
                opts[key] = value
    return mode, opts


def tolerance(key, config):
    # the frameworks' own float32 limits (tests/test_flavours.cpp, flavour.hpp)
    if key in ("mis_log_ppl_diff", "mis_log_ppl_abs_diff"):
        return 5e-5
    if key in ("mis_k3_kl", "mis_chi2_seq", "mis_chi2_token") or (
            ("sequence" in config or "geometric" in config) and "fraction" not in key):
        return 1e-5
    return 1e-6


# small, and the rejection case (every mode with a rejection, its own seed and size)
CONFIGS = sorted(glob.glob(os.path.join(DATA, case, fw, "*")) for case in ("small", "rejection") for fw in ("slime", "trl"))
CONFIGS = sorted(c for group in CONFIGS for c in group)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: "/".join(p.split(os.sep)[-3:]))
def test_mode_matches_framework(config):
    args = json.load(open(os.path.join(config, "args.json")))["logratio_args"]
    mode, opts = mode_of(args)
    case = config.replace(os.sep, "/").split("/")[-3]
    d = read_safetensors(os.path.join(DATA, case, "padded.safetensors"))
    mask = d["mask"].astype(bool)
    flavour = "slime" if "/slime/" in config.replace(os.sep, "/") else "trl"
    w, keep, metrics = logratio.correct(d["train_logprobs"], d["rollout_logprobs"], mask,
                                        flavour=flavour, mode=mode, mode_options=opts or None)
    want = json.load(open(os.path.join(config, "metrics.json")))
    assert set(metrics) == set(want)
    name = os.path.basename(config)
    for k, v in want.items():
        assert abs(metrics[k] - v) <= max(tolerance(k, name) * abs(v), 1e-9), (k, metrics[k], v)
    if mode is not None:
        ref = np.load(os.path.join(config, "weights.npy"))
        ref = np.broadcast_to(ref.reshape(-1, 1), w.shape) if ref.size == w.shape[0] else ref.reshape(w.shape)
        on = mask & (ref != 0)
        assert np.all(w[~mask] == 0)
        assert np.max(np.abs(w[on] - ref[on]) / np.abs(ref[on])) <= 5e-6


def test_flavour_errors():
    d = read_safetensors(os.path.join(DATA, "small", "padded.safetensors"))
    t, r, m = d["train_logprobs"], d["rollout_logprobs"], d["mask"]
    with pytest.raises(ValueError, match="flavour"):
        logratio.correct(t, r, m, flavour="openrlhf")
    with pytest.raises(ValueError, match="mode_options: unknown setting 'tis_clop'"):
        logratio.correct(t, r, m, mode="slime:tis", mode_options={"tis_clop": 2.0})
    with pytest.raises(ValueError, match="does not apply"):
        logratio.correct(t, r, m, mode="trl:token_mask", mode_options={"tis_clip": 2.0})
    with pytest.raises(TypeError, match="mode_options"):
        logratio.correct(t, r, m, mode="trl:token_mask", mode_options=[("clip_max", 2.0)])
    # slime's tis_clip_low = 0 (its default) is allowed
    w, _, _ = logratio.correct(t, r, m, mode="slime:tis", mode_options={"tis_clip": 2.0, "tis_clip_low": 0.0})
    assert w.dtype == np.float32


def test_panel_flavour_metrics():
    d = read_safetensors(os.path.join(DATA, "small", "padded.safetensors"))
    t, r, m = d["train_logprobs"], d["rollout_logprobs"], d["mask"]
    p = logratio.panel(t, r, m, flavour="slime")
    # the mismatch metrics without a correction (with a rejection, slime's
    # train_rollout_logprob_abs_diff is over the kept tokens only)
    want = json.load(open(os.path.join(DATA, "small", "slime", "mismatch_metrics", "metrics.json")))
    got = p["slime"]["train_rollout_logprob_abs_diff"]
    assert abs(got - want["train_rollout_logprob_abs_diff"]) <= 1e-6 * want["train_rollout_logprob_abs_diff"]
    assert "slime" not in logratio.panel(t, r, m)
    assert "sampling/sampling_logp_difference/mean" in logratio.panel(t, r, m, flavour="trl")["trl"]


def test_diagnose_clean_and_shifted():
    d = read_safetensors(os.path.join(DATA, "medium", "padded.safetensors"))
    t, r, m = d["train_logprobs"], d["rollout_logprobs"], d["mask"]
    clean = logratio.diagnose(t, r, m)
    checks = {f["check"]: f for f in clean["findings"]}
    assert {"alignment", "filled_values", "temperature", "numeric"} <= set(checks)
    assert all(set(f) == {"check", "severity", "summary", "evidence"} for f in clean["findings"])
    assert checks["alignment"]["severity"] == "ok"
    assert sum(b["count"] for b in clean["breakdowns"]["by_position"]) == int(m.astype(bool).sum())
    # trainer log-probs one position ahead of the rollout's: an alignment fail
    shifted = np.zeros_like(t)
    shifted[:, :-1] = t[:, 1:]
    mb = m.astype(bool)
    m2 = np.zeros_like(mb)
    m2[:, :-1] = mb[:, :-1] & mb[:, 1:]
    bad = logratio.diagnose(shifted, r, m2)
    assert bad["worst"] == "fail"
    assert {f["check"]: f for f in bad["findings"]}["alignment"]["severity"] == "fail"
    with pytest.raises(ValueError, match="threads"):
        logratio.diagnose(t, r, m, threads=0)
