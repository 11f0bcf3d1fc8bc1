"""The offline analyst's rule for filing-to-filing changes (``equimind.changes``; decision record 0015).

A change between the company's two latest periodic filings is evidence about risk, read from the risk factors only:

- **Bear**: a whole risk factor that is new (``CHANGE_NEW_FACTOR``), or a risk-factor paragraph added or reworded
  whose Loughran-McDonald negative + uncertainty words grew by at least ``CHANGE_MIN_WORDS`` (``CHANGE_GREW``).
- **Bull**: a whole risk factor dropped (``CHANGE_DROPPED``), or a risk-factor rewording whose negative + uncertainty
  words fell by at least ``CHANGE_MIN_WORDS`` (``CHANGE_SOFTENED``).
- A rewording the reworded check found elsewhere (``Change.elsewhere``: its counterpart is the closest paragraph of the
  other filing, not the same paragraph aligned) argues neither side: its word counts compare two paragraphs.

A new or grown risk cites the new filing's span; a dropped one cites the old filing's (the only text there is), and
the claim says it is absent from the new one. Each claim's theme is the theme of the first text cue
(``debate.cues``) its quote triggers, else ``other``. At most ``CHANGE_MAX_PER_SIDE`` change claims a side, in the
changes' materiality order. Strengths sit on the scale of the text cues (a plain risk cue weighs 0.4-0.7): a new
risk factor weighs like a strong cue, a grown paragraph like a plain one, and the bull side weighs less because a
dropped disclosure is weaker evidence than a new one (companies drop risk factors for drafting reasons too).
The values were set by that reasoning, not fitted to any outcome.
"""

from __future__ import annotations

from equimind.changes.model import Change, ChangeKind, ChangeReport
from equimind.core.documents import sha256_hex
from equimind.core.research import Speaker
from equimind.debate import cues as cue_rules
from equimind.debate.records import Basis, BasisKind, ClaimKind, DraftClaim, SpanRef, Theme
from equimind.lexicon.text import clip

CHANGE_NEW_FACTOR = 0.7
CHANGE_GREW = 0.5
CHANGE_DROPPED = 0.45
CHANGE_SOFTENED = 0.35
CHANGE_MIN_WORDS = 3
CHANGE_MAX_PER_SIDE = 3
CONSTANTS = (CHANGE_NEW_FACTOR, CHANGE_GREW, CHANGE_DROPPED, CHANGE_SOFTENED, CHANGE_MIN_WORDS, CHANGE_MAX_PER_SIDE)


def _theme(text: str) -> Theme:
    cues, _ = cue_rules.sentence_cues(text)
    return cues[0].theme if cues else Theme.OTHER


def _short(text: str, n: int = 200) -> str:
    return clip(text, n)


def _rule(c: Change) -> tuple[Speaker, float, str] | None:
    if c.section != "risk_factors":
        return None
    words = c.negative_delta + c.uncertainty_delta
    if c.is_risk_factor:
        if c.kind == ChangeKind.ADDED:
            return Speaker.BEAR, CHANGE_NEW_FACTOR, "new-risk-factor"
        return Speaker.BULL, CHANGE_DROPPED, "dropped-risk-factor"
    if c.elsewhere:  # its counterpart is the closest paragraph elsewhere: word counts compare two paragraphs
        return None
    if c.kind in (ChangeKind.ADDED, ChangeKind.REWORDED) and words >= CHANGE_MIN_WORDS:
        return Speaker.BEAR, CHANGE_GREW, "risk-grew"
    if c.kind == ChangeKind.REWORDED and words <= -CHANGE_MIN_WORDS:
        return Speaker.BULL, CHANGE_SOFTENED, "risk-softened"
    return None


def change_claims(report: ChangeReport | None) -> list[DraftClaim]:
    """Bull and bear opening claims from a change report (module docstring)."""
    if report is None:
        return []
    old = f"{report.old.form} filed {report.old.filed_at or report.old.title}"
    new = f"{report.new.form} filed {report.new.filed_at or report.new.title}"
    out: list[DraftClaim] = []
    per_side = {Speaker.BULL: 0, Speaker.BEAR: 0}
    for c in report.changes:
        rule = _rule(c)
        if rule is None:
            continue
        side, strength, name = rule
        span = c.new if side is Speaker.BEAR else (c.old if c.is_risk_factor else c.new)
        if span is None or per_side[side] >= CHANGE_MAX_PER_SIDE:
            continue
        per_side[side] += 1
        words = f"negative words {c.negative_delta:+d}, uncertainty words {c.uncertainty_delta:+d}"
        text = {
            "new-risk-factor": f"New risk factor since the {old}: “{_short(c.risk_factor or span.quote)}” ({new})",
            "dropped-risk-factor": f"Risk factor in the {old} no longer in the {new}: “{_short(span.quote)}”",
            "risk-grew": f"Risk disclosure grew since the {old} ({words}): “{_short(span.quote)}” ({new})",
            "risk-softened": f"Risk language softened since the {old} ({words}): “{_short(span.quote)}” ({new})",
        }[name]
        signal = f"change:{name}"
        out.append(DraftClaim(
            id=_claim_id(side, signal, span.doc_id, span.start, span.end), speaker=side, text=text,
            theme=_theme(span.quote), strength=strength, signal=signal,
            spans=(SpanRef(span.doc_id, span.start, span.end, span.quote),),
            evidence_date=report.new.filed_at, basis=Basis(BasisKind.CHANGE, name)))
    return out


def _claim_id(side: Speaker, signal: str, doc_id: str, start: int, end: int) -> str:
    return sha256_hex(side.value, ClaimKind.OPENING.value, signal, doc_id, str(start), str(end))[:12]
