#!/usr/bin/python3
"""numpy as oracle: writes data/quantiles_numpy.json, the expected results of
np.quantile(method=...) for every method on a few arrays (float64, and float32
promoted to float64). Run with Debian's python3 (numpy 1.24); the output is
committed so the tests need no Python."""
import json
import numpy as np

METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear",
           "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]
PROBS = [0.0, 0.0001, 0.001, 0.01, 0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.9999, 1.0]

rng = np.random.default_rng(20261202)
arrays = {
    "one": np.array([0.25]),
    "two": np.array([-1.0, 3.0]),
    "five_ties": np.array([1.0, 1.0, 2.0, 2.0, 2.0]),
    "normal_100": rng.normal(size=100),
    "t3_1001_f32": rng.standard_t(3, size=1001).astype(np.float32).astype(np.float64) * 0.01,
    "bf16_like_4096": np.round(rng.normal(size=4096) * 64) / 256.0,
}
out = {"probs": PROBS, "cases": []}
for name, a in arrays.items():
    case = {"name": name, "data": a.tolist(), "results": {}}
    for m in METHODS:
        case["results"][m] = np.quantile(a, PROBS, method=m).tolist()
    out["cases"].append(case)
with open("data/quantiles_numpy.json", "w") as f:
    json.dump(out, f)
print("numpy", np.__version__, "->", "data/quantiles_numpy.json")
