"""What bench/report.py and bench/floors.py share: the CPU's name, markdown
table headers, and the medians of a Google Benchmark JSON file."""
import json
import platform

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())


def header(*cols):
    """A markdown table's header and separator rows."""
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def medians(path):
    """run_name -> the median aggregate of each benchmark in a JSON file."""
    res = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            res[b["run_name"]] = b
    return res
