"""The as-of rule, in one place: nothing dated after the as-of date may pass a stage.

Every stage that handles dated things (retrieval filters, curated evidence, price bars, memory entries, figures) calls
these helpers instead of comparing dates itself, so the rule has exactly one implementation:

* a thing's date is its own date (``filed_at``, ``as_of``, ``date``, a bar's timestamp); nothing is re-stamped;
* a thing passes when ``date <= as_of`` (inclusive, like ``FilterSpec.until``); a daily bar dated on the as-of day
  passes because its date is not *after* the as-of date;
* undated things are kept by default (they are not "dated after"); ``Undated.DROP`` is the strict choice for
  backtests, where an undated item cannot be proven to precede the cutoff;
* ``as_of=None`` means no cutoff.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import date, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError, EquiMindError
from equimind.core.search import EvidenceNode

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger(__name__)

T = TypeVar("T")

_DATE_ATTRS = ("filed_at", "as_of", "date")
_BAR_DATE_COLUMNS = ("Date", "date", "Datetime", "datetime", "timestamp")


class LookAheadError(EquiMindError):
    """Something dated after the as-of date reached a stage. Filter it with ``equimind.core.timeguard`` first."""


class Undated(StrEnum):
    """What to do with an item that carries no date when an as-of cutoff is set."""

    KEEP = "keep"
    DROP = "drop"


def int_to_date(value: int) -> date | None:
    """20250226 -> date(2025, 2, 26); 0 (the Chunk convention for "unknown") -> None."""
    if value <= 0:
        return None
    try:
        return date(value // 10000, value // 100 % 100, value % 100)
    except ValueError as exc:
        raise ValueError(f"{value} is not a YYYYMMDD date") from exc


def to_date(value: Any) -> date | None:
    """Normalise a date-like value (date, datetime, pandas Timestamp, ISO string, YYYYMMDD int) to a calendar date.

    A timezone-aware timestamp keeps its own wall-clock date (a bar stamped 00:00-05:00 belongs to that day).
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, bool):
        raise TypeError("a bool is not a date")
    if isinstance(value, int):
        return int_to_date(value)
    if isinstance(value, str):
        text = value.strip()
        return datetime.fromisoformat(text).date() if text else None
    to_py = getattr(value, "to_pydatetime", None)  # pandas Timestamp without importing pandas
    if callable(to_py):
        return to_date(to_py())
    raise TypeError(f"cannot read a date from {type(value).__name__}")


def item_date(item: Any) -> date | None:
    """The item's own date: itself if it is date-like, else its ``filed_at`` / ``as_of`` / ``date`` attribute."""
    if isinstance(item, date | datetime | str | int):
        return to_date(item)
    for attr in _DATE_ATTRS:
        if hasattr(item, attr):
            return to_date(getattr(item, attr))
    raise TypeError(f"{type(item).__name__} has no filed_at, as_of or date attribute; cannot apply the as-of rule")


def passes(item: Any, as_of: date | None, undated: Undated = Undated.KEEP) -> bool:
    """True when the item may pass the as-of cutoff."""
    if as_of is None:
        return True
    d = item_date(item)
    if d is None:
        return undated is Undated.KEEP
    return d <= as_of


def as_of_filter(flt: FilterSpec | None, as_of: date | None) -> FilterSpec:
    """The filter with ``until = min(until, as_of)``; every other field is kept.

    Raises ConfigError when ``since`` is after the as-of date (the window would be empty).
    """
    base = flt if flt is not None else FilterSpec()
    if as_of is None:
        return base
    if base.since is not None and base.since > as_of:
        raise ConfigError(
            f"filter since ({base.since}) is after as-of ({as_of}): nothing could pass; move since to on or before "
            "the as-of date"
        )
    until = as_of if base.until is None else min(base.until, as_of)
    return FilterSpec(tickers=base.tickers, since=base.since, until=until, sources=base.sources, forms=base.forms,
                      doc_ids=base.doc_ids)


def split_by_as_of(items: Iterable[T], as_of: date | None,
                   undated: Undated = Undated.KEEP) -> tuple[list[T], list[T]]:
    """(passed, rejected) preserving order."""
    passed: list[T] = []
    rejected: list[T] = []
    for item in items:
        (passed if passes(item, as_of, undated) else rejected).append(item)
    return passed, rejected


def filter_dated(items: Iterable[T], as_of: date | None, undated: Undated = Undated.KEEP) -> list[T]:
    """Items whose own date is on or before ``as_of`` (order kept)."""
    passed, rejected = split_by_as_of(items, as_of, undated)
    if rejected:
        logger.debug("as-of %s rejected %d item(s)", as_of, len(rejected))
    return passed


def filter_nodes(nodes: Iterable[EvidenceNode], as_of: date | None,
                 undated: Undated = Undated.KEEP) -> list[EvidenceNode]:
    """Evidence nodes filed on or before ``as_of``."""
    return filter_dated(nodes, as_of, undated)


def assert_not_after(items: Iterable[Any], as_of: date | None, undated: Undated = Undated.KEEP) -> None:
    """Raise LookAheadError naming every item dated after ``as_of`` (and undated ones under ``Undated.DROP``)."""
    if as_of is None:
        return
    offenders = [item for item in items if not passes(item, as_of, undated)]
    if offenders:
        names = ", ".join(f"{_describe(item)} ({item_date(item) or 'undated'})" for item in offenders[:5])
        more = f" and {len(offenders) - 5} more" if len(offenders) > 5 else ""
        raise LookAheadError(
            f"{len(offenders)} item(s) dated after as-of {as_of}: {names}{more}; filter them with "
            "equimind.core.timeguard.filter_dated before this stage"
        )


def _describe(item: Any) -> str:
    ident = getattr(item, "id", None) or getattr(item, "doc_id", None)
    return f"{type(item).__name__} {str(ident)[:12]}" if ident else type(item).__name__


def bar_dates(df: pd.DataFrame) -> list[date]:
    """Each row's own calendar date, from a Date/Datetime column or else the index (as yfinance returns it)."""
    column = next((c for c in _BAR_DATE_COLUMNS if c in df.columns), None)
    values = df[column] if column is not None else df.index
    out: list[date] = []
    for v in values:
        d = to_date(v)
        if d is None:
            raise ValueError("a price bar has no date; bars must carry their own dates")
        out.append(d)
    return out


def filter_bars(df: pd.DataFrame, as_of: date | None) -> pd.DataFrame:
    """Rows of a price frame whose bar date is on or before ``as_of`` (a copy; the input is not changed)."""
    if as_of is None or df.empty:
        return df.copy()
    keep = [d <= as_of for d in bar_dates(df)]
    return df.loc[keep].copy()


def assert_bars_not_after(df: pd.DataFrame, as_of: date | None) -> None:
    """Raise LookAheadError when any bar is dated after ``as_of``."""
    if as_of is None or df.empty:
        return
    late = [d for d in bar_dates(df) if d > as_of]
    if late:
        raise LookAheadError(
            f"{len(late)} price bar(s) dated after as-of {as_of} (first {min(late)}); filter them with "
            "equimind.core.timeguard.filter_bars"
        )
