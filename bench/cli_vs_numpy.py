#!/usr/bin/python3
"""End to end on one file: `logratio panel FILE --json` against its numpy
peer (read the same safetensors file, the float64 panel of numpy_panel.py
and the 12 quantiles of SPEC with np.quantile, print JSON), in the same run.
The file: numpy_panel.py's 2^25 float32 tokens (rows of 1024, uint8 mask
with 80% ones), written to a temporary safetensors file.

usage: cli_vs_numpy.py LOGRATIO_BINARY [LOG2N] > cli_vs_numpy.json
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.argv += [] if len(sys.argv) > 2 else ["25"]
BINARY, LOG2N = sys.argv[1], int(sys.argv[2])
sys.argv = [sys.argv[0], str(LOG2N)]
# numpy_panel.py's data and functions
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_panel as npp  # noqa: E402


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": {"float32": "F32", "uint8": "U8"}[str(a.dtype)], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, meta in header.items():
            dt = {"F32": np.float32, "U8": np.uint8}[meta["dtype"]]
            lo, hi = meta["data_offsets"]
            f.seek(base + lo)
            out[name] = np.fromfile(f, dtype=dt, count=(hi - lo) // np.dtype(dt).itemsize).reshape(meta["shape"])
        return out


def numpy_peer(path):
    t = read_safetensors(path)
    p = npp.panel(t["train_logprobs"], t["rollout_logprobs"], t["mask"])
    a, b = npp.quantiles(t["train_logprobs"], t["rollout_logprobs"], t["mask"])
    p.update({"delta_q%g" % q: v for q, v in zip([0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999], a)})
    p.update({"abs_delta_q%g" % q: v for q, v in zip([0.5, 0.9, 0.99, 0.999, 0.9999], b)})
    return json.dumps({k: float(v) for k, v in p.items()})


def best_of(f, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "dump.safetensors")
    write_safetensors(path, {"train_logprobs": npp.train, "rollout_logprobs": npp.rollout, "mask": npp.mask})
    cli = [BINARY, "panel", path, "--json"]

    def run(args):
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)

    run(cli)  # page cache warm for both sides
    cli_s = best_of(lambda: run(cli), 5)
    noq_s = best_of(lambda: run(cli + ["--no-quantiles"]), 5)
    numpy_s = best_of(lambda: numpy_peer(path), 3)
    got = json.loads(subprocess.run(cli, check=True, capture_output=True, text=True).stdout)
    want = json.loads(numpy_peer(path))
    same = {k: got.get(k) == v for k, v in want.items() if k.startswith(("delta_q", "abs_delta_q"))}
print(json.dumps({"tokens": 1 << LOG2N, "cli_seconds": cli_s, "cli_no_quantiles_seconds": noq_s,
                  "numpy_seconds": numpy_s, "ratio": numpy_s / cli_s,
                  "quantiles_bit_identical": all(same.values()), "quantile_keys": len(same)}))
