"""Records the debate passes around internally (frozen dataclasses); converted to ``models.Claim`` at the end."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from equimind.core.research import Citation, Claim, Speaker


class Theme(StrEnum):
    """What a claim is about. Claims on the same theme from opposite sides contradict each other."""

    GROWTH = "growth"
    DEMAND = "demand"
    PROFITABILITY = "profitability"
    VALUATION = "valuation"
    MOMENTUM = "momentum"
    VOLATILITY = "volatility"
    LEVERAGE = "leverage"
    CAPITAL_RETURN = "capital_return"
    CONCENTRATION = "concentration"
    REGULATION = "regulation"
    SUPPLY = "supply"
    GUIDANCE = "guidance"
    COMPETITION = "competition"
    LEGAL = "legal"
    TONE = "tone"
    ACTIVITY = "activity"  # hiring (job postings) and engineering activity (GitHub)
    OTHER = "other"


class ClaimKind(StrEnum):
    OPENING = "opening"
    REBUTTAL = "rebuttal"


class Author(StrEnum):
    """Who wrote the claim: the deterministic analyst or an LLM agent."""

    ANALYST = "offline"
    LLM = "llm"


@dataclass(frozen=True)
class SpanRef:
    """A quoted span [start, end) of a document's canonical text (before verification)."""

    doc_id: str
    start: int
    end: int
    quote: str


class BasisKind(StrEnum):
    """Which rule table a claim's strength came from (``equimind.debate.cues``, ``equimind.debate.figure_rules``)."""

    CUE = "cue"  # a text cue in a cited sentence
    TONE = "tone"  # a tone shift between two filings
    FIGURE = "figure"  # a figure rule
    CHANGE = "change"  # a change between two filings (``debate.change_claims``)


@dataclass(frozen=True)
class Basis:
    """The rule row a claim's strength came from, e.g. ``Basis(BasisKind.FIGURE, "pe_ttm")`` ("figure:pe_ttm")."""

    kind: BasisKind
    name: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.name}"


@dataclass(frozen=True)
class DraftClaim:
    """A claim as an analyst states it. ``strength`` is set from the evidence, never by the speaker.

    ``evidence_date`` is the newest date of what it cites (filing date or figure as-of), used for recency.
    ``basis`` names the rule row its strength came from ("cue:revenue_up", "figure:pe_ttm", "tone:improving"; None
    when none, i.e. strength 0).
    """

    id: str
    speaker: Speaker
    text: str
    theme: Theme
    strength: float
    signal: str
    spans: tuple[SpanRef, ...] = ()
    figure_ids: tuple[str, ...] = ()
    kind: ClaimKind = ClaimKind.OPENING
    rebuts: str | None = None
    author: Author = Author.ANALYST
    evidence_date: date | None = None
    basis: Basis | None = None

    def sources(self) -> tuple[str, ...]:
        """Independent sources this claim rests on (documents and figures), for the agreement bonus."""
        return tuple(sorted({s.doc_id for s in self.spans} | set(self.figure_ids)))


@dataclass(frozen=True)
class VerifiedClaim:
    """A DraftClaim whose every citation was found in the stored text (or figure among the figures)."""

    draft: DraftClaim
    citations: tuple[Citation, ...]

    @property
    def id(self) -> str:
        return self.draft.id

    def to_model(self) -> Claim:
        d = self.draft
        return Claim(speaker=d.speaker, text=d.text, citations=list(self.citations), figure_ids=list(d.figure_ids),
                     strength=round(d.strength, 4), signal=d.signal)
