#!/usr/bin/python3
"""Turns the Google Benchmark JSON and the numpy timings of one run into
bench/RESULTS.md (medians of the repetitions)."""
import json
import sys

from bench_json import cpu, header, medians
from report_more import readers_section, runs_section, summary_section

out, levels = sys.argv[1], sys.argv[2:]
numpy = json.load(open(f"{out}/numpy.json"))

print("# Benchmark results\n")
print(f"Machine: {cpu}, 2 cores. One run of `bash bench/run.sh`; medians of 3 repetitions.")
print(f"numpy {numpy['numpy']} float64 panel on the same problem: "
      f"{numpy['panel_tokens_per_s'] / 1e6:.1f} M tokens/s; np.quantile (12 quantiles): "
      f"{numpy['quantiles_tokens_per_s'] / 1e6:.1f} M tokens/s.\n")
print("The summary (the README's speed table is this block, copied by bench/readme_speed.py):\n")
summary_section(out, levels)
print()
print("Panel over float32 tokens with an 80% mask (9 bytes/token); roofline = read bandwidth of the same bytes "
      "measured in the same binary.\n")
header('level', 'benchmark', 'tokens', 'threads', 'M tokens/s', 'GB/s', 'x numpy', '% of roofline')
for level in levels:
    m = medians(f"{out}/panel_{level}.json")
    bw = {k.split("/")[2]: v["bytes_per_second"] for k, v in m.items() if k.startswith("read_bandwidth/")}
    for name, b in m.items():
        parts = name.split("/")
        kind = parts[0]
        if kind == "read_bandwidth":
            continue
        logn = parts[1]
        threads = parts[2] if kind == "panel" and len(parts) > 3 else "1"
        tps = b["items_per_second"]
        gbs = b.get("bytes_per_second", 0) / 1e9
        if kind == "panel_with_quantiles":
            threads = parts[2]
        ref = {"panel_quantiles": numpy["quantiles_tokens_per_s"],
               "panel_with_quantiles": 1 / (1 / numpy["panel_tokens_per_s"] + 1 / numpy["quantiles_tokens_per_s"])
               }.get(kind, numpy["panel_tokens_per_s"])
        roof = ""
        if kind not in ("panel_quantiles", "panel_with_quantiles") and logn == "25" and threads in bw:
            roof = f"{100 * b['bytes_per_second'] / bw[threads]:.0f}%"
        print(f"| {level} | {kind} | 2^{logn} | {threads} | {tps / 1e6:.0f} | {gbs:.2f} | {tps / ref:.1f} | {roof} |")
    for t, v in sorted(bw.items()):
        print(f"| {level} | read bandwidth (roofline) | 2^25 | {t} | {v / 9 / 1e6:.0f} | {v / 1e9:.1f} | | 100% |")

print("\nThe panel with its quantiles: `compute_panel_with_quantiles` (one pass, panel/panel_quantiles.hpp) "
      "against `accumulate_panel` alone and against the panel followed by the separate exact pass "
      "(`panel` + `panel_quantiles` above), same binary, same run; 2^25 float32 tokens.\n")
header('level', 'threads', 'panel ms', 'with quantiles ms', 'with quantiles / panel', 'separate passes / panel')
for level in levels:
    m = medians(f"{out}/panel_{level}.json")
    sep = m.get("panel_quantiles/25/real_time")
    for threads in ("1", "2"):
        p, q = m.get(f"panel/25/{threads}/real_time"), m.get(f"panel_with_quantiles/25/{threads}/real_time")
        if not (p and q):
            continue
        s = f"{(p['real_time'] + sep['real_time']) / p['real_time']:.2f}x" if sep and threads == "1" else ""
        print(f"| {level} | {threads} | {p['real_time']:.3g} | {q['real_time']:.3g} | "
              f"{q['real_time'] / p['real_time']:.2f}x | {s} |")
try:
    cli = json.load(open(f"{out}/cli_vs_numpy.json"))
    print(f"\n`logratio panel FILE --json` end to end (bench/cli_vs_numpy.py: one safetensors file of 2^25 float32 "
          f"tokens, best of 5 process runs) against its numpy peer (read the file, numpy_panel.py's panel, "
          f"np.quantile of the 12 quantiles, best of 3): CLI {cli['cli_seconds'] * 1e3:.0f} ms "
          f"({cli['cli_no_quantiles_seconds'] * 1e3:.0f} ms with `--no-quantiles`), numpy "
          f"{cli['numpy_seconds'] * 1e3:.0f} ms: **{cli['ratio']:.1f}x**; the {cli['quantile_keys']} quantile keys "
          f"{'bit-identical to' if cli['quantiles_bit_identical'] else 'DIFFERENT from'} numpy's.")
except FileNotFoundError:
    print("\n`logratio panel` end to end: not run.")

roofs = {}
for level in levels:
    m = medians(f"{out}/panel_{level}.json")
    roofs[level] = {k.split("/")[2]: v["bytes_per_second"] for k, v in m.items() if k.startswith("read_bandwidth/")}


def roof_pct(level, threads, b):
    bw = roofs.get(level, {}).get(threads)
    return f"{100 * b['bytes_per_second'] / bw:.0f}%" if bw and b.get("bytes_per_second") else ""


q = medians(f"{out}/quantiles.json")
print(f"\nExact quantiles and the KLL sketch ({levels[-1]} build; 2^25 float32 tokens, 80% mask: the values are "
      "the masked-in deltas).\n")
