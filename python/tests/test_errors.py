"""Every error the issue lists: the argument named, its dtype by name, its shape; bad values located."""
import numpy as np
import pytest

import logratio

torch = pytest.importorskip("torch")


@pytest.fixture
def small():
    rng = np.random.default_rng(2)
    r = (-np.abs(rng.standard_normal((3, 8)))).astype(np.float32)
    t = np.minimum(r + 0.01, 0).astype(np.float32)
    return t, r, np.ones((3, 8), bool)


def raises(exc, *needles):
    class _Ctx:
        def __enter__(self):
            self.cm = pytest.raises(exc)
            self.info = self.cm.__enter__()
            return self.info

        def __exit__(self, *a):
            out = self.cm.__exit__(*a)
            msg = str(self.info.value)
            for n in needles:
                assert n in msg, (n, msg)
            assert "Invoked with" not in msg  # never pybind11's signature dump
            return out
    return _Ctx()


def test_dtype_errors_name_argument_dtype_and_shape(small):
    t, r, m = small
    with raises(TypeError, "rollout", "torch.float32", "train", "torch.bfloat16"):
        logratio.panel(torch.from_numpy(t).bfloat16(), torch.from_numpy(r), m)
    with raises(TypeError, "train", "int32", "[3, 8]", "float32, float64, float16, bfloat16"):
        logratio.panel(t.astype(np.int32), r.astype(np.int32), m)
    with raises(TypeError, "mask", "torch.complex64"):
        logratio.panel(t, r, torch.ones(3, 8, dtype=torch.complex64))
    with raises(TypeError, "cu_seqlens", "float32"):
        logratio.panel(t.ravel(), r.ravel(), cu_seqlens=np.array([0, 24], np.float32))
    with raises(TypeError, "train", "list"):
        logratio.panel([[0.0]], r, m)


def test_shape_errors_give_shapes(small):
    t, r, m = small
    with raises(ValueError, "rollout has shape [3, 7]", "train has shape [3, 8]"):
        logratio.panel(t, r[:, :7], m)
    with raises(ValueError, "mask has shape [3, 4]", "[3, 8]"):
        logratio.panel(t, r, m[:, :4])
    with raises(ValueError, "train", "[24]", "padded [B, T]"):
        logratio.panel(t.ravel(), r.ravel(), m.ravel())
    with raises(ValueError, "cu_seqlens"):
        logratio.panel(t.ravel(), r.ravel(), cu_seqlens=np.array([0, 5, 23]))


def test_bad_values_name_tensor_row_and_column(small):
    t, r, m = small
    bad = t.copy()
    bad[2, 5] = np.nan
    with raises(ValueError, "train_logprobs", "2", "5"):
        logratio.panel(torch.from_numpy(bad), torch.from_numpy(r), m)
    with pytest.raises(logratio.Error):
        logratio.correct(bad, r, m, rollout_is="token")
    pos = r.copy()
    pos[1, 3] = 0.5
    with raises(ValueError, "rollout_logprobs", "1", "3"):
        logratio.quantiles(t, pos, m)


def test_option_errors(small):
    t, r, m = small
    for threads in (0, -1):
        with raises(ValueError, "threads", ">= 1", str(threads)):
            logratio.panel(t, r, m, threads=threads)
        with raises(ValueError, "threads"):
            logratio.correct(t, r, m, rollout_is="token", threads=threads)
    with raises(TypeError, "threads", "str"):
        logratio.panel(t, r, m, threads="2")
    with raises(ValueError, "rollout_is", "positive"):
        logratio.correct(t, r, m, rollout_is="token", rollout_is_threshold=0)
    with raises(ValueError, "rollout_is", "banana"):
        logratio.correct(t, r, m, rollout_is="banana")
    with raises(ValueError, "rollout_rs_threshold", "required"):
        logratio.correct(t, r, m, rollout_rs="token_k1")
    with raises(TypeError, "rollout_rs_threshold", "list"):
        logratio.correct(t, r, m, rollout_rs="token_k1", rollout_rs_threshold=[1.0])
    with raises(ValueError, "rollout_rs"):
        logratio.correct(t, r, m, rollout_rs="token_k9", rollout_rs_threshold=1.1)
    with raises(ValueError, "nonfinite"):
        logratio.panel(t, r, m, nonfinite="ignore")
    with raises(ValueError, "nonfinite"):
        logratio.correct(t, r, m, nonfinite="skip")
    with raises(ValueError, "of"):
        logratio.quantiles(t, r, m, of="rho")
    with raises(ValueError, "q[1]"):
        logratio.quantiles(t, r, m, q=[0.5, 1.5])
    with raises(ValueError, "SIMD level", "avx1024"):
        logratio._logratio.set_simd_level("avx1024")


