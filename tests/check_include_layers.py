#!/usr/bin/python3
"""Layers that only point down: every #include "..." of include/logratio/
names a header of its own folder or of a lower layer.

  check_include_layers.py ROOT

The layers, lowest first (a folder may include its own files and any
folder of a lower layer; a component's private halves live in its own
detail/ subfolder, e.g. correction/detail/, and count as the component):
"""
import os
import re
import sys

LAYERS = [
    ["core"],                 # views, dtypes, errors, the shared enums and limits
    ["detail"],               # generic kernel pieces: batches, lanes, widening, threads, bytes
    ["stats"],                # run statistics (Boost.Math)
    ["quantiles"],            # exact quantiles, the KLL sketch
    ["panel"],                # the ratio panel, its quantiles, the stream, the split
    ["correction", "logits"],  # IS correction and flavours; full-logit divergences
    ["doctor", "runs", "adapt"],
    ["dispatch"],
    [""],                     # the umbrella header logratio.hpp
]
__doc__ += "".join(f"  {i}: {', '.join(n or 'logratio.hpp' for n in names)}\n" for i, names in enumerate(LAYERS))
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def folder(rel):
    """The component a header under include/logratio/ belongs to ('' for the root)."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else ""


def violations(root):
    base = os.path.join(root, "include", "logratio")
    out = []
    for dirpath, _, files in os.walk(base):
        for f in sorted(files):
            if not f.endswith(".hpp"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, base)
            src = folder(rel)
            if src not in LAYER_OF:
                out.append(f"include/logratio/{rel}: folder '{src}' is in no layer of tests/check_include_layers.py")
                continue
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = os.path.relpath(os.path.normpath(os.path.join(dirpath, m.group(1))), base)
                dst = folder(target)
                if target.startswith(".."):
                    out.append(f"include/logratio/{rel}:{n}: includes {m.group(1)}, outside include/logratio")
                elif dst != src and LAYER_OF.get(dst, 99) >= LAYER_OF[src]:
                    out.append(f"include/logratio/{rel}:{n}: includes {target} ({dst or 'root'}, layer "
                               f"{LAYER_OF.get(dst, '?')}), not below {src} (layer {LAYER_OF[src]})")
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    bad = violations(os.path.abspath(argv[1]))
    for line in bad:
        print(line)
    print(f"check_include_layers: {len(bad)} include(s) pointing up or sideways")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
