"""The package's API on numpy and torch inputs against numpy computations (SPEC's formulas)."""
import threading

import numpy as np
import pytest

import logratio
from conftest import from_bf16_bits, to_bf16_bits

torch = pytest.importorskip("torch")


def close(a, b, rel=1e-6, abs_=1e-12):
    return abs(a - b) <= max(rel * abs(b), abs_)


def numpy_panel(train, rollout, mask):
    d = train.astype(np.float64)[mask] - rollout.astype(np.float64)[mask]
    dc = np.clip(d, -20, 20)
    return {"tokens": d.size, "delta_mean": d.mean(), "delta_abs_mean": np.abs(d).mean(), "delta_std": d.std(),
            "delta_max": d.max(), "delta_abs_max": np.abs(d).max(), "kl_k1": (-d).mean(),
            "kl_k3": (np.expm1(dc) - dc).mean(), "chi2": np.expm1(2 * dc).mean(), "ratio_mean": np.exp(dc).mean(),
            "delta_q0.99": np.quantile(d, 0.99), "abs_delta_q0.9": np.quantile(np.abs(d), 0.9)}


def same_dict(a, b, rel=1e-12):
    """Equal keys; values equal to `rel` (None where None)."""
    assert a.keys() == b.keys(), set(a) ^ set(b)
    for k in a:
        if a[k] is None or b[k] is None:
            assert a[k] is b[k], k
        else:
            assert close(a[k], b[k], rel, 0.0), (k, a[k], b[k])
    return True


def check_panel(p, ref):
    for k, v in ref.items():
        assert close(p[k], v), (k, p[k], v)


def test_panel_numpy_and_location(batch):
    train, rollout, mask, _ = batch
    p = logratio.panel(train, rollout, mask)
    check_panel(p, numpy_panel(train, rollout, mask))
    d = np.where(mask, np.abs(train.astype(np.float64) - rollout), -1)
    r, c = np.unravel_index(np.argmax(d), d.shape)
    assert (p["delta_abs_max_row"], p["delta_abs_max_column"]) == (r, c)


def test_panel_torch_bf16_int64_mask_requires_grad(batch):
    train, rollout, mask, _ = batch
    tb, rb = to_bf16_bits(train), to_bf16_bits(rollout)
    tt = torch.from_numpy(from_bf16_bits(tb)).to(torch.bfloat16).requires_grad_(True)
    rt = torch.from_numpy(from_bf16_bits(rb)).to(torch.bfloat16)
    mt = torch.from_numpy(mask.astype(np.int64))
    p = logratio.panel(tt, rt, mt)
    check_panel(p, numpy_panel(from_bf16_bits(tb), from_bf16_bits(rb), mask))
    # the same through numpy uint16 bits
    assert logratio.panel(tb, rb, mask)["kl_k3"] == p["kl_k3"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mask_dtype", ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"])
def test_dtypes_torch_and_numpy(batch, dtype, mask_dtype):
    train, rollout, mask, _ = batch
    t, r, m = train.astype(dtype), rollout.astype(dtype), mask.astype(mask_dtype)
    ref = numpy_panel(t, r, mask)
    pn = logratio.panel(t, r, m)
    pt = logratio.panel(torch.from_numpy(t), torch.from_numpy(r), torch.from_numpy(m))
    check_panel(pn, ref)
    same_dict(pn, pt, 0.0)


def test_strided_rows_read_in_place(batch):
    train, rollout, mask, _ = batch
    B, T = train.shape
    # a padded batch [B, P + T] whose response is the slice [:, -T:]; the prompt part holds NaN
    full_t = np.full((B, 37 + T), np.nan, np.float32)
    full_r = np.full((B, 37 + T), np.nan, np.float32)
    full_t[:, -T:], full_r[:, -T:] = train, rollout
    st, sr = torch.from_numpy(full_t)[:, -T:], torch.from_numpy(full_r)[:, -T:]
    assert not st.is_contiguous()
    p = logratio.panel(st, sr, torch.from_numpy(mask))
    same_dict(p, logratio.panel(train, rollout, mask))
    w, k, m = logratio.correct(st, sr, torch.from_numpy(mask), rollout_is="token", rollout_rs="token_k1",
                               rollout_rs_threshold="0.97_1.03")
    w0, k0, m0 = logratio.correct(train, rollout, mask, rollout_is="token", rollout_rs="token_k1",
                                  rollout_rs_threshold="0.97_1.03")
    assert torch.equal(w, torch.from_numpy(w0)) and torch.equal(k, torch.from_numpy(k0)) and same_dict(m, m0)
    q = logratio.quantiles(full_t[:, -T:], full_r[:, -T:], mask, q=[0.1, 0.5])
    assert np.array_equal(q, logratio.quantiles(train, rollout, mask, q=[0.1, 0.5]))
    # a column-strided view is copied, with the same result
    wide_t, wide_r = np.zeros((B, 2 * T), np.float32), np.zeros((B, 2 * T), np.float32)
    wide_t[:, ::2], wide_r[:, ::2] = train, rollout
    same_dict(logratio.panel(torch.from_numpy(wide_t)[:, ::2], wide_r[:, ::2], mask), p)


