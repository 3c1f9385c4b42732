"""logratio.verl's whole surface against verl's own helpers (tests/data/verl_api: verl b178a3cd on
torch.randn "log-probs" -- positive values included -- in float32, float64 and bfloat16, made by
tests/gen_verl_reference.py --api), plus strict=True, dtypes, the batch helpers and the vendored tests'
integrity."""
import hashlib
import json
import os

import numpy as np
import pytest

from conftest import DATA
import logratio.verl as lv
from logratio import _verl_support as support

torch = pytest.importorskip("torch")

REF = os.path.join(DATA, "verl_api")
META = json.load(open(os.path.join(REF, "expected.json")))
EXPECTED = np.load(os.path.join(REF, "expected.npz"))
INPUTS = np.load(os.path.join(REF, "inputs.npz"))
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
VENDOR = os.path.join(os.path.dirname(__file__), "vendor", "verl")


def inputs(dtype):
    old = torch.from_numpy(INPUTS["old"]).to(dtype)
    rollout = torch.from_numpy(INPUTS["rollout"]).to(dtype)
    return old, rollout, torch.from_numpy(INPUTS["mask"])


def call(fn, kwargs, old, rollout, mask, **extra):
    if fn == "main":
        proto, new_mask, metrics = lv.compute_rollout_correction_and_rejection_mask(old, rollout, mask, **kwargs,
                                                                                    **extra)
        arrays = {"response_mask": new_mask}
        if proto is not None:
            arrays["rollout_is_weights"] = proto.batch["rollout_is_weights"]
        return arrays, metrics
    if fn == "weights":
        w, metrics = lv.compute_rollout_correction_weights(old - rollout, mask, **kwargs)
        return {"rollout_is_weights": w}, metrics
    if fn == "rejection":
        m, metrics = lv.compute_rollout_rejection_mask(old - rollout, mask, **kwargs)
        return {"response_mask": m}, metrics
    return {}, lv.compute_offpolicy_metrics(old, None if fn == "offpolicy_train_only" else rollout, mask, **extra)


def test_reference_covers_every_call_and_positive_values():
    assert len(META["calls"]) == 33 and META["verl_commit"] == "b178a3cd"
    assert (INPUTS["old"][INPUTS["mask"] > 0] > 0).sum() >= 20  # the case logratio itself refuses


@pytest.mark.parametrize("key", sorted(META["calls"]))
def test_same_as_verl(key):
    """Same keys, values, dtypes and arrays as verl's helper on the same (positive-valued) inputs."""
    dname = key.split("/")[0]
    ref = META["calls"][key]
    got, metrics = call(ref["function"], ref["kwargs"], *inputs(DTYPES[dname]))
    # logratio's additions (rollout_is_post_*, rollout_is_changed_fraction) may be extra; every verl key is there
    missing = set(ref["metrics"]) - set(metrics)
    assert not missing, missing
    # verl computes bf16 inputs' metrics in bf16 (8 significant bits; a ratio near a threshold rounds
    # onto it, so a fraction may differ by a token or two of the 46); logratio in double
    n_tokens = int(INPUTS["mask"].sum())
    for k, want in ref["metrics"].items():
        tol = 2e-6 if dname != "bfloat16" else (2.5 / n_tokens if "fraction" in k else 2e-2)
        assert abs(metrics[k] - want) <= tol * max(1.0, abs(want)), (k, metrics[k], want)
    assert set(got) == set(ref["dtypes"])
    for name, arr in got.items():
        assert str(arr.dtype) == ref["dtypes"][name], (name, arr.dtype)
        want = EXPECTED[f"{key}/{name}"]
        have = arr.to(torch.float32 if arr.dtype == torch.bfloat16 else arr.dtype).numpy()
        if name == "response_mask":
            assert np.array_equal(have, want)
        else:  # float64: one float32 ulp (logratio's weights are float32-precise); float32: two ulps,
            # verl sums a sequence's log-ratios in float32 (logratio in double); bf16: verl rounds to bf16 first
            rtol = {"bfloat16": 1.6e-2, "float32": 2.4e-7}.get(dname, 1.2e-7)
            assert np.allclose(have, want, rtol=rtol, atol=0), np.abs(have - want).max()


