#!/usr/bin/env python3
"""Checks the shape docs/CRATES.md promises: no two modules of a crate import each other in a
circle (through `crate::module` paths outside comments and test modules), and no source file
outside tests is over 600 lines. Prints each violation and exits 1 when there is one."""

import os
import re
import sys

MAX_LINES = 600
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def code_of(text):
    """The text before the first test module, without comment lines."""
    text = text.split("#[cfg(test)]")[0]
    return "\n".join(l for l in text.split("\n") if not l.strip().startswith("//"))


def circles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    problems = []
    sources = [os.path.join(ROOT, "crates", c) for c in sorted(os.listdir(os.path.join(ROOT, "crates")))]
    sources.append(os.path.join(ROOT, "src-tauri"))
    for crate in sources:
        src = crate if crate.endswith("cli") else os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        graph = {}
        for folder, _, files in os.walk(src):
            for name in files:
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, src)
                is_test = name == "tests.rs" or "/tests/" in path or name == "testing.rs"
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                lines = text.split("#[cfg(test)]")[0].count("\n")
                if not is_test and lines > MAX_LINES:
                    problems.append(f"{os.path.relpath(path, ROOT)}: {lines} lines outside tests (at most {MAX_LINES})")
                module = relative[:-3].split(os.sep)[0]
                if module in ("lib", "main") or is_test:
                    continue
                deps = set(re.findall(r"crate::([a-z_][a-z0-9_]*)", code_of(text))) - {module}
                graph.setdefault(module, set()).update(deps)
        graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
        for circle in circles(graph):
            problems.append(f"{os.path.relpath(crate, ROOT)}: modules import each other in a circle: {' ↔ '.join(circle)}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("layout: no import circles, no source file over 600 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
