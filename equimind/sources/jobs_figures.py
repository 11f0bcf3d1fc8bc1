"""Hiring figures from job-board retrievals: the records (``JobPosting``, ``BoardRetrieval``) and pure functions,
no I/O. ``sources.jobs`` fetches, records and replays the boards and computes its figures here.

Figures (ids fixed; every one carries ``provenance`` = source, board, url, retrieved_at, origin, published_field):

- ``jobs_open_roles``: roles open at the chosen retrieval, with the full breakdown by function and by location;
- ``jobs_function_<slug>`` / ``jobs_location_<slug>``: the top 5 functions and locations;
- ``jobs_new_30d`` / ``jobs_new_90d``: open roles first published in (as_of − d, as_of];
- ``jobs_change_30d`` / ``jobs_change_90d``: new / old − 1 against the retrieval nearest to as_of − d (±7 days),
  with ``z = (new − old) / sqrt(new + old)`` so a rule can ask for a change beyond Poisson noise;
- ``jobs_product_roles``: open roles whose title or description names a configured product or segment term.

A posting first published after the as-of date never counts (``open_at``); which retrieval stands for an as-of date
is ``choose_retrieval`` (the latest read on or before it).
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from equimind.core.degraded import Degradation
from equimind.core.errors import ConfigError
from equimind.core.research import Figure
from equimind.sources.web_intel import WebIntelResult

log = logging.getLogger(__name__)

TOP_N = 5
CHANGE_WINDOWS = (30, 90)
NEW_WINDOWS = (30, 90)
MATCH_TOLERANCE_DAYS = 7
STALE_DAYS = 7
Kind = Literal["greenhouse", "lever"]
PublishedField = Literal["first_published", "updated_at", "createdAt"]
HISTORY_FIX = ("each live run stores the day's retrieval under EQUIMIND_HOME/web/jobs/{t}/, and `equimind snapshot "
               "record` (with the board configured in EQUIMIND_JOB_BOARDS) stores one in a snapshot")


# ---------------------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class JobPosting:
    """One open role as the board published it. ``text`` is plain text (HTML stripped and unescaped);
    ``first_published`` is UTC (None when the board gives no date); ``published_field`` names where it came from."""

    id: str
    title: str
    function: str
    location: str
    first_published: datetime | None
    url: str
    text: str
    published_field: PublishedField


@dataclass(frozen=True)
class BoardRetrieval:
    """One reading of one board: every role open at ``retrieved_at`` (UTC). ``skipped`` counts malformed postings
    (no title, an unreadable date) left out; ``path`` is the recording it was read from or written to."""

    ticker: str
    kind: Kind
    board: str
    url: str
    retrieved_at: datetime
    postings: tuple[JobPosting, ...]
    skipped: int = 0
    path: Path | None = field(default=None, compare=False)

    @property
    def day(self) -> date:
        return self.retrieved_at.date()


@dataclass(frozen=True)
class Recordings:
    """What a recording folder holds for a ticker: the readable retrievals (oldest first) and the files skipped."""

    retrievals: tuple[BoardRetrieval, ...]
    problems: tuple[str, ...]


def parse_board_spec(spec: str) -> tuple[Kind, str]:
    """``"greenhouse:acme"`` → ("greenhouse", "acme"); ConfigError naming the two valid forms otherwise."""
    kind, _, board = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "greenhouse" and board.strip():
        return "greenhouse", board.strip()
    if kind == "lever" and board.strip():
        return "lever", board.strip()
    raise ConfigError(f'job board {spec!r}: write "greenhouse:BOARD" or "lever:COMPANY"')


# ---------------------------------------------------------------------------------------------------- figures
def slug(name: str) -> str:
    """``"R&D / Hardware"`` → ``"r_d_hardware"`` (a figure id part)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "unspecified"


def open_at(retrieval: BoardRetrieval, as_of: date) -> list[JobPosting]:
    """The roles of ``retrieval`` that count on ``as_of``: none first published after it."""
    return [p for p in retrieval.postings if p.first_published is None or p.first_published.date() <= as_of]


