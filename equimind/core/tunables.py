"""Named tuning parameters: every threshold, weight or word-list choice the answer path tunes, in one registry.

A module that uses a parameter registers it at import (``register(Tunable(name, default, candidates, doc))``) and
reads it where it is used with ``tuned(name)``. The evaluation harness measures each parameter leave-company-out
(``equimind.evaluation.lco``): it answers every question once per candidate value by running the answer path inside
``overridden({name: value})``. Overrides live in a ``ContextVar``, so they hold for the code run inside the ``with``
block in this thread (or task) only; other threads keep reading the defaults. Outside the harness nothing is
overridden and ``tuned`` returns the default.

``tuned`` is called in hot loops: one ``ContextVar.get`` plus one dict lookup, no locking (registration happens at
import time). Read it where the value is used, never inside a memoised function (a cached result would not follow an
override), and not once at import into a module constant.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from equimind.core.errors import ConfigError


class UnknownTunable(ConfigError, KeyError):
    """A name no module registered (a typo, or the module that registers it was not imported)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Tunable:
    """One tuning parameter: its default (what the product runs), the values the harness tries, and why it exists."""

    name: str
    default: Any
    candidates: tuple[Any, ...]
    doc: str

    def __post_init__(self) -> None:
        if not isinstance(self.default, Hashable) or not all(isinstance(c, Hashable) for c in self.candidates):
            raise ConfigError(f"tunable {self.name}: values must be hashable (use a tuple or frozenset)")
        if self.default not in self.candidates:  # the default is always one of the values measured
            object.__setattr__(self, "candidates", (self.default, *self.candidates))


_REGISTRY: dict[str, Tunable] = {}
_DEFAULTS: dict[str, Any] = {}
_EMPTY: Mapping[str, Any] = {}
_OVERRIDES: ContextVar[Mapping[str, Any]] = ContextVar("equimind_tunable_overrides", default=_EMPTY)


def register(tunable: Tunable) -> Tunable:
    """Add ``tunable`` to the registry (idempotent for an equal definition, e.g. on module reload); a second,
    different definition under the same name is an error."""
    known = _REGISTRY.get(tunable.name)
    if known is not None and known != tunable:
        raise ConfigError(f"tunable {tunable.name} is already registered with another definition")
    _REGISTRY[tunable.name] = tunable
    _DEFAULTS[tunable.name] = tunable.default
    return tunable


def tuned(name: str) -> Any:
    """The value of ``name`` here: the innermost override of the current context, else its default."""
    over = _OVERRIDES.get()
    if over and name in over:
        return over[name]
    try:
        return _DEFAULTS[name]
    except KeyError:
        raise _unknown(name) from None


def registered() -> dict[str, Tunable]:
    """Every registered tunable by name (a copy, sorted by name)."""
    return {name: _REGISTRY[name] for name in sorted(_REGISTRY)}


def get(name: str) -> Tunable:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise _unknown(name) from None


def _unknown(name: str) -> UnknownTunable:
    return UnknownTunable(f"unknown tunable {name!r}; registered: {', '.join(sorted(_REGISTRY)) or 'none'}")


def current() -> dict[str, Any]:
    """The overrides in force in this context (empty outside ``overridden``)."""
    return dict(_OVERRIDES.get())


@contextmanager
def overridden(values: Mapping[str, Any]) -> Iterator[None]:
    """Within the block (this context only), read ``values`` instead of the defaults; nested blocks stack, the inner
    value winning. Every name must be registered."""
    for name in values:
        get(name)
    token = _OVERRIDES.set({**_OVERRIDES.get(), **values})
    try:
        yield
    finally:
        _OVERRIDES.reset(token)
