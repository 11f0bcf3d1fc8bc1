"""Point-in-time selection of XBRL facts and period arithmetic (TTM, single quarters) over companyfacts.

The as-of rule: a fact counts only if its filing was filed on or before the as-of date; when several filings report
the same concept for the same period, the one filed most recently *by the as-of date* wins, so a restatement filed
later never leaks back (the value is what an analyst could have read that day).

Period arithmetic: a duration fact [start, end] is an edge between the nodes ``start`` and ``end + 1 day``. The value
over any interval [a, b) is the signed sum along a path from a to b (forward edge +value, backward edge -value), so
Q4 = FY - 9M YTD and TTM = FY + YTD - prior-year YTD fall out of a shortest-path search instead of special cases.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import pairwise

from equimind.lexicon.forms import PERIODIC_FORMS
from equimind.sources.base import CompanyFacts, XbrlFact

ONE_DAY = timedelta(days=1)
MAX_EDGE_DAYS = 380  # ignore multi-year durations
MAX_PATH_EDGES = 4
QUARTER_DAYS = (80, 100)
YEAR_DAYS = (350, 380)


@dataclass(frozen=True)
class Component:
    """One reported fact used in a value, with its sign and the value after any split normalisation."""

    sign: int
    fact: XbrlFact
    value: float
    split_factor: float = 1.0

    def as_dict(self) -> dict[str, object]:
        f = self.fact
        out: dict[str, object] = {
            "sign": self.sign, "concept": f.qualified, "unit": f.unit, "start": f.start, "end": f.end,
            "reported_value": f.value, "accession": f.accession, "filed": f.filed, "form": f.form,
        }
        if self.split_factor != 1.0:
            out["split_factor"] = self.split_factor
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class PeriodValue:
    """A value over [start, end] (start None = instant at end) built from one or more reported facts."""

    value: float
    start: date | None
    end: date
    components: tuple[Component, ...]

    @property
    def known_at(self) -> date:
        """The day the last input became public (max filed date): the value could not be known earlier."""
        return max(c.fact.filed for c in self.components)

    @property
    def latest(self) -> XbrlFact:
        return max((c.fact for c in self.components), key=lambda f: (f.filed, f.accession))

    @property
    def derivation(self) -> str:
        if len(self.components) == 1 and self.components[0].sign > 0:
            return "as reported"
        return " ".join(
            f"{'+' if c.sign > 0 else '-'}{c.fact.qualified}"
            f"[{f'{c.fact.start}..' if c.fact.start else ''}{c.fact.end}]" for c in self.components
        )

    def provenance(self) -> dict[str, object]:
        last = self.latest
        return {
            "source": "sec_edgar", "concept": last.qualified, "unit": last.unit,
            "period": {"start": self.start, "end": self.end}, "accession": last.accession, "filed": last.filed,
            "form": last.form, "derivation": self.derivation, "facts": [c.as_dict() for c in self.components],
        }


SplitFactor = Callable[[XbrlFact], float]


def known_facts(
    cf: CompanyFacts, concept: str, unit: str, as_of: date, *, forms: Sequence[str] = PERIODIC_FORMS,
) -> list[XbrlFact]:
    """Facts of ``concept`` in ``unit`` filed on or before ``as_of`` in a periodic report, one per period: the one
    filed last by ``as_of``."""
    wanted = set(forms)
    best: dict[tuple[date | None, date], XbrlFact] = {}
    for f in cf.get(concept, unit):
        if f.filed > as_of or f.form not in wanted or f.end > as_of:
            continue
        key = (f.start, f.end)
        cur = best.get(key)
        if cur is None or (f.filed, f.accession) > (cur.filed, cur.accession):
            best[key] = f
    return sorted(best.values(), key=lambda f: (f.end, f.start or f.end))


def _component(f: XbrlFact, sign: int, split_factor: SplitFactor | None) -> Component:
    k = split_factor(f) if split_factor else 1.0
    return Component(sign=sign, fact=f, value=f.value / k, split_factor=k)


def latest_instant(facts: Iterable[XbrlFact], *, near: date | None = None, tolerance_days: int = 10,
                   split_factor: SplitFactor | None = None) -> PeriodValue | None:
    """The instant fact with the latest end (or the one closest to ``near`` within the tolerance)."""
    inst = [f for f in facts if f.start is None]
    if near is not None:
        inst = [f for f in inst if abs((f.end - near).days) <= tolerance_days]
        inst.sort(key=lambda f: (-abs((f.end - near).days), f.end))
    if not inst:
        return None
    f = inst[-1]
    c = _component(f, 1, split_factor)
    return PeriodValue(value=c.value, start=None, end=f.end, components=(c,))


def latest_duration_end(facts: Iterable[XbrlFact]) -> date | None:
    ends = [f.end for f in facts if f.start is not None and (f.days or 0) <= MAX_EDGE_DAYS]
    return max(ends, default=None)


def duration_ends(facts: Iterable[XbrlFact]) -> set[date]:
    return {f.end for f in facts if f.start is not None and (f.days or 0) <= MAX_EDGE_DAYS}


def period_value(
    facts: Sequence[XbrlFact], end: date, days: tuple[int, int], *, split_factor: SplitFactor | None = None,
) -> PeriodValue | None:
    """The value over the period ending ``end`` whose length lies in ``days`` (e.g. a quarter or twelve months),
    reported directly or derived by the fewest additions/subtractions of reported periods. None if impossible."""
    edges: dict[date, list[tuple[date, int, XbrlFact]]] = {}
    for f in facts:
        if f.start is None or (f.days or 0) > MAX_EDGE_DAYS:
            continue
        a, b = f.start, f.end + ONE_DAY
        edges.setdefault(a, []).append((b, -1, f))  # walking start -> end+1 from the b side subtracts
        edges.setdefault(b, []).append((a, +1, f))
    target = end + ONE_DAY
    # Breadth-first from the end node backwards; the first node at an acceptable distance wins.
    paths: dict[date, tuple[tuple[int, XbrlFact], ...]] = {target: ()}
    queue = deque([target])
    while queue:
        node = queue.popleft()
        path = paths[node]
        if path and days[0] <= (target - node).days <= days[1]:
            comps = tuple(_component(f, s, split_factor) for s, f in path)
            total = round(sum(c.sign * c.value for c in comps), 10)  # 0.9, not 0.8999999999999999
            return PeriodValue(value=total, start=node, end=end,
                               components=comps)
        if len(path) >= MAX_PATH_EDGES:
            continue
        for nxt, sign, f in sorted(edges.get(node, []), key=lambda e: (e[0], e[2].accession)):
            if nxt not in paths:
                paths[nxt] = (*path, (sign, f))
                queue.append(nxt)
    return None


def year_ago_end(ends: Iterable[date], end: date, tolerance_days: int = 10) -> date | None:
    """The reported period end closest to one year before ``end`` (52/53-week years drift by a few days)."""
    target = end - timedelta(days=365)
    near = [e for e in ends if abs((e - target).days) <= tolerance_days]
    return min(near, key=lambda e: abs((e - target).days)) if near else None


def split_factor_between(splits: Sequence[tuple[date, float]], after: date, until: date) -> float:
    """Product of split ratios of splits dated in (after, until]."""
    k = 1.0
    for day, ratio in splits:
        if after < day <= until and ratio > 0:
            k *= ratio
    return k


# ---------------------------------------------------------------------------------------------- split inference

NICE_RATIOS = (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 100.0)


@dataclass(frozen=True)
class SplitEvent:
    """A share split. ``day``: its date (from prices) or the first filing on the new share basis (from XBRL)."""

    day: date
    ratio: float
    evidence: str  # "prices" or "xbrl restatement (n periods)"


def _split_ratio(old: float, new: float) -> float | None:
    """The split ratio r with old ≈ new * r (per-share values rounded to cents), forward or reverse, else None."""
    if abs(old) < 0.2 or abs(new) < 0.05 or (old > 0) != (new > 0):
        return None
    for r in NICE_RATIOS:
        for ratio in (r, 1.0 / r):
            if abs(old - new * ratio) <= 0.0051 * max(ratio, 1.0) + 0.01 * abs(old):
                return ratio
    return None


def infer_eps_splits(facts: Iterable[XbrlFact], as_of: date) -> list[SplitEvent]:
    """Splits evidenced by per-share facts re-reported at a split ratio (old ≈ new × r), using only filings made on
    or before ``as_of``. Each pair bounds the split to (old filing, new filing]; overlapping bounds with the same
    ratio are one split, dated at the first filing on the new basis; at least two periods must agree."""
    by_period: dict[tuple[str, str, date | None, date], list[XbrlFact]] = {}
    for f in facts:
        if f.filed <= as_of:
            by_period.setdefault((f.qualified, f.unit, f.start, f.end), []).append(f)
    pairs: list[tuple[float, date, date]] = []
    for group in by_period.values():
        group.sort(key=lambda f: (f.filed, f.accession))
        for a, b in pairwise(group):
            ratio = _split_ratio(a.value, b.value) if a.value != b.value else None
            if ratio is not None:
                pairs.append((ratio, a.filed, b.filed))
    events: list[SplitEvent] = []
    for ratio in sorted({p[0] for p in pairs}):
        spans = sorted((lo, hi) for r, lo, hi in pairs if r == ratio)
        cluster: list[tuple[date, date]] = []
        for lo, hi in [*spans, (date.max, date.max)]:
            cur_lo = max((c[0] for c in cluster), default=lo)
            cur_hi = min((c[1] for c in cluster), default=hi)
            if cluster and lo < cur_hi and max(lo, cur_lo) < min(hi, cur_hi):
                cluster.append((lo, hi))
                continue
            if len(cluster) >= 2:
                events.append(SplitEvent(cur_hi, ratio, f"xbrl restatement ({len(cluster)} periods)"))
            cluster = [(lo, hi)]
    return sorted(events, key=lambda e: e.day)


def merge_splits(price_splits: Sequence[tuple[date, float]], inferred: Sequence[SplitEvent],
                 lookback_days: int = 400) -> list[SplitEvent]:
    """Price-data splits (exact dates) plus inferred ones not already explained by a price split of the same ratio
    dated within ``lookback_days`` before the inferred date."""
    events = [SplitEvent(d, r, "prices") for d, r in price_splits if r > 0]
    for e in inferred:
        if not any(p.ratio == e.ratio and timedelta(0) <= e.day - p.day <= timedelta(days=lookback_days)
                   for p in events if p.evidence == "prices"):
            events.append(e)
    return sorted(events, key=lambda e: e.day)
