#!/usr/bin/python3
"""Every code block of README.md and docs/*.md is compiled, run or checked.

A fenced block's info string says what is done with it:

  ```cpp                    compiled into one program (tests/docs/CMakeLists.txt)
                            and run; a block is the body of a function, after
                            tests/docs/snippet_prelude.hpp (its `#include`
                            lines are hoisted); `#line` points compile errors
                            at the Markdown file and line
  ```cpp excerpt=PATH       every line (comments and blank lines aside, spaces
  ```cmake excerpt=PATH     collapsed) appears in PATH, a file the build
                            compiles or runs (an example, a test)
  ```sh                     run by bash -eo pipefail in a scratch directory
                            holding links to examples/, tests/, bench/ and
                            python/, with the built `logratio` on PATH
  ```sh ci                  the README's set-up commands, each `&&` part: run
                            verbatim by .ci/run, or `cmake --workflow --preset P`
                            with P a workflow of CMakePresets.json, or
                            `build/P/bin/logratio ...`, which `sh` runs with
                            the built logratio
  ```sh tested-by=TEST      run by the ctest TEST (which checks its output);
  ```python tested-by=TEST  TEST must be one of the build's ctests
  ```sh bench               a benchmark script (minutes): its syntax is checked
                            with bash -n and every path in it must exist
  ```python                 run by python3 with the built package importable
  ```text output            right after a run block: every line of it (but
                            "...") is a line of what that block printed
  ```text, ```json          output or synopsis: not code
A block without an info string is an error, so nothing is left unchecked by
accident.

  doc_snippets.py list ROOT                       what each block is
  doc_snippets.py cpp ROOT OUT.cpp                write the C++ program
  doc_snippets.py check ROOT BUILD_DIR            the excerpt, ci, tested-by and
                                                  bench blocks
  doc_snippets.py sh ROOT BIN_DIR [PAGE...]       run the shell blocks
  doc_snippets.py python ROOT PYTHONPATH [PAGE...] run the Python blocks
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

KINDS = {"cpp", "cmake", "sh", "python", "text", "json"}


def pages(root):
    return [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))


def blocks(path):
    """(kind, attributes, first line number of the body, body lines) of each fenced block."""
    out, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, info = len(m.group(1)), m.group(2).strip()
        start, body = i + 2, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}:{start - 1}: code block never closed")
        words = info.split()
        kind = words[0] if words else ""
        attrs = dict(w.split("=", 1) if "=" in w else (w, "") for w in words[1:])
        out.append((kind, attrs, start, body))
        i += 1
    return out


def all_blocks(root, only=None):
    for p in pages(root):
        rel = os.path.relpath(p, root)
        if only and rel not in only and os.path.basename(p) not in only:
            continue
        for kind, attrs, line, body in blocks(p):
            if kind not in KINDS:
                raise SystemExit(f"{rel}:{line - 1}: code block without a known kind "
                                 f"(```{kind}): give one of {sorted(KINDS)}")
            yield rel, kind, attrs, line, body


def norm(line):
    return " ".join(line.split())


def code_lines(body, comment):
    """The lines an excerpt must match: comments and blank lines dropped."""
    out = []
    for line in body:
        code = line.split(comment, 1)[0] if comment in line else line
        if norm(code):
            out.append(norm(code))
    return out


def ctest_names(build):
    out = subprocess.run(["ctest", "--test-dir", build, "-N"], stdout=subprocess.PIPE, text=True).stdout
    return set(re.findall(r"Test\s+#\d+: (\S+)", out))


def check_bench(where, body, root):
    failures = 0
    if subprocess.run(["bash", "-n", "-c", "\n".join(body)]).returncode != 0:
        print(f"{where}: the bench block is not valid bash")
        failures += 1
    for word in re.findall(r"[\w.-]+/[\w./-]+", "\n".join(code_lines(body, "# "))):
        if not word.startswith("build/") and not os.path.exists(os.path.join(root, word)):
            print(f"{where}: {word} does not exist")
            failures += 1
    return failures


def ci_parts(body):
    return [p.strip() for line in code_lines(body, "# ") for p in line.split("&&")]


def check_ci(where, body, root, ci):
    """Each part of a set-up command is run by CI, a workflow preset, or the tool."""
    import json
    presets = json.load(open(os.path.join(root, "CMakePresets.json")))
    workflows = {w["name"] for w in presets.get("workflowPresets", [])}
    failures = 0
    for part in ci_parts(body):
        m = re.match(r"cmake --workflow --preset (\S+)$", part)
        if part in ci or (m and m.group(1) in workflows) or re.match(r"build/[\w-]+/bin/logratio ", part):
            continue
        print(f"{where}: '{part}' is neither run by .ci/run, a workflow preset, nor the tool")
        failures += 1
    return failures


def check(root, build):
    failures = 0
    ci = open(os.path.join(root, ".ci", "run"), encoding="utf-8").read()
    tests = ctest_names(build)
    for rel, kind, attrs, line, body in all_blocks(root):
        where = f"{rel}:{line}"
        if "tested-by" in attrs and attrs["tested-by"] not in tests:
            print(f"{where}: tested-by={attrs['tested-by']}, which is not a ctest of {build}")
            failures += 1
        if kind == "sh" and "bench" in attrs:
            failures += check_bench(where, body, root)
        if "excerpt" in attrs:
            target = os.path.join(root, attrs["excerpt"])
            if not os.path.isfile(target):
                print(f"{where}: excerpt of {attrs['excerpt']}, which does not exist")
                failures += 1
                continue
            comment = "#" if kind == "cmake" else "//"
            have = set(code_lines(open(target, encoding="utf-8").read().split("\n"), comment))
            for k, want in enumerate(code_lines(body, comment)):
                if want not in have:
                    print(f"{where}: line {k + 1} of the excerpt is not in {attrs['excerpt']}: {want}")
                    failures += 1
        elif kind == "cmake":
            print(f"{where}: a cmake block must be an excerpt=PATH of a file the build uses")
            failures += 1
        if kind == "sh" and "ci" in attrs:
            failures += check_ci(where, body, root, ci)
    print(f"doc_snippets check: {failures} failure(s)")
    return 1 if failures else 0


def write_cpp(root, out_path):
    includes, functions, calls = [], [], []
    for n, (rel, kind, attrs, line, body) in enumerate(all_blocks(root)):
        if kind != "cpp" or "excerpt" in attrs:
            continue
        code = []
        for k, text in enumerate(body):
            if text.startswith("#include"):
                includes.append(text)
                code.append("")  # keep the line numbers
            else:
                code.append(text)
        name = f"snippet_{n}"
        functions.append(f"static void {name}() {{\n#line {line} \"{rel}\"\n" + "\n".join(code) + "\n}\n")
        calls.append(f'    run("{rel}:{line}", {name});')
    text = ['// Generated by tests/docs/doc_snippets.py from README.md and docs/*.md: do not edit.',
            '#include "snippet_prelude.hpp"'] + sorted(set(includes)) + functions + [
            "int main() {"] + calls + ["    return doc_prelude::failures == 0 ? 0 : 1;", "}"]
    new = "\n".join(text) + "\n"
    if not os.path.exists(out_path) or open(out_path, encoding="utf-8").read() != new:
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


def scratch_dir(root):
    d = tempfile.mkdtemp(prefix="logratio-docs-")
    for sub in ("examples", "tests", "bench", "python"):
        os.symlink(os.path.join(root, sub), os.path.join(d, sub))
    return d


def expected_output(blocks_of_page, k):
    """The lines a run block must print: the ```text output block right after it."""
    if k + 1 < len(blocks_of_page):
        kind, attrs, _, body = blocks_of_page[k + 1]
        if kind == "text" and "output" in attrs:
            return [line for line in body if line.strip() and line.strip() != "..."]
    return []


def run_one(body, command, env, root):
    work = scratch_dir(root)
    return subprocess.run(command + ["\n".join(body) + "\n"], cwd=work, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_blocks(root, kind, only, command, env):
    failures = ran = 0
    for page in pages(root):
        rel = os.path.relpath(page, root)
        if only and rel not in only and os.path.basename(page) not in only:
            continue
        page_blocks = blocks(page)
        for k, (k_kind, attrs, line, body) in enumerate(page_blocks):
            if kind == "sh" and k_kind == "sh" and "ci" in attrs:
                body = [re.sub(r"^build/[\w-]+/bin/", "", p) for p in ci_parts(body)
                        if re.match(r"build/[\w-]+/bin/logratio ", p)]
                if not body:
                    continue
            elif k_kind != kind or attrs:
                continue
            proc = run_one(body, command, env, root)
            ran += 1
            printed = set(l.rstrip() for l in proc.stdout.split("\n"))
            missing = [l for l in expected_output(page_blocks, k) if l.rstrip() not in printed]
            if proc.returncode != 0 or missing:
                failures += 1
                print(f"{rel}:{line}: the {kind} block exited {proc.returncode}"
                      + "".join(f"\n  expected line not printed: {l}" for l in missing)
                      + f"\n{proc.stdout[-4000:]}")
            else:
                print(f"{rel}:{line}: ok")
    print(f"doc_snippets {kind}: {ran} block(s), {failures} failure(s)")
    return 1 if failures or not ran else 0


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    what, root = argv[1], os.path.abspath(argv[2])
    if what == "list":
        for rel, kind, attrs, line, body in all_blocks(root):
            print(f"{rel}:{line}\t{kind}\t{' '.join(f'{a}={v}' if v else a for a, v in attrs.items())}")
        return 0
    if what == "cpp":
        return write_cpp(root, argv[3])
    if what == "check":
        return check(root, argv[3])
    env = dict(os.environ)
    if what == "sh":
        env["PATH"] = os.path.abspath(argv[3]) + os.pathsep + env.get("PATH", "")
        return run_blocks(root, "sh", argv[4:], ["bash", "-eo", "pipefail", "-c"], env)
    if what == "python":
        env["PYTHONPATH"] = os.path.abspath(argv[3])
        return run_blocks(root, "python", argv[4:], [sys.executable, "-c"], env)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