def _ranked(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def provenance(retrieval: BoardRetrieval, origin: str) -> dict[str, Any]:
    """The provenance every figure of ``retrieval`` carries: where and when it was read, and the date field used."""
    fields = Counter(p.published_field for p in retrieval.postings)
    default = "createdAt" if retrieval.kind == "lever" else "first_published"
    prov: dict[str, Any] = {"source": retrieval.kind, "board": retrieval.board, "url": retrieval.url,
                            "retrieved_at": retrieval.retrieved_at.isoformat(), "origin": origin,
                            "published_field": fields.most_common(1)[0][0] if fields else default}
    if fields.get("updated_at"):
        prov["published_field_note"] = (
            f"{fields['updated_at']} of {len(retrieval.postings)} postings have no first_published (an old board): "
            "their updated_at (the last edit, which may be later than the first publication) stands in")
    return prov


def _figure(fid: str, name: str, value: float | None, unit: str, day: date, formula: str, prov: dict[str, Any],
            inputs: dict[str, Any] | None = None) -> Figure:
    return Figure(id=fid, name=name, value=value, unit=unit, as_of=day, formula=formula, inputs=inputs or {},
                  provenance=prov)


def count_figures(retrieval: BoardRetrieval, as_of: date, origin: str) -> list[Figure]:
    """``jobs_open_roles``, the top-5 ``jobs_function_*`` / ``jobs_location_*`` and ``jobs_new_30d`` / ``_90d``."""
    roles = open_at(retrieval, as_of)
    prov = provenance(retrieval, origin)
    day = min(retrieval.day, as_of)
    by_function = _ranked(Counter(p.function for p in roles))
    by_location = _ranked(Counter(p.location for p in roles))
    when = f"on the board read at {retrieval.retrieved_at.isoformat()}"
    out = [_figure("jobs_open_roles", "Open roles", float(len(roles)), "roles", day,
                   f"Count of the roles open {when}, leaving out any first published after {as_of}.", prov,
                   {"by_function": by_function, "by_location": by_location,
                    "excluded_published_after_as_of": len(retrieval.postings) - len(roles),
                    "skipped_malformed": retrieval.skipped})]
    for prefix, table, what in (("jobs_function", by_function, "function (department)"),
                                ("jobs_location", by_location, "location")):
        used: set[str] = set()
        for name, n in list(table.items())[:TOP_N]:
            fid = f"{prefix}_{slug(name)}"
            k = 2
            while fid in used:
                fid, k = f"{prefix}_{slug(name)}_{k}", k + 1
            used.add(fid)
            out.append(_figure(fid, f"Open roles: {name}", float(n), "roles", day,
                               f"Count of the roles open {when} whose {what} is {name!r}.", prov, {"name": name}))
    for d in NEW_WINDOWS:
        start = as_of - timedelta(days=d)
        dated = [p for p in roles if p.first_published is not None]
        new = [p for p in dated if start < p.first_published.date() <= as_of]  # type: ignore[union-attr]
        out.append(_figure(f"jobs_new_{d}d", f"Open roles first published in the last {d} days", float(len(new)),
                           "roles", day, f"Count of the roles open {when} first published after {start} and on or "
                           f"before {as_of}.", prov,
                           {"days": d, "open": len(roles), "undated": len(roles) - len(dated)}))
    return out


def nearest_retrieval(history: Iterable[BoardRetrieval], current: BoardRetrieval, target: date,
                      tolerance_days: int = MATCH_TOLERANCE_DAYS) -> BoardRetrieval | None:
    """The retrieval of the same board, read before ``current``, nearest to ``target`` within ±``tolerance_days``
    (a tie goes to the earlier one); None when there is none."""
    candidates = [r for r in history if r.kind == current.kind and r.board == current.board
                  and r.retrieved_at < current.retrieved_at and abs((r.day - target).days) <= tolerance_days]
    if not candidates:
        return None
    return min(candidates, key=lambda r: (abs((r.day - target).days), r.retrieved_at))


def change_figures(current: BoardRetrieval, history: Sequence[BoardRetrieval], as_of: date, origin: str,
                   ) -> tuple[list[Figure], list[Degradation]]:
    """``jobs_change_30d`` / ``_90d``: new / old − 1 against the stored retrieval nearest to ``as_of − d`` (±7 days),
    with ``z = (new − old) / sqrt(new + old)``, the change in units of its Poisson noise."""
    figures: list[Figure] = []
    degraded: list[Degradation] = []
    new = len(open_at(current, as_of))
    prov = provenance(current, origin)
    for d in CHANGE_WINDOWS:
        target = as_of - timedelta(days=d)
        cap = f"web.jobs.change_{d}d"
        old_r = nearest_retrieval(history, current, target)
        if old_r is None:
            degraded.append(Degradation(capability=cap, reason=(
                f"needs a board retrieval from about {target} (±{MATCH_TOLERANCE_DAYS} days); none of "
                f"{current.kind}:{current.board} is stored — history accrues one retrieval at a time: "
                + HISTORY_FIX.format(t=current.ticker))))
            continue
        old = len(open_at(old_r, old_r.day))
        if old == 0:
            degraded.append(Degradation(capability=cap, reason=(
                f"the board had no open roles when read on {old_r.day}, so a relative change is undefined "
                f"(now {new})")))
            continue
        z = (new - old) / math.sqrt(new + old)
        figures.append(_figure(
            f"jobs_change_{d}d", f"Change in open roles over about {d} days", new / old - 1, "ratio",
            min(current.day, as_of),
            f"Open roles now divided by open roles on the board read on {old_r.day} (the stored retrieval nearest to "
            f"{target}), minus one; z is the change divided by the square root of the two counts' sum.",
            {**prov, "compared_with": {"url": old_r.url, "retrieved_at": old_r.retrieved_at.isoformat()}},
            {"old": old, "new": new, "old_retrieved_at": old_r.retrieved_at.isoformat(), "z": z, "days": d}))
    return figures, degraded


def term_pattern(term: str) -> re.Pattern[str]:
    """A whole-word, case-insensitive match of ``term`` (also for terms such as "C++" or "Wi-Fi")."""
    return re.compile(r"(?<!\w)" + re.escape(term.strip()) + r"(?!\w)", re.IGNORECASE)


def product_figure(retrieval: BoardRetrieval, as_of: date, terms: Sequence[str] | None, origin: str,
                   ) -> tuple[Figure | None, Degradation | None]:
    """``jobs_product_roles``: open roles whose title or text names a configured product/segment term."""
    clean = [t.strip() for t in terms or () if t.strip()]
    if not clean:
        t = retrieval.ticker
        return None, Degradation(capability="web.jobs.product_roles", reason=(
            f"unavailable (no product or segment terms configured for {t} — set EQUIMIND_PRODUCT_TERMS, e.g. "
            f'\'{{"{t}": ["Product A", "Segment B"]}}\')'))
    roles = open_at(retrieval, as_of)
    patterns = {t: term_pattern(t) for t in clean}
    by_term = {t: 0 for t in clean}
    matched = 0
    for p in roles:
        hay = f"{p.title}\n{p.text}"
        hits = [t for t, rx in patterns.items() if rx.search(hay)]
        for t in hits:
            by_term[t] += 1
        matched += bool(hits)
    return _figure("jobs_product_roles", "Open roles naming a product or segment", float(matched), "roles",
                   min(retrieval.day, as_of),
                   "Count of the open roles whose title or description names at least one configured product or "
                   "segment term (whole word, any case).", provenance(retrieval, origin), by_term), None


def hiring_figures(current: BoardRetrieval, history: Sequence[BoardRetrieval], as_of: date,
                   terms: Sequence[str] | None, origin: str) -> tuple[list[Figure], list[Degradation]]:
    """Every hiring figure of ``current`` at ``as_of`` (``history``: the other retrievals, for the changes)."""
    figures = count_figures(current, as_of, origin)
    changes, degraded = change_figures(current, history, as_of, origin)
    figures.extend(changes)
    product, missing = product_figure(current, as_of, terms, origin)
    if product is not None:
        figures.append(product)
    if missing is not None:
        degraded.append(missing)
    if current.skipped:
        degraded.append(Degradation(capability="web.jobs.parse", reason=(
            f"{current.skipped} malformed postings (no title or an unreadable date) on {current.kind}:"
            f"{current.board} read {current.retrieved_at.isoformat()} were left out")))
    return figures, degraded


def choose_retrieval(retrievals: Iterable[BoardRetrieval], as_of: date) -> BoardRetrieval | None:
    """The as-of rule: the latest retrieval read on or before ``as_of`` (None when there is none)."""
    eligible = [r for r in retrievals if r.day <= as_of]
    return max(eligible, key=lambda r: r.retrieved_at) if eligible else None


def unavailable_before(ticker: str, as_of: date, fix: str) -> Degradation:
    return Degradation(capability="web.jobs", reason=(
        f"unavailable (job boards publish only the roles open when read; nothing was retrieved on or before "
        f"{as_of} — {fix})"))


def board_result(current: BoardRetrieval, history: Sequence[BoardRetrieval], as_of: date, terms: Sequence[str] | None,
            origin: str, degraded: list[Degradation]) -> WebIntelResult:
    same_board = [r for r in history if r.kind == current.kind and r.board == current.board]
    figures, more = hiring_figures(current, same_board, as_of, terms, origin)
    if (as_of - current.day).days > STALE_DAYS:
        degraded.append(Degradation(capability="web.jobs.staleness", reason=(
            f"the latest retrieval on or before {as_of} was read on {current.day} "
            f"({(as_of - current.day).days} days earlier); the figures describe that day's board")))
    return WebIntelResult(tuple(figures), tuple(degraded + more))


