"""Measure the architecture bars of issue 13 over the package's AST (no imports are executed).

Prints JSON: top-level modules, modules over 400 lines, functions over 50 lines, imports of the package's own modules
inside function bodies, and import cycles among the package's modules (imports inside functions included).
Usage: python scripts/arch_bars.py [--package equimind] [--json out.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layers import module_name, resolve  # the one module-name and relative-import reader


def targets(mod: str, is_pkg: bool, node: ast.AST, pkg: str, known: set[str]) -> list[str]:
    out: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = resolve(mod, is_pkg, node)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    else:
        return out
    for n in names:
        if n == pkg or n.startswith(pkg + "."):
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n:
                out.append(n)
    return out


def in_type_checking(parents: list[ast.AST]) -> bool:
    for p in parents:
        if isinstance(p, ast.If):
            t = p.test
            if (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
                    isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"):
                return True
    return False


def walk(tree: ast.AST):  # yields (node, ancestors)
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(tree, [])]
    while stack:
        node, anc = stack.pop()
        yield node, anc
        for child in ast.iter_child_nodes(node):
            stack.append((child, [*anc, node]))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    st: list[str] = []
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        st.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default="equimind")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    root = Path(a.package)
    files = sorted(root.rglob("*.py"))
    mods = {module_name(root, f): f for f in files}
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    long_modules, long_functions, inner_imports = [], [], []
    for m, f in mods.items():
        src = f.read_text()
        n_lines = len(src.splitlines())
        if n_lines > 400:
            long_modules.append({"module": m, "lines": n_lines})
        tree = ast.parse(src)
        is_pkg = f.name == "__init__.py"
        for node, anc in walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 50:
                    long_functions.append({"module": m, "function": node.name, "lines": length})
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if in_type_checking(anc):
                    continue
                ts = [t for t in targets(m, is_pkg, node, a.package, known) if t != m]
                for t in ts:
                    graph[m].add(t)
                inside = any(isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) for p in anc)
                if inside and ts:
                    inner_imports.append({"module": m, "line": node.lineno, "imports": sorted(set(ts))})
    # a package imports its __init__ implicitly; edges to a package __init__ are not cycles through submodules
    top_level = sorted(m for m, f in mods.items() if f.parent == root and f.name != "__init__.py")
    found = cycles(graph)
    report = {
        "top_level_modules": len(top_level), "top_level": top_level,
        "modules_over_400_lines": sorted(long_modules, key=lambda r: -r["lines"]),
        "functions_over_50_lines": sorted(long_functions, key=lambda r: -r["lines"]),
        "inner_package_imports": len(inner_imports),
        "import_cycles": found,
    }
    if a.verbose:
        report["inner_import_sites"] = inner_imports
    text = json.dumps(report, indent=1)
    if a.json:
        Path(a.json).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
