"""The judge rule: rating and conviction derived from verified claims (docs/decisions/0003-offline-judge-rule.md).

weight(c)   = strength(c) × recency(c) × agreement(c) × (CONTESTED if c is contested)
recency(c)  = max(RECENCY_FLOOR, 0.5 ** (age_days / HALF_LIFE_DAYS)), age measured from the query's as-of date
agreement(c)= min(AGREEMENT_CAP, 1 + AGREEMENT_STEP × (independent sources on the same side and theme − 1))
S           = (B − R) / (B + R), B and R the summed bull and bear weights of opening claims
rating      = STRONG_BUY if S ≥ STRONG and the bull side has ≥ STRONG_MIN_CLAIMS claims over ≥ STRONG_MIN_THEMES
              themes; BUY if S ≥ BUY; the mirror for SELL / STRONG_SELL; HOLD otherwise
conviction  = mass × (0.5 + 0.5 × decisiveness), mass = 1 − exp(−(B + R) / MASS_SCALE),
              decisiveness = |S| for BUY/SELL ratings, 1 − |S| / BUY for HOLD

contested    : the other side has a verified opening claim on the same theme at least as strong (a contradiction
               the judge resolves against c)

Rebuttals are the debate's transcript: they reuse evidence already counted and carry no weight, so the verdict is a
function of the verified opening evidence alone, whoever argued it and however many rounds ran.
Pure functions: same claims, same as-of, same verdict.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from equimind.core.research import Rating, Speaker
from equimind.debate.change_claims import CONSTANTS as CHANGE_CONSTANTS
from equimind.debate.cues import (
    BULL_CUES_IN_RISK_FACTORS,
    HEDGE_FACTOR,
    HEDGES,
    NEGATIONS,
    NEW_RISK_BONUS,
    NEW_RISK_PROBE,
    TEXT_CUES,
    TONE_DELTA,
    TONE_MIN_POLAR_WORDS,
    TONE_STRENGTH,
)
from equimind.debate.figure_rules import FIGURE_ALIASES, FIGURE_RULES
from equimind.debate.offline import shorten
from equimind.debate.records import ClaimKind, DraftClaim, Theme
from equimind.lexicon.injection import INJECTION_PATTERNS
from equimind.lexicon.text import clip

RULES_VERSION = "1"

HALF_LIFE_DAYS = 365.0
RECENCY_FLOOR = 0.25
AGREEMENT_STEP = 0.25
AGREEMENT_CAP = 1.5
CONTESTED = 0.5
BUY = 0.15
STRONG = 0.5
STRONG_MIN_CLAIMS = 4
STRONG_MIN_THEMES = 2
MASS_SCALE = 3.0
TOP_N = 5


def tables_repr() -> str:
    """Every rule table and constant of the offline analyst (``debate.cues``, ``debate.figure_rules``, the debate's
    prompt-injection patterns of ``lexicon.injection``) as text, hashed with the judge's constants into the rules
    fingerprint."""
    cues = [(c.name, c.side.value, c.theme.value, c.strength, c.pattern.pattern) for c in TEXT_CUES]
    constants = (HEDGE_FACTOR, NEW_RISK_BONUS, NEW_RISK_PROBE, TONE_MIN_POLAR_WORDS, TONE_DELTA, TONE_STRENGTH,
                 BULL_CUES_IN_RISK_FACTORS)
    parts = [RULES_VERSION, repr(cues), repr(FIGURE_RULES), repr(sorted(FIGURE_ALIASES.items())),
             repr(sorted(NEGATIONS)), repr(sorted(HEDGES)), repr(constants),
             repr([p.pattern for p in INJECTION_PATTERNS]), repr(CHANGE_CONSTANTS)]
    return "\n".join(parts)


def rules_fingerprint() -> str:
    """sha256 over the signal tables and the judge constants: recorded in every output as offline-rules@v1."""
    constants = (HALF_LIFE_DAYS, RECENCY_FLOOR, AGREEMENT_STEP, AGREEMENT_CAP, CONTESTED, BUY, STRONG,
                 STRONG_MIN_CLAIMS, STRONG_MIN_THEMES, MASS_SCALE, TOP_N)
    return hashlib.sha256(f"{tables_repr()}\n{constants!r}".encode()).hexdigest()


@dataclass(frozen=True)
class Weighted:
    claim: DraftClaim
    recency: float
    agreement: float
    contested_by: str | None
    weight: float


@dataclass(frozen=True)
class Verdict:
    rating: Rating
    conviction: float
    score: float
    bull_weight: float
    bear_weight: float
    winning_side: Speaker | None
    thesis: str
    key_risks: tuple[str, ...]
    key_catalysts: tuple[str, ...]
    reasoning: tuple[str, ...]
    weighted: tuple[Weighted, ...]


def recency(evidence_date: date | None, as_of: date) -> float:
    if evidence_date is None:
        return RECENCY_FLOOR
    age = max(0, (as_of - evidence_date).days)
    return max(RECENCY_FLOOR, float(0.5 ** (age / HALF_LIFE_DAYS)))


def _agreement(openings: Sequence[DraftClaim]) -> dict[tuple[Speaker, Theme], float]:
    sources: dict[tuple[Speaker, Theme], set[str]] = defaultdict(set)
    for c in openings:
        sources[(c.speaker, c.theme)].update(c.sources() if c.strength > 0 else ())
    return {k: min(AGREEMENT_CAP, 1.0 + AGREEMENT_STEP * max(0, len(v) - 1)) for k, v in sources.items()}


def _contested(openings: Sequence[DraftClaim]) -> dict[str, str]:
    """claim id -> id of the strongest opposing same-theme claim at least as strong as it."""
    out: dict[str, str] = {}
    for c in openings:
        rivals = [o for o in openings if o.speaker is not c.speaker and o.theme is c.theme
                  and o.strength >= c.strength]
        if rivals:
            out[c.id] = max(rivals, key=lambda o: (o.strength, o.id)).id
    return out


def weigh(claims: Sequence[DraftClaim], as_of: date) -> list[Weighted]:
    openings = [c for c in claims if c.kind is ClaimKind.OPENING]
    agree = _agreement(openings)
    contested = _contested(openings)
    out: list[Weighted] = []
    for c in sorted(openings, key=lambda c: c.id):
        rec = recency(c.evidence_date, as_of)
        agr = agree[(c.speaker, c.theme)]
        by = contested.get(c.id)
        w = c.strength * rec * agr * (CONTESTED if by else 1.0)
        out.append(Weighted(c, round(rec, 4), round(agr, 4), by, round(w, 6)))
    return out


def rate(score: float, winners: Sequence[Weighted]) -> Rating:
    themes = {w.claim.theme for w in winners}
    strong_ok = len(winners) >= STRONG_MIN_CLAIMS and len(themes) >= STRONG_MIN_THEMES
    if score >= BUY:
        return Rating.STRONG_BUY if score >= STRONG and strong_ok else Rating.BUY
    if score <= -BUY:
        return Rating.STRONG_SELL if score <= -STRONG and strong_ok else Rating.SELL
    return Rating.HOLD


def conviction(rating: Rating, score: float, mass: float) -> float:
    m = 1.0 - math.exp(-mass / MASS_SCALE)
    decisive = 1.0 - abs(score) / BUY if rating is Rating.HOLD else abs(score)
    return round(m * (0.5 + 0.5 * max(0.0, decisive)), 4)


def _top(weighted: Sequence[Weighted], side: Speaker) -> list[Weighted]:
    return sorted((w for w in weighted if w.claim.speaker is side), key=lambda w: (-w.weight, w.claim.id))


def _theme_lines(weighted: Sequence[Weighted]) -> list[str]:
    totals: dict[Theme, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for w in weighted:
        totals[w.claim.theme][0 if w.claim.speaker is Speaker.BULL else 1] += w.weight
    lines = []
    for theme in sorted(totals, key=lambda t: t.value):
        b, r = totals[theme]
        if b and r:
            side = "bull" if b > r else "bear" if r > b else "neither side"
            lines.append(f"Contradiction on {theme.value}: bull {b:.2f} vs bear {r:.2f} → resolved for {side}.")
        else:
            lines.append(f"{theme.value}: uncontested {'bull' if b else 'bear'} evidence {max(b, r):.2f}.")
    return lines


THESIS_POINTS = 3  # the strongest points of each side the thesis states
_THESIS_CLAIM = 115  # characters of a claim's text in the thesis (its citation marker is added in full)
THESIS_MAX = 1200  # JudgeSynthesis.winning_thesis's limit


def cite_marker(c: DraftClaim) -> str:
    """What a reader checks a thesis point against: the figure ids, else the document spans it cites."""
    if c.figure_ids:
        return "[figure " + ", ".join(c.figure_ids) + "]"
    if c.spans:
        return "[" + "; ".join(f"{s.doc_id}:{s.start}-{s.end}" for s in c.spans[:2]) + "]"
    return "[uncited]"


def _point(w: Weighted) -> str:
    return f"{clip(w.claim.text, _THESIS_CLAIM, at_word=True)} {cite_marker(w.claim)} (weight {w.weight:.2f})"


def _why(winners: Sequence[Weighted], losers: Sequence[Weighted], win: str, lose: str) -> str:
    """Why the losing side lost, from the rule's terms: contested claims, decayed evidence, or less of it."""
    if not losers:
        return f"the {lose} case had no verified claim"
    contested = sum(1 for w in losers if w.contested_by)
    stale = sum(1 for w in losers if w.recency < 0.5)
    reasons = [f"its {len(losers)} claim(s) weigh {sum(w.weight for w in losers):.2f} against "
               f"{sum(w.weight for w in winners):.2f}"]
    if contested:
        reasons.append(f"{contested} of them met by {win} evidence at least as strong on the same theme (×{CONTESTED})")
    if stale:
        reasons.append(f"{stale} rest on evidence over a year old (half-life {HALF_LIFE_DAYS:.0f} days)")
    return f"the {lose} case lost: " + "; ".join(reasons)


