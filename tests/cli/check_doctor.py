#!/usr/bin/python3
"""ctest: `logratio doctor` end to end on the planted-bug dumps written by
make_doctor_dumps (tests/doctor/planted.hpp).

  check_doctor.py TOOL DIR

For every dump: the exit code (0 when nothing fails, 3 when a check fails),
the JSON shape {"findings": [{"check", "severity", "summary", "evidence"}],
"breakdowns": {...}} and which checks warn or fail; the text mode's exit
code; `--each DIR` (exit 3, per-dump findings, the summary of what each
check touches)."""
import json, subprocess, sys

tool, d = sys.argv[1], sys.argv[2]
EXPECT = {  # dump -> (exit code, {check: severity} of the non-ok findings)
    "clean": (0, {}),
    "shift_ahead": (3, {"alignment": "fail"}),
    "shift_behind": (3, {"alignment": "fail"}),
    "zero_fill": (3, {"filled_values": "fail"}),
    "sentinel": (3, {"filled_values": "fail"}),
    "temperature": (3, {"temperature": "fail"}),
    "top_p": (0, {"processed_logprobs": "warn"}),
    "desync": (3, {"desync": "fail"}),
    "first_token": (3, {"position": "fail"}),
    "healthy_bf16": (0, {}),  # a normal bf16 engine's level: silent
    "drift": (0, {"numeric": "warn"}),
}
CHECKS = ["alignment", "filled_values", "temperature", "processed_logprobs", "desync", "position",
          "low_probability", "policy_lag", "numeric"]


def run(*args):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check_findings(name, findings, raised_want):
    assert [f["check"] for f in findings] == CHECKS, (name, [f["check"] for f in findings])
    for f in findings:
        assert list(f) == ["check", "severity", "summary", "evidence"], (name, list(f))
        assert f["severity"] in ("ok", "warn", "fail", "not assessed"), f
        assert isinstance(f["summary"], str) and f["summary"], f
        assert "nan" not in f["summary"], f  # NaN is never printed as a number or a ratio
        # a check it could not assess says so, never "ok"
        assert ("not assessed" in f["summary"]) == (f["severity"] == "not assessed"), f
        assert isinstance(f["evidence"], dict) and f["evidence"]["what_to_check"], f
    raised = {f["check"]: f["severity"] for f in findings if f["severity"] in ("warn", "fail")}
    assert raised == raised_want, (name, raised, raised_want)


for name, (code, raised_want) in EXPECT.items():
    path = f"{d}/{name}.safetensors"
    rc, out, err = run("doctor", path, "--json")
    assert rc == code, (name, rc, err)
    j = json.loads(out)
    assert list(j) == ["findings", "breakdowns"], list(j)
    check_findings(name, j["findings"], raised_want)
    b = j["breakdowns"]
    assert list(b) == ["by_position", "by_rollout_prob", "joint"], list(b)
    counts = b["joint"]["counts"]
    assert len(counts) == 64 and all(len(r) == 64 for r in counts)
    n = sum(map(sum, counts))
    assert n == sum(x["count"] for x in b["by_position"]) == sum(x["count"] for x in b["by_rollout_prob"]) > 9000
    assert b["by_position"][0]["first_position"] == 0 and b["by_position"][1]["first_position"] == 1
    rc_text, text, _ = run("doctor", path)
    assert rc_text == code and "verdict:" in text, (name, rc_text)
    assert "nan" not in text, (name, text)
    lag = [line for line in text.splitlines() if line.startswith("policy_lag")]
    assert lag and "not assessed" in lag[0] and " ok " not in lag[0], (name, lag)  # no old_logprobs given

one = json.loads(run("doctor", f"{d}/sentinel.safetensors", "--json")[1])
fv = [f for f in one["findings"] if f["check"] == "filled_values"][0]
assert fv["evidence"]["tensor"] == "rollout_logprobs" and fv["evidence"]["rollout_sentinel_value"] == -9999.0, fv

rc, out, err = run("doctor", "--each", d, "--json")
assert rc == 3, (rc, err)
j = json.loads(out)
assert list(j) == ["dumps", "summary"]
assert len(j["dumps"]) == len(EXPECT)
for x in j["dumps"]:
    name = x["label"].removesuffix(".safetensors")
    check_findings(name, x["findings"], EXPECT[name][1])
summary = {s["check"]: s for s in j["summary"]}
assert summary["alignment"]["fail"] == 2 and summary["alignment"]["dumps"] == ["shift_ahead.safetensors",
                                                                              "shift_behind.safetensors"], summary
assert summary["numeric"]["fail"] == 0 and summary["numeric"]["warn"] == 1 and summary["numeric"]["dumps"] == [
    "drift.safetensors"], summary
rc, out, _ = run("doctor", "--each", d)
assert rc == 3 and "summary by check:" in out and "alignment           fail in 2" in out, out
print(f"ok: {len(EXPECT)} dumps, exit codes, JSON shape and findings as expected; --each summary")
