"""The package's import rule (scripts/layers.py, docs/architecture.md): packages stacked in flow order, none imports
one above it, no two import each other, no cheap or own-package import inside a function without its reason."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layers():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("layers", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["layers"] = mod
    spec.loader.exec_module(mod)
    return mod


layers = _layers()


def test_the_package_keeps_the_import_rule() -> None:
    violations, _ = layers.check(ROOT / "equimind")
    assert [str(v) for v in violations] == []


def test_no_two_packages_import_each_other() -> None:
    _, graph = layers.check(ROOT / "equimind")
    assert layers.mutual_pairs(graph) == []
    assert graph, "the graph is empty: the checker read nothing"


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in (ROOT / "equimind").iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(layers.LAYERS)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "equimind"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_an_upward_import_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "core/__init__.py": "", "query/__init__.py": "",
                            "core/x.py": "from equimind.query import shape\n", "query/shape.py": ""})
    violations, graph = layers.check(root)
    assert any("'core' (layer 0) imports 'query'" in str(v) for v in violations)
    assert graph == {"core": ["query"]}


def test_a_type_checking_or_function_import_counts(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "", "core/__init__.py": "", "answer/__init__.py": "", "answer/a.py": "",
        "core/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from equimind.answer.a import A\n",
        "core/y.py": "def f():\n    from equimind.answer import a\n    import json\n"})
    text = [str(v) for v in layers.check(root)[0]]
    assert sum("imports 'answer'" in v for v in text) == 2
    assert any("own-package import inside a function" in v for v in text)
    assert any("imports json: a cheap import inside a function" in v for v in text)


def test_a_mutual_pair_is_found() -> None:
    assert layers.mutual_pairs({"a": ["b"], "b": ["a", "c"], "c": []}) == [("a", "b")]


@pytest.mark.parametrize("place", ["toplevel.py", "newpkg/__init__.py"])
def test_a_module_outside_the_layers_is_reported(tmp_path: Path, place: str) -> None:
    root = _tree(tmp_path, {"__init__.py": "", place: ""})
    assert layers.check(root)[0], f"{place} was not reported"
