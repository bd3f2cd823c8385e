#!/usr/bin/env python3
"""Checks the shape docs/CRATES.md promises: no two modules of a crate import each other in a
circle (through `crate::module` paths outside comments and test modules; in a folder that only
groups modules by job, such as the team's `supervision/`, each module in it counts on its own,
`crate::supervision::worker`), no source file
outside tests is over 600 lines, and no code outside the agent CLIs' adapters
(crates/team/src/agent_cli/) asks which agent CLI it runs: it asks the kind's adapter. Prints
each violation and exits 1 when there is one."""

import os
import re
import sys

MAX_LINES = 600
ADAPTERS = os.path.join("crates", "team", "src", "agent_cli")

# A choice made on the agent kind: a kind named by its name, compared, or matched.
KIND_CHOICES = [
    (re.compile(r'AgentKind::named\(\s*"'), "names an agent kind"),
    (re.compile(r'AgentKind::[A-Z][a-z]\w*'), "names an agent kind's variant"),
    (re.compile(r'\bkind(\(\))?\.name\(\)\s*(==|!=)|(==|!=)\s*[\w.]*kind(\(\))?\.name\(\)'), "compares an agent kind's name"),
    (re.compile(r'\bmatch\b[^{;]*\bkind(\(\))?\.name\(\)'), "matches on an agent kind's name"),
    (re.compile(r'\bprofile\.kind\s*(==|!=)|(==|!=)\s*[\w.]*profile\.kind\b'), "compares a profile's agent kind"),
    (re.compile(r'\bmatch\b[^{;]*\bprofile\.kind\s*\{'), "matches on a profile's agent kind"),
]
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


def adapter_names():
    """The names the adapters give their kinds (`fn name(&self) -> &'static str { "claude" }`)."""
    names = set()
    folder = os.path.join(ROOT, ADAPTERS)
    for base, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".rs"):
                with open(os.path.join(base, name), encoding="utf-8") as f:
                    names.update(re.findall(r'fn name\(&self\) -> &\'static str \{\s*"([a-z0-9_-]+)"', f.read()))
    return names


def groups_in(src):
    """Folders of `src` that only group modules (a `mod.rs` of `mod` lines and nothing else)."""
    found = set()
    for name in os.listdir(src):
        mod = os.path.join(src, name, "mod.rs")
        if os.path.isfile(mod):
            with open(mod, encoding="utf-8") as f:
                code = [l.strip() for l in code_of(f.read()).split("\n") if l.strip()]
            if code and all(re.fullmatch(r"(pub(\(crate\))? )?mod [a-z_][a-z0-9_]*;", l) for l in code):
                found.add(name)
    return found


def node_of(parts, groups):
    """The module a path (its parts under `src/` or after `crate::`) counts as."""
    if parts[0] in groups and len(parts) > 1 and parts[1] != "mod":
        return f"{parts[0]}::{parts[1]}"
    return parts[0]


def main():
    problems = []
    names = "|".join(sorted(adapter_names()))
    if names:
        # A kind's name matched or compared as a string.
        KIND_CHOICES.append((re.compile(rf'"({names})"\s*(=>|==|!=|\|)|(==|!=)\s*"({names})"'), "matches or compares an agent kind's name"))
    sources = [os.path.join(ROOT, "crates", c) for c in sorted(os.listdir(os.path.join(ROOT, "crates")))]
    sources.append(os.path.join(ROOT, "src-tauri"))
    for crate in sources:
        src = crate if crate.endswith("cli") else os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        graph = {}
        groups = groups_in(src)
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
                if not is_test and not os.path.relpath(path, ROOT).startswith(ADAPTERS):
                    for number, line in enumerate(code_of(text).split("\n"), 1):
                        for pattern, what in KIND_CHOICES:
                            if pattern.search(line):
                                problems.append(
                                    f"{os.path.relpath(path, ROOT)}: {what} outside the adapters "
                                    f"({ADAPTERS}): ask the kind's adapter instead: {line.strip()}"
                                )
                if not is_test and lines > MAX_LINES:
                    problems.append(f"{os.path.relpath(path, ROOT)}: {lines} lines outside tests (at most {MAX_LINES})")
                module = node_of(relative[:-3].split(os.sep), groups)
                if module in ("lib", "main") or module in groups or is_test:
                    continue
                paths = re.findall(r"crate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)?)", code_of(text))
                deps = {node_of(p.split("::"), groups) for p in paths} - {module}
                graph.setdefault(module, set()).update(deps)
        graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
        for circle in circles(graph):
            problems.append(f"{os.path.relpath(crate, ROOT)}: modules import each other in a circle: {' ↔ '.join(circle)}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("layout: no import circles, no source file over 600 lines, no choice on the agent kind outside its adapter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
