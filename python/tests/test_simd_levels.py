"""Every SIMD level this CPU runs gives the scalar path's results; LOGRATIO_SIMD forces a level."""
import os
import subprocess
import sys

import numpy as np
import pytest

import logratio
from conftest import to_bf16_bits

LEVELS = logratio.available_simd_levels()
WIDE = [lv for lv in LEVELS if lv != "scalar"]


def rel_equal(a, b, rel=1e-12):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def inputs(seed, bf16):
    rng = np.random.default_rng(seed)
    B, T = 37, 301  # odd sizes: every lane tail
    r = (-np.abs(rng.standard_t(3, size=(B, T))) * 0.7).astype(np.float32)
    t = np.minimum(r + 0.05 * rng.standard_t(2, size=(B, T)), 0).astype(np.float32)
    lens = rng.integers(0, T + 1, size=B)
    m = np.arange(T)[None, :] < lens[:, None]
    if bf16:
        t, r = to_bf16_bits(t), to_bf16_bits(r)
    return t, r, m, lens


def run_all(t, r, m, lens):
    out = {}
    out["panel"] = logratio.panel(t, r, m)
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    out["packed"] = logratio.panel(t[m], r[m], cu_seqlens=cu, quantiles=False)
    for name, kw in {"tis": dict(rollout_is="token", rollout_is_threshold=2.0, rollout_rs="token_k1",
                                 rollout_rs_threshold="0.9_1.1"),
                     "seq": dict(rollout_is="sequence", rollout_is_threshold=1.5, rollout_is_batch_normalize=True,
                                 rollout_rs="seq_max_k2,seq_mean_k3", rollout_rs_threshold="0.05,0.01",
                                 rollout_token_veto_threshold=1e-3),
                     "geo": dict(rollout_is="geometric", rollout_rs="seq_mean_k1", rollout_rs_threshold=1.02)}.items():
        out[name] = logratio.correct(t, r, m, **kw)
    out["q"] = logratio.quantiles(t, r, m, q=[0, 0.001, 0.25, 0.5, 0.9, 0.999, 1], of="abs_delta")
    out["split"] = logratio.split_mismatch(t, r, np.minimum(r, t), m)
    z = np.random.default_rng(9).standard_normal((17, 1000)).astype(np.float32)
    out["logits"] = logratio.logits(z, z[::-1].copy(), np.arange(17))
    return out


def panel_rel(level):
    """SPEC's 1e-6 at avx512, whose float32-lane panel loop (include/logratio/panel/detail/panel_f32.hpp)
    computes the divergence terms of float32/bf16 inputs in float32 (bounds there); 1e-12 elsewhere."""
    return 1e-6 if level == "avx512" else 1e-12


def compare(got, ref, level):
    for k in ref["panel"]:
        assert rel_equal(got["panel"][k], ref["panel"][k], panel_rel(level)), (level, k, got["panel"][k],
                                                                               ref["panel"][k])
    for k in ref["packed"]:
        assert rel_equal(got["packed"][k], ref["packed"][k], panel_rel(level)), (level, "packed", k)
    for name in ("tis", "seq", "geo"):
        (w, k, m), (w0, k0, m0) = got[name], ref[name]
        assert np.array_equal(k, k0), (level, name, "mask")
        assert np.allclose(w, w0, rtol=2e-7, atol=0), (level, name, "weights")  # float32 outputs
        for key in m0:
            assert rel_equal(m[key], m0[key], 1e-9), (level, name, key, m[key], m0[key])
    assert np.array_equal(got["q"], ref["q"]), level  # exact selection
    for part in ("total", "numeric", "lag"):
        for key, v in ref["split"][part].items():
            assert rel_equal(got["split"][part][key], v, panel_rel(level)), (level, part, key)
    for key, v in ref["logits"].items():
        assert np.allclose(got["logits"][key], v, rtol=1e-12, atol=1e-15), (level, key)


@pytest.mark.parametrize("bf16", [False, True])
def test_every_level_matches_scalar(bf16):
    data = inputs(3, bf16)
    before = logratio.simd_level()
    try:
        logratio.set_simd_level("scalar")
        ref = run_all(*data)
        for level in WIDE:
            logratio.set_simd_level(level)
            assert logratio.simd_level() == level
            compare(run_all(*data), ref, level)
    finally:
        logratio.set_simd_level(before)


def run_with_env(value):
    env = dict(os.environ, LOGRATIO_SIMD=value)
    return subprocess.run([sys.executable, "-c", "import logratio; print(logratio.simd_level())"], env=env,
                          capture_output=True, text=True, timeout=120)


def test_default_is_the_widest_level():
    env = {k: v for k, v in os.environ.items() if k != "LOGRATIO_SIMD"}
    out = subprocess.run([sys.executable, "-c", "import logratio; print(logratio.simd_level())"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == LEVELS[-1], out


@pytest.mark.parametrize("level", LEVELS)
def test_env_forces_each_level(level):
    out = run_with_env(level)
    assert out.returncode == 0 and out.stdout.strip() == level, out


def test_env_unknown_level_is_an_error():
    out = run_with_env("avx1024")
    assert out.returncode != 0 and "unknown SIMD level 'avx1024'" in out.stderr, out
