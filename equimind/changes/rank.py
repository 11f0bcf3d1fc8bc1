"""Materiality order of the changes, by a stated rule (``RANKING_RULE``), and each change's one-line summary."""

from __future__ import annotations

from collections.abc import Sequence

from equimind.changes.diff import RawChange
from equimind.changes.model import Change, ChangeKind, FigureDelta
from equimind.lexicon.lm_lists import Lexicon
from equimind.lexicon.sentiment import score_text
from equimind.lexicon.text import clip

SECTION_ORDER = ("risk_factors", "mdna", "business", "notes", "market_risk", "legal", "full_text")
NO_BASE = 1000.0  # the materiality of a figure that grew from zero (no relative size): above any finite ratio
RANKING_RULE = (
    "Tier 0: whole risk factors added or removed, more Loughran-McDonald negative + uncertainty words first. "
    "Tier 1: figures changed, the largest relative change |new - old| / |old| of the sentence first (a figure "
    "from zero counts as 1000). Tier 2: rewordings and added / removed paragraphs, the largest change in "
    "negative + uncertainty words first (|new - old| of each count, summed; an added paragraph counts its own "
    "words, a removed one the words it took away). Ties: section (risk factors, MD&A, business, notes, market "
    "risk, legal), then position in the new filing (else the old).")


def _lm(text: str, lex: Lexicon | None) -> tuple[int, int]:
    if lex is None or not text:
        return 0, 0
    counts = score_text(text, lex).counts
    return counts.get("negative", 0), counts.get("uncertainty", 0)


def _pct(d: FigureDelta) -> str:
    if d.relative is None:
        return "from zero"
    sign = "+" if d.new_value >= d.old_value else "-"
    return f"{sign}{d.relative * 100:.1f}%"


def _clip(text: str, n: int = 160) -> str:
    return clip(text, n)


def _summary(c: RawChange, neg: int, unc: int) -> str:
    if c.is_risk_factor:
        verb = "New risk factor" if c.kind == ChangeKind.ADDED else "Risk factor dropped"
        return f"{verb}: \u201c{_clip(c.risk_factor or '')}\u201d"
    if c.kind == ChangeKind.FIGURES_CHANGED:
        figs = "; ".join(f"{d.old_text} \u2192 {d.new_text} ({_pct(d)})" for d in c.figures)
        return f"Figures changed: {figs} \u2014 \u201c{_clip(c.new.quote if c.new else '', 120)}\u201d"
    words = []
    if neg:
        words.append(f"negative words {neg:+d}")
    if unc:
        words.append(f"uncertainty words {unc:+d}")
    tone = f" ({', '.join(words)})" if words else ""
    if c.kind == ChangeKind.REWORDED:
        return f"Reworded, similarity {c.similarity or 0:.2f}{tone}: \u201c{_clip(c.new.quote if c.new else '')}\u201d"
    text = c.new.quote if c.kind == ChangeKind.ADDED and c.new else (c.old.quote if c.old else "")
    verb = "New paragraph" if c.kind == ChangeKind.ADDED else "Paragraph removed"
    return f"{verb}{tone}: \u201c{_clip(text)}\u201d"


def rank(raw: Sequence[RawChange], lex: Lexicon | None) -> list[Change]:
    keyed = []
    for c in raw:
        on, ou = _lm(c.old_text, lex)
        nn, nu = _lm(c.new_text, lex)
        neg, unc = nn - on, nu - ou
        if c.is_risk_factor:
            tier, mat = 0, float(nn + nu if c.kind == ChangeKind.ADDED else on + ou)
        elif c.kind == ChangeKind.FIGURES_CHANGED:
            tier, mat = 1, max((NO_BASE if d.relative is None else d.relative) for d in c.figures)
        else:
            tier, mat = 2, float(abs(neg) + abs(unc))
        side = c.new or c.old
        pos = side.start if side else 0
        order = SECTION_ORDER.index(c.section) if c.section in SECTION_ORDER else len(SECTION_ORDER)
        keyed.append(((tier, -mat, order, 0 if c.new else 1, pos), c, tier, mat, neg, unc))
    keyed.sort(key=lambda t: t[0])
    out = []
    for n, (_, c, tier, mat, neg, unc) in enumerate(keyed, start=1):
        out.append(Change(rank=n, kind=c.kind, section=c.section, risk_factor=c.risk_factor,
                          is_risk_factor=c.is_risk_factor, similarity=c.similarity, figures=c.figures,
                          negative_delta=neg, uncertainty_delta=unc, tier=tier, materiality=round(mat, 4),
                          inserted=c.inserted, deleted=c.deleted, elsewhere=c.elsewhere,
                          old=c.old, new=c.new, summary=_summary(c, neg, unc)))
    return out