def _rating_rule(rating: Rating) -> str:
    """The rule's condition for ``rating``, as the thesis states it."""
    strong = f" with ≥ {STRONG_MIN_CLAIMS} claims over ≥ {STRONG_MIN_THEMES} themes"
    return {Rating.STRONG_BUY: f"STRONG_BUY at S ≥ +{STRONG:.2f}{strong}", Rating.BUY: f"BUY at S ≥ +{BUY}",
            Rating.HOLD: f"HOLD within ±{BUY}", Rating.SELL: f"SELL at S ≤ −{BUY}",
            Rating.STRONG_SELL: f"STRONG_SELL at S ≤ −{STRONG:.2f}{strong}"}[rating]


def _thesis(rating: Rating, score: float, bull: Sequence[Weighted], bear: Sequence[Weighted]) -> str:
    """A thesis a reader can check: the rule's verdict and margin, the strongest points of each side with what each
    cites, why the losing side lost, then the key risk and catalyst. Every number in it is a claim's (cited) or the
    rule's own (S, B, R, weights)."""
    b, r = round(sum(w.weight for w in bull), 4), round(sum(w.weight for w in bear), 4)  # as the verdict records
    if rating in (Rating.BUY, Rating.STRONG_BUY):
        lead, why = "Bull case prevails", _why(bull, bear, "bull", "bear")
    elif rating in (Rating.SELL, Rating.STRONG_SELL):
        lead, why = "Bear case prevails", _why(bear, bull, "bear", "bull")
    else:
        lead, why = "Evidence is balanced", "neither side's weight exceeds the other's by the margin a rating needs"
    head = f"{lead}: S = {score:+.2f} (B {b:.2f} vs R {r:.2f}; {_rating_rule(rating)})"
    for points in range(THESIS_POINTS, 0, -1):  # long citation markers: fewer points, never a cut number
        text = _compose(head, why, bull, bear, points)
        if len(text) <= THESIS_MAX:
            return text
    return clip(text, THESIS_MAX, at_word=True)


