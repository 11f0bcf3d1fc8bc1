"""The tuning-parameter registry: defaults, context overrides, isolation between threads, unknown names."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest

from equimind.answer import extract
from equimind.core import tunables
from equimind.core.errors import ConfigError
from equimind.core.tunables import Tunable, UnknownTunable, overridden, register, registered, tuned


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty registry for the test (the product's own tunables are restored after it)."""
    monkeypatch.setattr(tunables, "_REGISTRY", {})
    monkeypatch.setattr(tunables, "_DEFAULTS", {})


def test_default_then_override_then_default_again(fresh: None) -> None:
    register(Tunable("t.x", 0.5, (0.3, 0.5), "x"))
    assert tuned("t.x") == 0.5
    with overridden({"t.x": 0.3}):
        assert tuned("t.x") == 0.3
        with overridden({"t.x": 0.9}):  # nested: the inner value wins, an unlisted value is allowed
            assert tuned("t.x") == 0.9
        assert tuned("t.x") == 0.3
    assert tuned("t.x") == 0.5


def test_override_is_undone_when_the_block_raises(fresh: None) -> None:
    register(Tunable("t.x", 1, (1, 2), "x"))
    with pytest.raises(RuntimeError), overridden({"t.x": 2}):
        raise RuntimeError("boom")
    assert tuned("t.x") == 1


def test_unknown_names_are_errors(fresh: None) -> None:
    register(Tunable("t.x", 1, (1, 2), "x"))
    with pytest.raises(UnknownTunable, match=r"t\.y"):
        tuned("t.y")
    with pytest.raises(ConfigError), overridden({"t.y": 1}):
        pass
    with pytest.raises(KeyError):  # also a KeyError: a mapping-like miss
        tunables.get("t.y")


def test_registration_is_idempotent_but_not_redefinable(fresh: None) -> None:
    first = register(Tunable("t.x", 1, (2, 3), "x"))
    assert first.candidates == (1, 2, 3)  # the default is always measured
    register(Tunable("t.x", 1, (2, 3), "x"))
    with pytest.raises(ConfigError):
        register(Tunable("t.x", 2, (2, 3), "x"))
    with pytest.raises(ConfigError):
        Tunable("t.list", [1], ([1],), "unhashable")
    assert list(registered()) == ["t.x"]


def test_an_override_does_not_leak_into_other_threads(fresh: None) -> None:
    register(Tunable("t.x", 0, (0, 1, 2), "x"))
    seen: dict[str, Any] = {}
    barrier = threading.Barrier(2)

    def worker(name: str, value: int | None) -> None:
        if value is None:
            barrier.wait()
            seen[name] = tuned("t.x")
            barrier.wait()
            return
        with overridden({"t.x": value}):
            barrier.wait()  # both threads are inside their blocks at once
            seen[name] = tuned("t.x")
            barrier.wait()

    with overridden({"t.x": 2}):
        threads = [threading.Thread(target=worker, args=("a", 1)), threading.Thread(target=worker, args=("b", None))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert tuned("t.x") == 2
    assert seen == {"a": 1, "b": 0}


def test_a_copied_context_carries_the_override(fresh: None) -> None:
    register(Tunable("t.x", 0, (0, 1), "x"))
    with overridden({"t.x": 1}):
        ctx = contextvars.copy_context()
    assert tuned("t.x") == 0
    assert ctx.run(tuned, "t.x") == 1


def test_the_coverage_threshold_of_the_extraction_rule_is_tunable() -> None:
    spec = tunables.get("answer.min_term_coverage")
    assert spec.default == 0.5 and {0.34, 0.67} <= set(spec.candidates)
    unit = extract.Scored(unit=None, coverage=0.4, score=0.4, values=())  # type: ignore[arg-type]
    assert not unit.qualifies()
    with overridden({"answer.min_term_coverage": 0.34}):
        assert unit.qualifies()
    assert not unit.qualifies()
