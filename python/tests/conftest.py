"""Shared inputs of the Python package's tests (run by ctest through pytest)."""
import json
import os
import struct

import numpy as np
import pytest

DATA = os.environ.get("LOGRATIO_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data"))


_SAFETENSORS = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "I64": np.int64, "BOOL": np.bool_}


def read_safetensors(path):
    """The tensors of a .safetensors file (the fixtures' dtypes) as numpy arrays."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=_SAFETENSORS[e["dtype"]]).reshape(e["shape"])
    return out


def to_bf16_bits(a):
    """float32 -> bfloat16 bits (uint16), round to nearest even as the engines do."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


@pytest.fixture
def batch():
    """Padded [24, 200] float32 log-probs with heavy-tailed delta and variable lengths."""
    rng = np.random.default_rng(5)
    B, T = 24, 200
    rollout = (-np.abs(rng.standard_t(4, size=(B, T))) * 0.5).astype(np.float32)
    train = np.minimum(rollout + 0.02 * rng.standard_t(3, size=(B, T)), 0).astype(np.float32)
    lens = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lens[:, None]
    return train, rollout, mask, lens