def _compose(head: str, why: str, bull: Sequence[Weighted], bear: Sequence[Weighted], points: int) -> str:
    parts = [head + "."]
    for label, side in (("Bull", bull), ("Bear", bear)):
        if side:
            parts.append(f"{label}: " + "; ".join(f"({i}) {_point(w)}" for i, w in enumerate(side[:points], 1))
                         + ".")
    parts.append(why[0].upper() + why[1:] + ".")
    keys = ([f"key risk: bear (1), {bear[0].claim.theme.value}"] if bear else []) + (
        [f"key catalyst: bull (1), {bull[0].claim.theme.value}"] if bull else [])
    if keys:
        parts.append("; ".join(keys).capitalize() + ".")
    return " ".join(parts)


def _distinct(side: Sequence[Weighted]) -> tuple[str, ...]:
    """The TOP_N heaviest claims' texts, one per quoted sentence or figure set (a fact listed once), heaviest first."""
    out: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for w in side:
        key = w.claim.figure_ids or tuple(f"{s.doc_id}:{s.start}" for s in w.claim.spans) or (w.claim.text,)
        if key in seen or w.claim.text in out:
            continue
        seen.add(key)
        out.append(w.claim.text)
        if len(out) == TOP_N:
            break
    return tuple(out)


def judge(claims: Sequence[DraftClaim], as_of: date) -> Verdict:
    """Apply the rule to verified claims. Raises ValueError when there is no opening claim (callers refuse first)."""
    weighted = weigh(claims, as_of)
    if not weighted:
        raise ValueError("no verified opening claim to judge; the debate must refuse instead")
    bull, bear = _top(weighted, Speaker.BULL), _top(weighted, Speaker.BEAR)
    b, r = sum(w.weight for w in bull), sum(w.weight for w in bear)
    score = (b - r) / (b + r) if b + r > 0 else 0.0
    rating = rate(score, [w for w in (bull if score > 0 else bear) if w.weight > 0])
    conv = conviction(rating, score, b + r)
    side = Speaker.BULL if rating in (Rating.BUY, Rating.STRONG_BUY) else (
        Speaker.BEAR if rating in (Rating.SELL, Rating.STRONG_SELL) else None)
    contested = [f"Contested: “{shorten(w.claim.text, 90)}” is met by opposing evidence at least as strong: "
                 f"weight ×{CONTESTED}." for w in weighted if w.contested_by]
    reasoning = [
        f"Verified opening claims: {len(bull)} bull, {len(bear)} bear.",
        *(_theme_lines(weighted)),
        *contested,
        f"Weights (strength × recency × agreement × contested): bull B = {b:.3f}, bear R = {r:.3f}.",
        f"S = (B − R) / (B + R) = {score:+.3f} → {rating.value} (BUY at ±{BUY}, STRONG at ±{STRONG} with ≥"
        f"{STRONG_MIN_CLAIMS} claims over ≥{STRONG_MIN_THEMES} themes).",
        f"Conviction = (1 − e^(−{b + r:.2f}/{MASS_SCALE})) × (0.5 + 0.5 × decisiveness) = {conv:.3f}.",
    ]
    return Verdict(rating=rating, conviction=conv, score=round(score, 4), bull_weight=round(b, 4),
                   bear_weight=round(r, 4), winning_side=side, thesis=_thesis(rating, round(score, 4), bull, bear),
                   key_risks=_distinct(bear), key_catalysts=_distinct(bull), reasoning=tuple(reasoning),
                   weighted=tuple(weighted))