def test_strict_refuses_positive_log_probs():
    old, rollout, mask = inputs(torch.float32)
    with pytest.raises(ValueError, match="positive log-prob"):
        lv.compute_rollout_correction_and_rejection_mask(old, rollout, mask, rollout_is="token", strict=True)
    with pytest.raises(ValueError, match="positive log-prob"):
        lv.compute_offpolicy_metrics(old, rollout, mask, strict=True)
    # valid log-probs: strict or not, the same result
    a = lv.compute_rollout_correction_and_rejection_mask(old - 6, rollout - 6, mask, rollout_is="token", strict=True)
    b = lv.compute_rollout_correction_and_rejection_mask(old - 6, rollout - 6, mask, rollout_is="token")
    assert torch.equal(a[0].batch["rollout_is_weights"], b[0].batch["rollout_is_weights"]) and a[2] == b[2]


def test_positive_path_equals_shifted_inputs():
    """Shifting both inputs changes no weight, mask or difference metric; the ppls move by exp(c)."""
    old, rollout, mask = inputs(torch.float64)
    kw = dict(rollout_is="token", rollout_is_threshold=2.0, rollout_rs="token_k1", rollout_rs_threshold="0.5_1.5")
    p, m, met = lv.compute_rollout_correction_and_rejection_mask(old, rollout, mask, **kw)
    c = 7.0
    q, n, met2 = lv.compute_rollout_correction_and_rejection_mask(old - c, rollout - c, mask, **kw)
    assert torch.equal(p.batch["rollout_is_weights"], q.batch["rollout_is_weights"]) and torch.equal(m, n)
    for k, v in met.items():
        if k.endswith("log_ppl") and "diff" not in k:
            assert met2[k] == pytest.approx(v + c, rel=1e-12)
        elif k.endswith("_ppl"):
            assert met2[k] > v * np.exp(c) * 0.5  # mean of exp: moves by about exp(c), not exactly
        else:
            assert met2[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_weights_dtype_follows_torch_promotion():
    old, rollout, mask = inputs(torch.float32)
    old, rollout = old - 6, rollout - 6
    for od, md, want in ((torch.float32, torch.int64, torch.float32), (torch.float64, torch.int64, torch.float64),
                         (torch.bfloat16, torch.bool, torch.bfloat16), (torch.bfloat16, torch.float32, torch.float32),
                         (torch.float16, torch.int64, torch.float16)):
        p, m, _ = lv.compute_rollout_correction_and_rejection_mask(old.to(od), rollout.to(od), mask.to(md),
                                                                   rollout_is="token")
        assert p.batch["rollout_is_weights"].dtype == want and m.dtype == md, (od, md)
    # numpy inputs: float32 weights, as logratio.correct
    p, _, _ = lv.compute_rollout_correction_and_rejection_mask(old.double().numpy(), rollout.double().numpy(),
                                                               mask.numpy(), rollout_is="token")
    assert p.batch["rollout_is_weights"].dtype == np.float32


def test_cpu_inputs_are_not_copied():
    x = torch.zeros(3, 4)
    assert support.on_host(x).data_ptr() == x.data_ptr()
    assert support.to_device(x, x.device) is x
    assert support.as_verl_weights(x, torch.float32, x.device) is x


def test_is_and_rs_metric_helpers_match_verl():
    old, rollout, mask = inputs(torch.float32)
    lr = old - rollout
    w = torch.exp(lr.clamp(-20, 20)) * mask
    got = lv.compute_is_metrics(w, lr, mask, "token", 2.0)
    want = META["calls"]["float32/weights_token"]["metrics"]
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=2e-6, abs=1e-7), k
    lr_sum = (lr * mask).sum(-1, keepdim=True)
    w = torch.exp(lr_sum.clamp(-20, 20)).expand_as(lr) * mask
    got = lv.compute_is_metrics(w, lr_sum, mask, "sequence", 3.0)
    want = META["calls"]["float32/weights_sequence"]["metrics"]
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=2e-6, abs=1e-7), k
    safe = lr.clamp(-20, 20)
    k3 = torch.exp(safe) - 1 - safe
    got = lv.compute_rs_metrics("token_k3", k3, mask, mask.sum(-1) > 0, level="token", per_sequence_values=None,
                                rollout_rs_threshold=1.0, rollout_rs_threshold_lower=0.0, apply_lower_threshold=False)
    want = {k: v for k, v in META["calls"]["float32/rejection_token_k3"]["metrics"].items()
            if k.startswith("rollout_rs_token_k3_") and not k.endswith("masked_fraction")}
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=2e-6, abs=1e-7), k


