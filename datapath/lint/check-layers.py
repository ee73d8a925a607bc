#!/usr/bin/env python3
"""Checks that e3-vswitchd's sources keep their layers (docs/architecture.md).

src/ has one folder per layer, lowest first. A file may include a project
header only as "<layer>/<file>.h", and only from its own layer or a lower
one, so lower layers never call upward. Headers may not include each other
in a cycle. Prints every violation and exits 1 if there is one.

Usage: check-layers.py [SRC_DIR]   (default: the src/ beside this script)
"""
import os
import re
import sys

LAYERS = ["base", "tables", "port", "pipeline", "worker", "node", "rpc"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    top = rel.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else len(LAYERS)   # main.c: the top


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    src = os.path.normpath(src)
    errors, graph = [], {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            own = layer_of(rel)
            with open(os.path.join(root, f)) as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                top = inc.split("/", 1)[0]
                if "/" not in inc or top not in LAYERS or not os.path.exists(os.path.join(src, inc)):
                    errors.append(f"{rel}: include \"{inc}\": name a project header as \"<layer>/<file>.h\"")
                    continue
                if LAYERS.index(top) > own:
                    errors.append(f"{rel}: includes {inc}, from the higher layer {top}/")
                if rel.endswith(".h"):
                    graph.setdefault(rel, []).append(inc)
    # Header include cycles.
    state = {}

    def visit(h, stack):
        state[h] = 1
        for n in graph.get(h, []):
            if state.get(n) == 1:
                errors.append("include cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n, stack + [n])
        state[h] = 2

    for h in sorted(graph):
        if h not in state:
            visit(h, [h])
    for e in errors:
        print(e)
    if errors:
        print(f"check-layers: {len(errors)} violation(s); layers, lowest first: {', '.join(LAYERS)}")
        return 1
    print(f"check-layers: ok ({', '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
