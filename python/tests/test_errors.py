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