def test_packed_int32_and_int64_offsets(batch):
    train, rollout, mask, lens = batch
    p = logratio.panel(train, rollout, mask)
    for dt in (np.int32, np.int64):
        cu = np.concatenate([[0], np.cumsum(lens)]).astype(dt)
        pk = logratio.panel(torch.from_numpy(train[mask]), torch.from_numpy(rollout[mask]),
                            cu_seqlens=torch.from_numpy(cu))
        assert pk["tokens"] == p["tokens"] and close(pk["kl_k3"], p["kl_k3"], 1e-12)


def test_correct_outputs_follow_the_input_kind(batch):
    train, rollout, mask, _ = batch
    kw = dict(rollout_is="token", rollout_is_threshold=1.05, rollout_rs="token_k1", rollout_rs_threshold="0.97_1.03",
              rollout_token_veto_threshold=0.9)
    w, keep, m = logratio.correct(train, rollout, mask, **kw)
    d = train.astype(np.float64) - rollout.astype(np.float64)
    w_ref = np.where(mask, np.minimum(np.exp(np.clip(d, -20, 20)), 1.05), 0).astype(np.float32)
    assert isinstance(w, np.ndarray) and w.dtype == np.float32 and keep.dtype == np.bool_
    assert np.array_equal(w[mask], w_ref[mask])
    k1 = -np.clip(d, -20, 20)
    tok_ok = (k1 >= np.log(0.97)) & (k1 <= np.log(1.03))
    vetoed = np.array([np.any(mask[r] & (d[r] < np.log(0.9))) for r in range(len(d))])
    assert np.array_equal(keep, mask & tok_ok & ~vetoed[:, None])
    assert close(m["rollout_is_mean"], np.exp(np.clip(d, -20, 20))[mask].mean())
    for mdt in (torch.bool, torch.uint8, torch.int64, torch.float32):
        wt, kt, mt = logratio.correct(torch.from_numpy(train), torch.from_numpy(rollout),
                                      torch.from_numpy(mask).to(mdt), prefix="rollout_corr/", **kw)
        assert wt.dtype == torch.float32 and kt.dtype == mdt
        assert np.array_equal(wt.numpy(), w) and np.array_equal(kt.numpy().astype(bool), keep)
        assert mt == {"rollout_corr/" + k: v for k, v in m.items()}
    # rollout_rs_threshold as a float, as verl allows
    _, k_float, _ = logratio.correct(train, rollout, mask, rollout_rs="seq_max_k2", rollout_rs_threshold=0.01)
    _, k_str, _ = logratio.correct(train, rollout, mask, rollout_rs="seq_max_k2", rollout_rs_threshold="0.01")
    assert np.array_equal(k_float, k_str)
    # no IS: no weights (as verl)
    assert logratio.correct(train, rollout, mask, rollout_rs="token_k1", rollout_rs_threshold=1.1)[0] is None


def test_correct_nonfinite_omit_is_masking_out(batch):
    train, rollout, mask, _ = batch
    bad = rollout.copy()
    rows, cols = np.nonzero(mask)
    bad[rows[3], cols[3]] = np.nan
    bad[rows[-2], cols[-2]] = -np.inf
    kw = dict(rollout_is="sequence", rollout_is_threshold=2.0, rollout_rs="seq_mean_k3", rollout_rs_threshold=0.01)
    with pytest.raises(logratio.Error, match="row"):
        logratio.correct(train, bad, mask, **kw)
    w, keep, m = logratio.correct(train, bad, mask, nonfinite="omit", **kw)
    fewer = mask.copy()
    fewer[rows[3], cols[3]] = fewer[rows[-2], cols[-2]] = False
    w_ref, keep_ref, m_ref = logratio.correct(train, rollout, fewer, **kw)
    assert np.array_equal(w, w_ref) and np.array_equal(keep, keep_ref)
    assert m.pop("nonfinite_tokens") == 2 and same_dict(m, m_ref, 0.0)
    for flavour in ("slime", "trl"):
        kwf = dict(flavour=flavour, mode="slime:tis" if flavour == "slime" else "trl:token_truncate")
        wf, kf, mf = logratio.correct(train, bad, mask, nonfinite="omit", **kwf)
        wr, kr, _ = logratio.correct(train, rollout, fewer, **kwf)
        assert np.array_equal(kf, kr) and np.array_equal(wf[fewer], wr[fewer])


