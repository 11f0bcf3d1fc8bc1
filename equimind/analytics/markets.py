"""A company's main markets, read from its own 10-K: revenue by country as its inline XBRL tags it.

US GAAP (ASC 280-10-50-41) asks a company to disclose revenue from each individual foreign country that is material;
filers tag those amounts with ``srt:StatementGeographicalAxis`` and an ISO country member (``country:TW``). This module
takes the revenue facts of the latest fiscal year the 10-K reports, divides each country's amount by the undimensioned
total of the same concept and period, and calls a country a main market when its share is at least 10 % — the
threshold of the same standard's 10 % tests, not a fitted number. Regions (``us-gaap:EMEAMember``) and company members
(``nvda:OtherCountriesMember``) name no one economy, so they are listed in the notes and not used.

Every share is a ``Figure`` citing the filing (accession, document, concept, context); the macro panel asks the World
Bank for the markets' GDP growth and inflation (``sources.macro``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from equimind.analytics.inline_xbrl import InlineFact
from equimind.core.research import Figure
from equimind.lexicon.concepts import METRICS

GEO_AXIS = "srt:StatementGeographicalAxis"
MAIN_MARKET_SHARE = 0.10  # ASC 280's 10 % materiality tests
MAX_MARKETS = 5
REVENUE_CONCEPTS: tuple[str, ...] = next(m.concepts for m in METRICS if m.key == "revenue")


@dataclass(frozen=True)
class MainMarkets:
    codes: tuple[str, ...]  # ISO alpha-2, largest share first
    figures: tuple[Figure, ...]  # one revenue share per country tagged (main or not)
    notes: tuple[str, ...]  # what could not be used and why


def main_markets(facts: Sequence[InlineFact], *, source: dict[str, Any], filed: date | None = None) -> MainMarkets:
    """The main markets of the fiscal year the facts report last. ``source`` is the provenance of the document
    (accession, url or path, form); it is copied into every figure."""
    for concept in REVENUE_CONCEPTS:
        by_country = [f for f in facts if f.concept == concept and len(f.dimensions) == 1
                      and f.dimensions[0][0] == GEO_AXIS and f.days is not None and f.days >= 300]
        if by_country:
            return _shares(concept, by_country, facts, source, filed)
    return MainMarkets((), (), ("the filing tags no annual revenue by country (srt:StatementGeographicalAxis)",))


def _shares(concept: str, by_country: list[InlineFact], facts: Sequence[InlineFact], source: dict[str, Any],
            filed: date | None) -> MainMarkets:
    end = max(f.end for f in by_country)
    year = [f for f in by_country if f.end == end]
    totals = [f for f in facts if f.concept == concept and not f.dimensions and f.end == end
              and f.days is not None and f.days >= 300]
    if not totals or totals[0].value <= 0:
        return MainMarkets((), (), (f"no undimensioned {concept} total for the year ending {end}",))
    total = totals[0]
    figures: list[Figure] = []
    notes: list[str] = []
    seen: set[str] = set()
    for f in sorted(year, key=lambda x: -x.value):
        member = f.dimensions[0][1]
        if not member.startswith("country:") or len(member) != len("country:") + 2:
            notes.append(f"{member} is a region or a company member, not one economy")
            continue
        code = member.split(":", 1)[1].upper()
        if code in seen:
            continue
        seen.add(code)
        share = f.value / total.value
        figures.append(Figure(
            id=f"revenue_share_{code.lower()}", name=f"Share of revenue from {code} (fiscal year ending {end})",
            value=share, unit="ratio", as_of=filed or end,
            formula=f"{concept} tagged {GEO_AXIS}={member} / undimensioned {concept}, same period",
            inputs={"country_revenue": f.value, "total_revenue": total.value, "period_start": f.start,
                    "period_end": f.end},
            provenance={**source, "concept": concept, "context": f.context_id, "total_context": total.context_id,
                        "member": member}))
    codes = tuple(fig.id.rsplit("_", 1)[1].upper() for fig in figures
                  if fig.value is not None and fig.value >= MAIN_MARKET_SHARE)[:MAX_MARKETS]
    return MainMarkets(codes, tuple(figures), tuple(dict.fromkeys(notes)))
