"""ctest: the Python module against a numpy computation of the same values.

Expected values are computed here with numpy in float64 from the same inputs
(SPEC's formulas); the module must agree to SPEC's 1e-6 relative.
"""
import sys
import threading
import numpy as np
import logratio


def close(a, b, rel=1e-6, abs_=1e-12):
    return abs(a - b) <= max(rel * abs(b), abs_)


def numpy_panel(train, rollout, mask):
    d = train.astype(np.float64)[mask] - rollout.astype(np.float64)[mask]
    dc = np.clip(d, -20, 20)
    rho = np.exp(dc)
    return {"tokens": d.size, "delta_mean": d.mean(), "delta_abs_mean": np.abs(d).mean(), "delta_std": d.std(),
            "delta_max": d.max(), "kl_k1": (-d).mean(), "kl_k3": (np.expm1(dc) - dc).mean(),
            "chi2": np.expm1(2 * dc).mean(), "ratio_mean": rho.mean(),
            "delta_q0.99": np.quantile(d, 0.99), "abs_delta_q0.9": np.quantile(np.abs(d), 0.9)}


def main():
    rng = np.random.default_rng(5)
    B, T = 24, 200
    rollout = (-np.abs(rng.standard_t(4, size=(B, T))) * 0.5).astype(np.float32)
    train = np.minimum(rollout + 0.02 * rng.standard_normal((B, T)), 0).astype(np.float32)
    lens = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lens[:, None]
    checked = 0

    # panel, padded float32 with a bool mask
    p = logratio.panel(train, rollout, mask)
    for k, v in numpy_panel(train, rollout, mask).items():
        assert close(p[k], v), (k, p[k], v)
        checked += 1
    # packed layout of the same tokens, uint8 mask absent: the same panel
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    pk = logratio.panel(train[mask], rollout[mask], cu_seqlens=cu)
    assert pk["tokens"] == p["tokens"] and close(pk["delta_abs_mean"], p["delta_abs_mean"], 1e-12)
    # float16 and bf16 (uint16 bits): against numpy on the rounded values
    t16, r16 = train.astype(np.float16), rollout.astype(np.float16)
    p16 = logratio.panel(t16, r16, mask.astype(np.uint8))
    ref16 = numpy_panel(t16, r16, mask)
    assert close(p16["delta_abs_mean"], ref16["delta_abs_mean"]), (p16["delta_abs_mean"], ref16["delta_abs_mean"])
    def to_bf16(a):  # round to nearest even, as the engines do
        u = a.view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    tb, rb = to_bf16(train), to_bf16(rollout)
    back = lambda b: (b.astype(np.uint32) << 16).view(np.float32)
    pb = logratio.panel(tb, rb, mask)
    refb = numpy_panel(back(tb), back(rb), mask)
    assert close(pb["kl_k3"], refb["kl_k3"]) and close(pb["delta_mean"], refb["delta_mean"])
    checked += 4

    # token TIS with a k1 band and veto: weights and mask against numpy
    w, keep, m = logratio.correct(train, rollout, mask, is_level="token", is_threshold=1.05, rs="token_k1",
                                  rs_threshold="0.97_1.03", veto=0.9)
    d = train.astype(np.float64) - rollout.astype(np.float64)
    w_ref = np.where(mask, np.minimum(np.exp(np.clip(d, -20, 20)), 1.05), 0).astype(np.float32)
    assert w.dtype == np.float32 and w.shape == (B, T)
    assert np.array_equal(w[mask], w_ref[mask]), np.abs(w[mask] - w_ref[mask]).max()
    k1 = -np.clip(d, -20, 20)
    tok_ok = (k1 >= np.log(0.97)) & (k1 <= np.log(1.03))
    vetoed = np.array([np.any(mask[r] & (d[r] < np.log(0.9))) for r in range(B)])
    keep_ref = mask & tok_ok & ~vetoed[:, None]
    assert np.array_equal(keep.astype(bool), keep_ref), (keep.sum(), keep_ref.sum())
    assert close(m["rollout_is_mean"], np.exp(np.clip(d, -20, 20))[mask].mean())
    checked += 3

    # exact quantiles = np.quantile
    q = logratio.quantiles(train, rollout, mask, q=[0.01, 0.5, 0.999], of="abs_delta", method="median_unbiased")
    ref = np.quantile(np.abs(d[mask]), [0.01, 0.5, 0.999], method="median_unbiased")
    assert np.allclose(q, ref, rtol=1e-12, atol=0), (q, ref)
    checked += 3

    # serialized states merge to the whole panel (the torch.distributed path)
    states = [logratio.panel_state(train[a:a + 6], rollout[a:a + 6], mask[a:a + 6]) for a in range(0, B, 6)]
    merged = logratio.merge_panel_states(states)
    assert merged["tokens"] == p["tokens"] and close(merged["kl_k3"], p["kl_k3"])
    checked += 2

    # no copy: a strided view is refused with a clear message; errors carry names
    for bad, msg in [(lambda: logratio.panel(train[:, ::2], rollout[:, ::2], mask[:, ::2]), "C-contiguous"),
                     (lambda: logratio.panel(train, rollout.astype(np.float64), mask), "dtype mismatch"),
                     (lambda: logratio.panel(train.astype(np.int32), rollout.astype(np.int32), mask), "not supported"),
                     (lambda: logratio.correct(train, rollout, mask, is_level="token", is_threshold=0), "positive")]:
        try:
            bad()
        except (ValueError, TypeError) as e:
            assert msg in str(e), (msg, str(e))
        else:
            raise AssertionError("no error for " + msg)
    bad = train.copy()
    bad[2, 0] = np.nan
    try:
        logratio.panel(bad, rollout, mask)
        raise AssertionError("NaN accepted")
    except ValueError as e:
        assert "train_logprobs" in str(e) and "row 2" in str(e), str(e)

    # the GIL is released: two threads run panels concurrently and agree
    big_t = np.tile(train, (40, 1)); big_r = np.tile(rollout, (40, 1)); big_m = np.tile(mask, (40, 1))
    out = [None, None]
    def run(i):
        out[i] = logratio.panel(big_t, big_r, big_m, quantiles=False)["delta_abs_mean"]
    th = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    [t.start() for t in th]
    [t.join() for t in th]
    assert out[0] == out[1] and close(out[0], p["delta_abs_mean"], 1e-9)
    print(f"python module ok: {checked} values against numpy")


if __name__ == "__main__":
    main()
    sys.exit(0)