def test_gpu_tensor_error_message():
    class FakeCuda:  # what a CUDA tensor reports through DLPack
        device = "cuda:0"

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be exported")
    with raises(ValueError, "train", "cuda:0", "CPU"):
        logratio.panel(FakeCuda(), FakeCuda())


def test_empty_is_empty_for_every_layout(small):
    """[B, 0] and [0, T], numpy and torch: an empty panel, not a null-pointer error (one empty-input rule)."""
    t, r, m = small
    for shape in ((4, 0), (0, 8), (0, 0)):
        for make in (np.zeros, lambda s, dtype: torch.zeros(s, dtype=getattr(torch, np.dtype(dtype).name))):
            tt, rr = make(shape, dtype=np.float32), make(shape, dtype=np.float32)
            p = logratio.panel(tt, rr)
            assert p["tokens"] == 0 and p["sequences"] == 0 and p["delta_mean"] is None, (shape, p)
            mm = make(shape, dtype=np.uint8)
            assert logratio.panel(tt, rr, mm)["tokens"] == 0
            w, keep, metrics = logratio.correct(tt, rr, mm, rollout_is="token")
            assert tuple(w.shape) == shape and tuple(keep.shape) == shape
            assert all(v is None for k, v in metrics.items() if k.endswith("_mean")), metrics


def test_non_binary_mask_is_an_error_naming_row_and_column(small):
    t, r, m = small
    for bad_value, dtype in ((0.5, np.float32), (np.nan, np.float32), (2.0, np.float64), (2, np.int64),
                             (-1, np.int8), (3, np.uint8)):
        mm = m.astype(dtype)
        mm[1, 6] = bad_value
        for mask in (mm, torch.from_numpy(mm)):
            with raises(ValueError, "mask", "row 1", "column 6", "not 0 or 1"):
                logratio.panel(t, r, mask)
            with raises(ValueError, "mask", "row 1", "column 6"):
                logratio.correct(t, r, mask, rollout_is="token")
    # a strided (non-contiguous) float mask is checked too
    wide = np.ones((3, 16), np.float32)
    wide[2, 10] = 0.25
    with raises(ValueError, "mask", "row 2", "column 5"):
        logratio.panel(t, r, wide[:, ::2])
    # 0 and 1 in every dtype are fine
    for dtype in (np.float32, np.float64, np.int64, np.uint8, bool):
        assert logratio.panel(t, r, m.astype(dtype))["tokens"] == 24


def test_correct_on_an_all_masked_batch_gives_none_as_panel_does(small):
    t, r, m = small
    none = np.zeros_like(m)
    p = logratio.panel(t, r, none)
    assert p["delta_abs_mean"] is None
    for kw in (dict(rollout_is="token"), dict(mode="slime:mis-clip-token"), dict(mode="trl:token_mask"),
               dict(rollout_rs="token_k1", rollout_rs_threshold="0.5_2")):
        _, _, metrics = logratio.correct(t, r, none, **kw)
        assert metrics, kw
        for k, v in metrics.items():
            assert v is None or (isinstance(v, float) and v == v), (kw, k, v)  # never NaN
    _, _, metrics = logratio.correct(t, r, none, rollout_is="token")
    assert metrics["rollout_is_mean"] is None


def test_nonfinite_omit_leaves_out_nan_but_a_positive_log_prob_raises(small):
    """What the docstrings of panel() and correct() say: omit is for NaN/Inf only."""
    t, r, m = small
    nan = t.copy()
    nan[0, 2] = np.nan
    assert logratio.panel(t, nan, m, nonfinite="omit")["nonfinite_tokens"] == 1
    assert "NaN or" in logratio.panel.__doc__ and "positive log-prob is" in logratio.panel.__doc__
    pos = r.copy()
    pos[1, 3] = 0.5
    for nf in ("raise", "omit"):
        with raises(ValueError, "rollout_logprobs", "positive", "1", "3"):
            logratio.panel(t, pos, m, nonfinite=nf)
        with pytest.raises(ValueError):
            logratio.correct(t, pos, m, rollout_is="token", nonfinite=nf)


def test_gpu_tensor_error_names_the_device_without_a_device_attribute():
    class FakeCuda:  # a DLPack producer with no .device (CuPy-, JAX-like)
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be exported")
    with raises(ValueError, "train", "cuda:1 tensor", "CPU", "train.cpu()"):
        logratio.panel(FakeCuda(), FakeCuda())
    try:
        logratio.panel(FakeCuda(), FakeCuda())
    except ValueError as e:
        assert "DLPack device type" not in str(e), e

    class FakeRocm:
        def __dlpack_device__(self):
            return (10, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be exported")
    with raises(ValueError, "rocm:0"):
        logratio.panel(FakeRocm(), FakeRocm())