def test_quantiles_split_logits_kll(batch):
    train, rollout, mask, _ = batch
    d = train.astype(np.float64)[mask] - rollout.astype(np.float64)[mask]
    for method in ("linear", "median_unbiased", "lower"):
        q = logratio.quantiles(torch.from_numpy(train), torch.from_numpy(rollout), torch.from_numpy(mask),
                               q=[0.01, 0.5, 0.999], of="abs_delta", method=method)
        assert np.allclose(q, np.quantile(np.abs(d), [0.01, 0.5, 0.999], method=method), rtol=1e-12, atol=0)
    old = np.minimum(rollout + 0.001, 0).astype(np.float32)
    s = logratio.split_mismatch(train, rollout, old, mask)
    assert s["tokens"] == mask.sum()
    assert close(s["numeric"]["delta_mean"], (old.astype(np.float64) - rollout)[mask].mean())
    assert close(s["lag"]["delta_mean"], (train.astype(np.float64) - old)[mask].mean())
    rng = np.random.default_rng(1)
    zt = rng.standard_normal((6, 50)).astype(np.float32)
    zr = zt + 0.1 * rng.standard_normal((6, 50)).astype(np.float32)
    tok = rng.integers(0, 50, size=6)
    out = logratio.logits(torch.from_numpy(zt).to(torch.bfloat16), torch.from_numpy(zr).to(torch.bfloat16),
                          torch.from_numpy(tok))
    zt64 = torch.from_numpy(zt).to(torch.bfloat16).double().numpy()
    zr64 = torch.from_numpy(zr).to(torch.bfloat16).double().numpy()
    lp = zt64 - np.log(np.exp(zt64).sum(1, keepdims=True))
    lq = zr64 - np.log(np.exp(zr64).sum(1, keepdims=True))
    assert np.allclose(out["train_entropy"], -(np.exp(lp) * lp).sum(1), rtol=1e-9)
    assert np.allclose(out["kl_train_rollout"], (np.exp(lp) * (lp - lq)).sum(1), rtol=1e-8, atol=1e-12)
    assert np.allclose(out["kl_rollout_train"], (np.exp(lq) * (lq - lp)).sum(1), rtol=1e-8, atol=1e-12)
    assert np.allclose(out["tv"], 0.5 * np.abs(np.exp(lp) - np.exp(lq)).sum(1), rtol=1e-8, atol=1e-12)
    assert np.allclose(out["train_logprob"], lp[np.arange(6), tok], rtol=1e-12)
    sk = logratio.KLLSketch(k=200)
    sk.update(torch.from_numpy(d.astype(np.float32)))
    other = logratio.KLLSketch()
    other.update(d[:100])
    sk.merge(other)
    assert sk.n == d.size + 100
    back = logratio.KLLSketch.deserialize(sk.serialize())
    assert back.quantile(0.5) == sk.quantile(0.5) and back.rank(0.0) == sk.rank(0.0)
    assert abs(sk.rank(float(np.median(d))) - 0.5) < 0.05


def test_panel_states_merge(batch):
    train, rollout, mask, _ = batch
    p = logratio.panel(train, rollout, mask)
    states = [logratio.panel_state(train[a:a + 6], rollout[a:a + 6], mask[a:a + 6]) for a in range(0, 24, 6)]
    merged = logratio.merge_panel_states(states)
    assert merged["tokens"] == p["tokens"] and close(merged["kl_k3"], p["kl_k3"])


def test_gil_released(batch):
    train, rollout, mask, _ = batch
    big = [np.tile(a, (40, 1)) for a in (train, rollout, mask)]
    out = [None, None]

    def run(i):
        out[i] = logratio.panel(*big, quantiles=False)["delta_abs_mean"]
    th = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    [t.start() for t in th]
    [t.join() for t in th]
    assert out[0] == out[1]


def test_simd_level_names():
    assert logratio.simd_level() in logratio.available_simd_levels()
    assert logratio.available_simd_levels()[:2] == ["scalar", "sse2"]
