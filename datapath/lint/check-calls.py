#!/usr/bin/env python3
"""Checks that no two of e3-vswitchd's source files call each other, even
through others (docs/architecture.md): from the built objects, file A
depends on file B when A uses a symbol B defines (`nm`), and that graph may
have no cycle. Each cycle is printed with the symbols that close it; exits
1 if there is one.

Usage: check-calls.py BUILD_DIR   (datapath's meson build directory)
"""
import os
import re
import subprocess
import sys

LAYERS = ["base", "tables", "port", "pipeline", "worker", "node", "rpc"]
OBJ = re.compile(r"^src_(.+)\.c\.o$")


def source_of(obj):
    """src/<layer>/<file>.c of an object meson named src_<layer>_<file>.c.o."""
    m = OBJ.match(os.path.basename(obj))
    if m is None:
        return None
    rest = m.group(1)
    for layer in LAYERS:
        if rest.startswith(layer + "_"):
            return f"{layer}/{rest[len(layer) + 1:]}.c"
    return rest + ".c"


def objects(build):
    """The objects of the library and the daemon (not the tests' or the generator's)."""
    for root, _, files in os.walk(build):
        if os.sep + "tests" in root or os.sep + "pktgen" in root:
            continue
        for f in files:
            if source_of(f) is not None:
                yield os.path.join(root, f)


def symbols(obj):
    defined, used = set(), set()
    out = subprocess.run(["nm", obj], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRBC":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            used.add(p[1])
    return defined, used


def cycles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    files = {}
    for obj in objects(sys.argv[1]):
        files.setdefault(source_of(obj), symbols(obj))   # the daemon and the library share files
    if not files:
        print(f"check-calls: no objects under {sys.argv[1]}: build first")
        return 1
    owner = {s: f for f, (defined, _) in files.items() for s in defined}
    edges = {f: {} for f in files}
    for f, (_, used) in files.items():
        for s in used:
            if s in owner and owner[s] != f:
                edges[f].setdefault(owner[s], []).append(s)
    found = cycles({f: sorted(e) for f, e in edges.items()})
    for comp in found:
        print("call cycle among " + ", ".join(comp) + ":")
        for f in comp:
            for g in comp:
                if g in edges[f]:
                    print(f"  {f} -> {g}: {', '.join(sorted(edges[f][g]))}")
    if found:
        print(f"check-calls: {len(found)} cycle(s) among {len(files)} files")
        return 1
    print(f"check-calls: ok ({len(files)} files, no call cycle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