print(f"numpy `np.quantile` of the masked delta (7 quantiles, gather included): "
      f"{numpy['quantiles7_values_per_s'] / 1e6:.1f} M values/s.\n")
header('benchmark', 'M values/s', 'x numpy np.quantile')
for name, b in q.items():
    kind = name.split("/")[0]
    if kind == "kll_merge_64":
        print(f"| {kind} (64 sketches of k=200) | {b['real_time']:.0f} us per 64-way merge | |")
        continue
    vps = b["items_per_second"]
    ratio = f"{vps / numpy['quantiles7_values_per_s']:.1f}" if kind in ("exact_quantiles", "nth_element_per_quantile") else ""
    print(f"| {kind} | {vps / 1e6:.0f} | {ratio} |")

nc = json.load(open(f"{out}/numpy_correction.json"))["correction_tokens_per_s"]
print("\nImportance-sampling correction (`correct`): token TIS C=2 + token_k1 band + token_k3 rejection + veto, "
      "every verl metric, float32 weights and uint8 mask written (14 bytes/token moved). "
      f"numpy doing the same operations in float64 (bench/numpy_correction.py): {nc / 1e6:.1f} M tokens/s.\n")
print("Traffic roofline: a loop that moves the same 14 bytes/token (reads t, r, mask; writes t - r as float32 "
      "and a 0/1 byte) with plain stores and no other arithmetic, in the same binary.\n")
header('level', 'benchmark', 'tokens', 'threads', 'M tokens/s', 'x numpy', '% of traffic roofline')
for level in levels:
    m = medians(f"{out}/correction_{level}.json")
    traffic = {k.split("/")[2]: v["items_per_second"] for k, v in m.items() if k.startswith("traffic_roofline/")}
    for name, b in m.items():
        parts = name.split("/")
        if parts[0] == "traffic_roofline":
            continue
        threads = parts[2] if parts[0] == "correct_token" and len(parts) > 3 else "1"
        tps = b["items_per_second"]
        roof = f"{100 * tps / traffic[threads]:.0f}%" if parts[1] == "25" and threads in traffic else ""
        print(f"| {level} | {parts[0]} | 2^{parts[1]} | {threads} | {tps / 1e6:.0f} | {tps / nc:.0f} | {roof} |")
    for t, v in sorted(traffic.items()):
        print(f"| {level} | traffic roofline | 2^25 | {t} | {v / 1e6:.0f} | | 100% |")

nl = json.load(open(f"{out}/numpy_logits.json"))["logit_pairs_per_s"]
print("\nLogits (`compare_logits`): 32 rows of V = 151,936, entropies + KL both ways + TV + selected log-probs; "
      f"numpy float32 log_softmax code doing the same (bench/numpy_logits.py): {nl / 1e6:.1f} M logit pairs/s.\n")
header('level', 'dtype', 'threads', 'M logit pairs/s', 'x numpy', '% of read roofline')
for level in levels:
    for name, b in medians(f"{out}/logits_{level}.json").items():
        parts = name.split("/")
        dtype = "bf16" if "bfloat16" in parts[0] else "f32"
        tps = b["items_per_second"]
        print(f"| {level} | {dtype} | {parts[1]} | {tps / 1e6:.0f} | {tps / nl:.1f} | {roof_pct(level, parts[1], b)} |")

print("\nDoctor (`diagnose`, bench/bench_doctor.cpp) against the one-pass panel on the same float32 tokens "
      "(80% mask, rows of 1024), same binary, same run; 2^17 fits in L2, 2^25 streams from memory.\n")
header('level', 'tokens', 'threads', 'panel ms', 'diagnose ms', 'diagnose / panel')
for level in levels:
    m = medians(f"{out}/doctor_{level}.json")
    for name, b in m.items():
        parts = name.split("/")
        if parts[0] != "doctor_panel":
            continue
        d = m.get(name.replace("doctor_panel", "doctor_diagnose"))
        if not d:
            continue
        pt, dt = b["real_time"], d["real_time"]  # both in ms (the benchmarks' unit)
        print(f"| {level} | 2^{parts[1]} | {parts[2]} | {pt:.3g} | {dt:.3g} | {dt / pt:.2f}x |")

try:
    pt = json.load(open(f"{out}/python_vs_torch.json"))
except FileNotFoundError:
    pt = None
if pt is None:
    print("\nPython against torch: not run (torch or the logratio module not importable).")
else:
    print(f"\nPython package against torch (float32, CPU, one thread) and numpy (float64) in the same process "
          f"(bench/python_vs_torch.py: B = 256 x T = 4096 bf16 tensors, {pt['tokens']:,} masked-in tokens, "
          f"SIMD level {pt['simd_level']}; best of 7 x 3 rounds).\n")
    header('computation', 'logratio call ms', 'C++ kernel ms', 'call / kernel', 'torch ms', 'x torch', 'numpy ms', 'x numpy')
    for r in pt["rows"]:
        npy = f"{r['numpy_ms']:.2f} | {r['vs_numpy']:.1f}" if r.get("numpy_ms") is not None else " | "
        print(f"| {r['name']} | {r['logratio_ms']:.2f} | {r['cxx_kernel_ms']:.2f} | {r['python_over_kernel']:.2f} | "
              f"{r['torch_ms']:.2f} | {r['vs_torch']:.1f} | {npy} |")

runs_section(out)
readers_section(out)