def test_verl_checks():
    old, rollout, mask = inputs(torch.float32)
    with pytest.raises(ValueError, match="at least one valid token"):
        lv.compute_rollout_correction_and_rejection_mask(old, rollout, torch.zeros_like(mask), rollout_is="token")
    with pytest.raises(AssertionError):
        lv.compute_offpolicy_metrics(old, rollout, torch.zeros_like(mask))
    with pytest.raises(ValueError, match="rollout_rs_threshold must be explicitly provided"):
        lv.compute_rollout_correction_and_rejection_mask(old, rollout, mask, rollout_rs="token_k1")
    with pytest.raises(ValueError, match="rollout_rs_threshold must be provided"):
        lv.compute_rollout_rejection_mask(old - rollout, mask, "token_k1")
    empty = torch.zeros(0, 5)
    m, metrics = lv.compute_rollout_rejection_mask(empty, empty, "token_k1", 2.0)
    assert m is empty and metrics == {}
    assert lv.SAFETY_BOUND == 20.0 and len(lv.SUPPORTED_ROLLOUT_RS_OPTIONS) == 11
    assert lv.TOKEN_LEVEL_ROLLOUT_RS_OPTIONS < lv.SUPPORTED_ROLLOUT_RS_OPTIONS


def test_add_to_batch_and_bypass_mode():
    old, rollout, mask = inputs(torch.float32)
    batch = lv.DataProto.from_dict(tensors={"old_log_probs": old, "rollout_log_probs": rollout,
                                            "response_mask": mask})
    config = {"rollout_is": "sequence", "rollout_is_threshold": 3.0, "rollout_rs": "token_k3",
              "rollout_rs_threshold": 1.0}
    batch, metrics = lv.compute_rollout_correction_and_add_to_batch(batch, config)
    want_mask = torch.from_numpy(EXPECTED["float32/rejection_token_k3/response_mask"])
    assert torch.equal(batch.batch["response_mask"], want_mask)
    assert torch.allclose(batch.batch["rollout_is_weights"],
                          torch.from_numpy(EXPECTED["float32/weights_sequence/rollout_is_weights"]), rtol=2.4e-7)
    assert "rollout_corr/rollout_rs_token_k3_mean" in metrics
    m = lv.compute_rollout_corr_metrics_from_logprobs(old, rollout, mask)
    assert m["rollout_corr/kl"] == pytest.approx(META["calls"]["float32/offpolicy"]["metrics"]["kl"], rel=1e-6)
    loss_config = {}
    lv.apply_bypass_mode(batch, config, loss_config)
    assert batch.batch["old_log_probs"] is rollout and loss_config == {"rollout_correction": config,
                                                                      "loss_mode": "bypass_mode"}
    with pytest.raises(ValueError, match="requires rollout_log_probs"):
        lv.apply_bypass_mode(lv.DataProto.from_dict(tensors={"x": old}), config, {})


def _git_blob(path):
    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_vendored_files_unmodified():
    assert _git_blob(os.path.join(VENDOR, "test_rollout_corr.py")) == "aafbbf9b440538d6a092eccec779433712aa8d3f"
    assert _git_blob(os.path.join(VENDOR, "test_rollout_corr_integration.py")) == \
        "1f05414d2e142ac6b6adf4bf1130c5eb6ad5dd80"
    assert "Apache License" in open(os.path.join(VENDOR, "LICENSE")).read()


def test_numpy_positive_inputs_as_torch():
    old, rollout, mask = inputs(torch.float32)
    kw = dict(rollout_is="token", rollout_rs="seq_sum_k2", rollout_rs_threshold=2.5)
    p, m, met = lv.compute_rollout_correction_and_rejection_mask(old, rollout, mask, **kw)
    q, n, met2 = lv.compute_rollout_correction_and_rejection_mask(old.numpy(), rollout.numpy(), mask.numpy(), **kw)
    assert np.array_equal(p.batch["rollout_is_weights"].numpy(), q.batch["rollout_is_weights"])
    assert np.array_equal(m.numpy(), n) and met == pytest.approx(met2, rel=1e-12)
