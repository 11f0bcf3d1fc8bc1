"""The offline analyst: deterministic bull and bear cases over curated evidence and computed figures.

Not a mock: it is the product's mode without an LLM key. Every claim it makes comes from one row of the rule tables
(``equimind.debate.cues``: a text cue found in a sentence or a tone shift between two filings;
``equimind.debate.figure_rules``: a figure crossing a documented threshold) and cites the sentence or figure it came
from. Sentences are split by ``lexicon.text.split_prose_sentences``; instruction-like sentences
(``lexicon.injection.injection_spans``) are never evidence. Same inputs, same output.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import date

from equimind.changes.model import ChangeReport
from equimind.core.citations import normalise
from equimind.core.documents import sha256_hex
from equimind.core.errors import NotFoundError
from equimind.core.research import Figure, Speaker
from equimind.core.search import EvidenceNode
from equimind.debate import cues as cue_rules
from equimind.debate import figure_rules
from equimind.debate.change_claims import change_claims
from equimind.debate.claim_model import NEUTRAL_VETO, ClaimJudge
from equimind.debate.records import Author, Basis, BasisKind, ClaimKind, DraftClaim, SpanRef, Theme
from equimind.debate.required import ASPECT_THEMES
from equimind.lexicon.calendar import MONTHS
from equimind.lexicon.injection import injection_spans
from equimind.lexicon.lm_lists import Lexicon
from equimind.lexicon.text import clip, split_prose_sentences
from equimind.lexicon.tone import tone

logger = logging.getLogger(__name__)

MAX_PER_CUE = 2
_SHORT = 220


@dataclass(frozen=True)
class SentenceSignal:
    """One cue found in one sentence: the unit the analyst and the LLM-claim weighting share."""

    doc_id: str
    start: int
    end: int
    side: Speaker
    theme: Theme
    strength: float
    cue: str


@dataclass(frozen=True)
class InjectionHit:
    doc_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Analysis:
    """The analyst's output for one set of evidence."""

    bull: tuple[DraftClaim, ...]
    bear: tuple[DraftClaim, ...]
    sentence_signals: tuple[SentenceSignal, ...]
    injections: tuple[InjectionHit, ...]
    notes: tuple[str, ...]
    conflicts: tuple[str, ...] = ()  # sentences read on both sides, and how each was resolved

    def case(self, speaker: Speaker) -> tuple[DraftClaim, ...]:
        return self.bull if speaker is Speaker.BULL else self.bear


def shorten(text: str, limit: int = _SHORT) -> str:
    return clip(text, limit)


def claim_id(speaker: Speaker, kind: ClaimKind, signal: str, keys: Sequence[str]) -> str:
    return sha256_hex(speaker.value, kind.value, signal, *keys)[:12]


def _is_risk_section(section: str | None) -> bool:
    return section is not None and "risk" in section.lower()


def _describe(node: EvidenceNode) -> str:
    when = node.filed_at.isoformat() if node.filed_at else "undated"
    where = f", {node.section}" if node.section else ""
    return f"{node.form} filed {when}{where}"


def order_nodes(nodes: Sequence[EvidenceNode]) -> list[EvidenceNode]:
    """Newest filing first, then document and position (a total order, so output never depends on input order)."""
    return sorted(nodes, key=lambda n: (-(n.filed_at.toordinal() if n.filed_at else 0), n.doc_id, n.start, n.end))


class OfflineAnalyst:
    """Builds bull and bear claims from text cues, tone shifts and figure rules; rebuts on shared themes."""

    def __init__(self, lexicon: Lexicon | None, *, max_claims_per_side: int = 8,
                 prior_normalised: Callable[[str], str] | None = None,
                 claim_judge: ClaimJudge | None = None) -> None:
        if max_claims_per_side < 1:
            raise ValueError("max_claims_per_side must be at least 1")
        self.lexicon = lexicon
        self.max_claims_per_side = max_claims_per_side
        self._prior_normalised = prior_normalised
        self.claim_judge = claim_judge

    # ---- openings -------------------------------------------------------------------------------------------

    def analyse(self, evidence: Sequence[EvidenceNode], figures: Sequence[Figure],
                changes: ChangeReport | None = None, *, searched: frozenset[str] = frozenset(),
                searched_aspects: frozenset[str] = frozenset()) -> Analysis:
        """``searched``: passages (ids) the research's aspect search added for aspects nothing else argued. They
        were chosen for one topic (litigation, supply), so the tone shift does not read them (their words would
        tilt a filing's tone), and they give at most one claim for each aspect searched (``searched_aspects``) and
        none for another (``one_per_searched_aspect``): the search is there to cover an aspect, not to add
        weight."""
        nodes = order_nodes(evidence)
        injections = self._injections(nodes)
        flagged = {(h.doc_id, h.start, h.end) for h in injections}
        found = self._sentence_signals(nodes, flagged)
        text_claims = self._cue_claims(nodes, found)
        notes: list[str] = []
        if self.lexicon is None:
            notes.append("tone signals off: no Loughran-McDonald lexicon was loaded")
            tone_claims: list[DraftClaim] = []
        else:
            tone_claims = self._tone_claims([n for n in nodes if n.id not in searched], flagged)
        text_claims, vetoed = self._neutral_veto(text_claims)
        text_claims, conflicts = one_side_per_sentence(merge_periods(text_claims))
        text_claims = one_per_searched_aspect(text_claims, [n for n in nodes if n.id in searched], searched_aspects)
        conflicts = vetoed + conflicts
        # a tone claim is the document's shift, its sentence an example: not a reading of that sentence
        claims = text_claims + tone_claims + merge_figure_lines(figure_claims(figures)) + change_claims(changes)
        bull = select_case([c for c in claims if c.speaker is Speaker.BULL], self.max_claims_per_side)
        bear = select_case([c for c in claims if c.speaker is Speaker.BEAR], self.max_claims_per_side)
        return Analysis(bull=bull, bear=bear, sentence_signals=tuple(s for s, _ in found),
                        injections=tuple(injections), notes=tuple(notes), conflicts=tuple(conflicts))

    def _neutral_veto(self, claims: list[DraftClaim]) -> tuple[list[DraftClaim], list[str]]:
        """Cue claims whose sentence the claim classifier reads as neutral (p >= NEUTRAL_VETO) are set aside, with
        one line saying how many and which (ADR 0019). No classifier: every cue claim stands."""
        if self.claim_judge is None or not claims:
            return claims, []
        p = self.claim_judge.neutral([c.spans[0].quote for c in claims])
        kept = [c for c, q in zip(claims, p, strict=True) if q < NEUTRAL_VETO]
        out = [(c, q) for c, q in zip(claims, p, strict=True) if q >= NEUTRAL_VETO]
        if not out:
            return kept, []
        out.sort(key=lambda cq: (-cq[1], cq[0].id))
        eg = "; ".join(f"“{shorten(c.spans[0].quote, 70)}” ({c.signal}, p {q:.2f})" for c, q in out[:3])
        return kept, [f"Set aside {len(out)} cue sentence(s) the claim classifier reads as neutral text "
                      f"(p(neutral) ≥ {NEUTRAL_VETO}): {eg}."]

    def _injections(self, nodes: Sequence[EvidenceNode]) -> list[InjectionHit]:
        hits: list[InjectionHit] = []
        for node in nodes:
            for s, e in injection_spans(node.text):
                hits.append(InjectionHit(node.doc_id, node.start + s, node.start + e, node.text[s:e]))
        return hits

    def _sentence_signals(self, nodes: Sequence[EvidenceNode],
                          flagged: set[tuple[str, int, int]]) -> list[tuple[SentenceSignal, EvidenceNode]]:
        """Per sentence and side, the strongest unnegated cue (hedged sentences weigh HEDGE_FACTOR)."""
        out: list[tuple[SentenceSignal, EvidenceNode]] = []
        seen: set[tuple[str, int, int]] = set()
        for node in nodes:
            for s, e in split_prose_sentences(node.text):
                key = (node.doc_id, node.start + s, node.start + e)
                if key in flagged or key in seen:
                    continue
                seen.add(key)
                sentence = node.text[s:e]
                if len(sentence.split()) < cue_rules.MIN_CLAIM_WORDS:
                    continue
                cues, factor = cue_rules.sentence_cues(sentence)
                risk = _is_risk_section(node.section)
                for cue in cues:
                    if risk and cue.side is Speaker.BULL and not cue_rules.BULL_CUES_IN_RISK_FACTORS:
                        continue
                    out.append((SentenceSignal(node.doc_id, key[1], key[2], cue.side, cue.theme,
                                               round(cue.strength * factor, 4), cue.name), node))
        return out

    def _cue_claims(self, nodes: Sequence[EvidenceNode],
                    found: Sequence[tuple[SentenceSignal, EvidenceNode]]) -> list[DraftClaim]:
        priors = self._prior_docs(nodes)
        claims: list[DraftClaim] = []
        for s, node in found:
            cue = next(c for c in cue_rules.TEXT_CUES if c.name == s.cue)
            quote = node.text[s.start - node.start:s.end - node.start]
            strength, note = s.strength, ""
            if s.side is Speaker.BEAR and _is_risk_section(node.section):
                prior = priors.get(node.doc_id)
                if prior is not None and self._absent_from(prior[0], quote):
                    strength = min(1.0, strength + cue_rules.NEW_RISK_BONUS)
                    note = f" — new: not in the {prior[1]}"
            text = f"{cue.label}: “{shorten(quote)}” ({_describe(node)}){note}"
            signal = f"cue:{cue.name}" + (":new" if note else "")
            claims.append(DraftClaim(
                id=claim_id(s.side, ClaimKind.OPENING, signal, (s.doc_id, str(s.start), str(s.end))),
                speaker=s.side, text=text, theme=s.theme, strength=strength, signal=signal,
                spans=(SpanRef(s.doc_id, s.start, s.end, quote),), evidence_date=node.filed_at,
                basis=Basis(BasisKind.CUE, cue.name)))
        return claims

    def _prior_docs(self, nodes: Sequence[EvidenceNode]) -> dict[str, tuple[str, str]]:
        """doc_id -> (id, description) of the next-older document of the same ticker among the evidence."""
        docs: dict[str, EvidenceNode] = {}
        for n in nodes:
            docs.setdefault(n.doc_id, n)
        dated = sorted((n for n in docs.values() if n.filed_at), key=lambda n: (n.filed_at, n.doc_id))
        out: dict[str, tuple[str, str]] = {}
        for i, n in enumerate(dated):
            older = [o for o in dated[:i] if o.ticker == n.ticker and o.filed_at and n.filed_at
                     and o.filed_at < n.filed_at]
            if older:
                out[n.doc_id] = (older[-1].doc_id, f"{older[-1].form} filed {older[-1].filed_at}")
        return out

    def _absent_from(self, prior_doc_id: str, quote: str) -> bool:
        """True when neither the opening nor the closing NEW_RISK_PROBE characters of the (normalised) sentence
        occur in the prior filing, so a page break inside a sentence does not make an old risk look new."""
        if self._prior_normalised is None:
            return False
        try:
            prior = self._prior_normalised(prior_doc_id)
        except NotFoundError:
            logger.info("prior document %s not found; new-risk check skipped", prior_doc_id)
            return False
        q = normalise(quote).text
        probe = cue_rules.NEW_RISK_PROBE
        return q[:probe] not in prior and q[-probe:] not in prior

    def _tone_claims(self, nodes: Sequence[EvidenceNode], flagged: set[tuple[str, int, int]]) -> list[DraftClaim]:
        """Tone shift (LM net tone, risk-factor sections excluded) between the two newest filings of a ticker."""
        assert self.lexicon is not None
        per_doc: dict[str, list[_ToneRow]] = defaultdict(list)
        for node in nodes:
            if _is_risk_section(node.section) or node.filed_at is None:
                continue
            for s, e in split_prose_sentences(node.text):
                if (node.doc_id, node.start + s, node.start + e) not in flagged:
                    t = tone(node.text[s:e], self.lexicon)
                    per_doc[node.doc_id].append(_ToneRow(node, s, e, t.positive, t.negative))
        usable = [d for d in per_doc if sum(r.pos + r.neg for r in per_doc[d]) >= cue_rules.TONE_MIN_POLAR_WORDS]
        usable.sort(key=lambda d: (per_doc[d][0].node.filed_at or date.min, d), reverse=True)
        if len(usable) < 2 or per_doc[usable[0]][0].node.ticker != per_doc[usable[1]][0].node.ticker:
            return []
        new_rows, old_rows = per_doc[usable[0]], per_doc[usable[1]]
        net_new, net_old = _net(new_rows), _net(old_rows)
        if abs(net_new - net_old) < cue_rules.TONE_DELTA:
            return []
        side = Speaker.BULL if net_new > net_old else Speaker.BEAR
        sign = 1 if side is Speaker.BULL else -1
        row = max(new_rows, key=lambda r: (sign * (r.pos - r.neg), -(r.node.start + r.s)))
        if sign * (row.pos - row.neg) <= 0:
            return []
        node, old = row.node, old_rows[0].node
        quote = node.text[row.s:row.e]
        start = node.start + row.s
        word = "improved" if side is Speaker.BULL else "deteriorated"
        text = (f"Management tone {word}: Loughran-McDonald net tone {net_old:+.2f} in the {old.form} filed "
                f"{old.filed_at} → {net_new:+.2f} in the {node.form} filed {node.filed_at}; e.g. "
                f"“{shorten(quote, 160)}”")
        shift = "improving" if side is Speaker.BULL else "deteriorating"
        signal = f"tone:{shift}"
        return [DraftClaim(id=claim_id(side, ClaimKind.OPENING, signal, (node.doc_id, str(start))), speaker=side,
                           text=text, theme=Theme.TONE, strength=cue_rules.TONE_STRENGTH, signal=signal,
                           spans=(SpanRef(node.doc_id, start, start + len(quote), quote),),
                           evidence_date=node.filed_at, basis=Basis(BasisKind.TONE, shift))]

    # ---- rebuttals ------------------------------------------------------------------------------------------

    def rebut(self, speaker: Speaker, own: Sequence[DraftClaim], opponent: Sequence[DraftClaim],
              already_rebutted: set[str]) -> DraftClaim | None:
        """Answer the opponent's strongest not-yet-rebutted opening claim with this side's strongest claim on the
        same theme; None when this side has no counter-evidence on any open theme (it concedes them)."""
        targets = sorted((c for c in opponent if c.kind is ClaimKind.OPENING and c.id not in already_rebutted),
                         key=rank_key)
        mine = [c for c in own if c.kind is ClaimKind.OPENING]
        for target in targets:
            counters = sorted((c for c in mine if c.theme is target.theme), key=rank_key)
            if not counters:
                continue
            best = counters[0]
            signal = f"rebuttal:{best.signal}"
            return replace(best, id=claim_id(speaker, ClaimKind.REBUTTAL, signal, (target.id, best.id)),
                           text=f"Rebuts “{shorten(target.text, 120)}” — {best.text}", signal=signal,
                           kind=ClaimKind.REBUTTAL, rebuts=target.id, author=Author.ANALYST)
        return None


# ---- one fact, one claim -----------------------------------------------------------------------------------

_PERIOD_WORDS = re.compile(
    r"\b(?:the\s+)?(?:(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:quarter|half)|"
    r"(?:(?:first|last)\s+)?(?:three|six|nine|twelve)\s+months(?:\s+ended)?|q[1-4]|year[- ]to[- ]date|"
    r"(?:" + "|".join(MONTHS) + r"))\b", re.IGNORECASE)
_NUMBERS = re.compile(r"[$€£]?\d[\d,.]*\s*(?:%|percent\b|(?:million|billion|thousand)\b)?")
_NON_WORD = re.compile(r"[^a-z#§]+")


def period_masked(sentence: str) -> str:
    """The sentence with its periods ("second quarter", "six months ended", month names) and numbers masked: two
    sentences that state one line for different periods mask to the same text."""
    t = _NUMBERS.sub(" # ", _PERIOD_WORDS.sub(" § ", sentence.lower()))
    return " ".join(_NON_WORD.sub(" ", t).split())


_SAME_LINE_PREFIX = 8  # words two masked sentences share from their start, a period mention among them (stated)
_HEADING = re.compile(r"^[^.;:–—\n]{1,60}?\s[–—:]\s+(?=[A-Z])")  # "Direct Customers – For the second quarter …"


def _line_tokens(sentence: str) -> list[str]:
    return period_masked(_HEADING.sub("", sentence, count=1)).split()


def same_line(a: str, b: str) -> bool:
    """Two sentences state one line for different periods: equal once a glued heading is dropped and periods and
    numbers are masked, or opening with the same _SAME_LINE_PREFIX words, a period mention among them ("Automotive
    sales revenue decreased $2.74 billion, or 15%, in the three months …" / "… $6.28 billion, or 18%, in the six
    months …", each then giving its own reasons). "Cost of services … increased" and "Services … increased" differ
    from their first word: two lines."""
    ta, tb = _line_tokens(a), _line_tokens(b)
    if ta == tb:
        return bool(ta)
    n = 0
    for x, y in zip(ta, tb, strict=False):
        if x != y:
            break
        n += 1
    return n >= _SAME_LINE_PREFIX and "§" in ta[:n]


def merge_periods(claims: Sequence[DraftClaim]) -> list[DraftClaim]:
    """One claim per line: claims of the same cue and side over one document whose sentences state the same line
    for different periods (``same_line``) become one claim citing every sentence, the strongest (then earliest)
    first."""
    out: list[DraftClaim] = []
    for c in sorted(claims, key=rank_key):
        if c.basis is None or c.basis.kind is not BasisKind.CUE or not c.spans:
            out.append(c)
            continue
        for i, kept in enumerate(out):
            same = (kept.basis == c.basis and kept.speaker is c.speaker and kept.spans  # c's basis is a cue
                    and kept.spans[0].doc_id == c.spans[0].doc_id
                    and same_line(kept.spans[0].quote, c.spans[0].quote))
            if same:
                out[i] = replace(kept, spans=(*kept.spans, *c.spans),
                                 text=f"{kept.text}; for another period: “{shorten(c.spans[0].quote, 120)}”")
                break
        else:
            out.append(c)
    return out


def one_side_per_sentence(claims: Sequence[DraftClaim]) -> tuple[list[DraftClaim], list[str]]:
    """A quoted sentence argues one side once. Per sentence and side the strongest claim stays (the same sentence
    again on its side is the same fact); a sentence that cues fire on for both sides is ambiguous evidence and
    argues neither (the cue strengths are not evidence of which reading is right: "concentration of revenue … rose
    to 46 %" fires revenue growth more strongly than concentration). Returns the claims kept and a line per
    sentence set aside, for the judge's reasoning."""
    by_span: dict[tuple[str, int, int], list[DraftClaim]] = defaultdict(list)
    for c in claims:
        for sp in c.spans:
            by_span[(sp.doc_id, sp.start, sp.end)].append(c)
    drop: set[str] = set()
    notes: list[str] = []
    for key, group in sorted(by_span.items()):
        best = {side: min((c for c in group if c.speaker is side), key=rank_key, default=None) for side in Speaker}
        for c in group:
            if c is not best[c.speaker]:
                drop.add(c.id)
        bull, bear = best[Speaker.BULL], best[Speaker.BEAR]
        if bull is not None and bear is not None:
            drop.update((bull.id, bear.id))
            notes.append(f"Set aside as ambiguous: “{shorten(bull.spans[0].quote, 90)}” ({key[0][:12]}:{key[1]}) "
                         f"reads as bull ({bull.signal}) and as bear ({bear.signal}); it argues neither side.")
    return [c for c in claims if c.id not in drop], notes


@dataclass(frozen=True)
class _ToneRow:
    node: EvidenceNode
    s: int
    e: int
    pos: int
    neg: int


def rank_key(c: DraftClaim) -> tuple[float, int, int, str]:
    """Strongest first; ties to the newer evidence, then the earlier passage, then the id (a total order)."""
    return (-c.strength, -(c.evidence_date or date.min).toordinal(), c.spans[0].start if c.spans else -1, c.id)


def select_case(claims: Sequence[DraftClaim], max_text_claims: int) -> tuple[DraftClaim, ...]:
    """One side's opening case as the judge reads it: figure and tone claims (few by construction) all kept; claims
    resting on text cues (or on nothing) strongest first, at most MAX_PER_CUE per rule row and ``max_text_claims``
    in all. Ties go to the newer filing, then to the earlier passage (headlines precede detail). The same cap applies
    to offline and LLM claims, so no speaker adds weight by volume."""
    ranked = sorted(claims, key=rank_key)
    per_basis: dict[Basis | None, int] = defaultdict(int)
    out: list[DraftClaim] = []
    text_count = 0
    for c in ranked:
        if c.basis is not None and c.basis.kind in (BasisKind.FIGURE, BasisKind.TONE):
            out.append(c)
            continue
        if text_count >= max_text_claims or (c.basis and per_basis[c.basis] >= MAX_PER_CUE):
            continue
        per_basis[c.basis] += 1
        text_count += 1
        out.append(c)
    return tuple(out)


def _net(rows: Sequence[_ToneRow]) -> float:
    pos = sum(r.pos for r in rows)
    neg = sum(r.neg for r in rows)
    return (pos - neg) / (pos + neg) if pos + neg else 0.0


# ---- figures ------------------------------------------------------------------------------------------------


def _latest_by_key(figures: Sequence[Figure]) -> dict[str, Figure]:
    """Rule key -> the latest figure for it (ties by id); figures the table does not know are left out."""
    out: dict[str, Figure] = {}
    for f in sorted(figures, key=lambda f: ((f.as_of or date.min).toordinal(), f.id)):
        key = figure_rules.canonical_figure_key(f)
        if key is not None:
            out[key] = f
    return out


def figure_claims(figures: Sequence[Figure]) -> list[DraftClaim]:
    """Apply FIGURE_RULES: first matching row per (figure, relative_to, side). Unknown names are ignored."""
    by_name = _latest_by_key(figures)
    fired: set[tuple[str, str | None, Speaker]] = set()
    claims: list[DraftClaim] = []
    for rule in figure_rules.FIGURE_RULES:
        group = (rule.figure, rule.relative_to, rule.side)
        fig = by_name.get(rule.figure)
        if group in fired or fig is None:
            continue
        value = figure_rules.figure_value(fig, rule.kind)
        if value is None:
            continue
        ids: tuple[str, ...] = (fig.id,)
        ref_value: float | None = None
        x = value
        if rule.relative_to is not None:
            ref = by_name.get(rule.relative_to)
            ref_value = figure_rules.figure_value(ref, rule.kind) if ref is not None else None
            if ref is None or ref_value is None or ref_value == 0:
                continue
            x = value / ref_value - 1.0
            ids = (fig.id, ref.id)
        if not figure_rules.rule_fires(rule, x):
            continue
        fired.add(group)
        text = rule.template.format(value=value, ref=ref_value if ref_value is not None else 0.0, x=x,
                                    change=float(fig.value or 0.0), old=_num(fig.inputs.get("old")),
                                    new=_num(fig.inputs.get("new")))
        name = rule.figure + (f"/{rule.relative_to}" if rule.relative_to else "")
        signal = f"figure:{name}"
        dates = [f.as_of for f in figures if f.id in ids and f.as_of is not None]
        claims.append(DraftClaim(id=claim_id(rule.side, ClaimKind.OPENING, signal, ids), speaker=rule.side,
                                 text=f"{text} (as of {fig.as_of or 'unknown date'})", theme=rule.theme,
                                 strength=rule.strength, signal=signal, figure_ids=ids,
                                 evidence_date=max(dates) if dates else None, basis=Basis(BasisKind.FIGURE, name)))
    return claims


# Rule figures that state one line for different periods: argued as one claim citing both (issue 32).
FIGURE_LINES: dict[str, str] = {"revenue_growth_yoy": "revenue growth", "revenue_growth_ttm": "revenue growth"}


def _join_figure_texts(a: str, b: str) -> str:
    """"X grew 5% (as of D)" + "Y grew 7% (as of D)" -> "X grew 5%; y grew 7% (as of D)"."""
    head_a, sep, when = a.rpartition(" (as of ")
    head_b = b.rpartition(" (as of ")[0] or b
    if not sep:
        return f"{a}; {b}"
    return f"{head_a}; {head_b[:1].lower()}{head_b[1:]} (as of {when}"


def merge_figure_lines(claims: Sequence[DraftClaim]) -> list[DraftClaim]:
    """Claims of one side on figures of the same line (FIGURE_LINES) become one claim: the strongest's text, the
    others' appended, every figure cited, the strongest's strength (one fact does not weigh twice)."""
    out: list[DraftClaim] = []
    for c in sorted(claims, key=rank_key):
        line = FIGURE_LINES.get(c.basis.name) if c.basis is not None and c.basis.kind is BasisKind.FIGURE else None
        host = next((i for i, k in enumerate(out) if line is not None and k.speaker is c.speaker
                     and k.basis is not None and FIGURE_LINES.get(k.basis.name) == line), None)
        if host is None:
            out.append(c)
            continue
        k = out[host]
        out[host] = replace(k, text=_join_figure_texts(k.text, c.text),
                            figure_ids=tuple(dict.fromkeys((*k.figure_ids, *c.figure_ids))),
                            evidence_date=max(filter(None, (k.evidence_date, c.evidence_date)), default=None))
    return out


def _num(v: object) -> float:
    return float(v) if isinstance(v, int | float) else 0.0


def figure_strength(figures: Sequence[Figure], figure_ids: Sequence[str],
                    side: Speaker) -> tuple[float, Theme | None, Basis | None]:
    """(strength, theme, basis) of the strongest rule firing on ``side`` for the cited figures; (0, None, None)."""
    cited = [f for f in figures if f.id in set(figure_ids)]
    best: tuple[float, Theme | None, Basis | None] = (0.0, None, None)
    for c in figure_claims(cited):
        if c.speaker is side and c.strength > best[0]:
            best = (c.strength, c.theme, c.basis)
    return best


def one_per_searched_aspect(claims: list[DraftClaim], searched: Sequence[EvidenceNode],
                            aspects: Collection[str]) -> list[DraftClaim]:
    """Of the claims citing a passage the aspect search added, the strongest of each searched aspect
    (``ASPECT_THEMES``; ``aspects``) stays; one on another aspect goes (the passages were added to cover the
    searched aspects). Claims on other passages are untouched."""
    if not searched:
        return claims
    spans = [(n.doc_id, n.start, n.end) for n in searched]
    aspect_of = {theme: aspect for aspect, themes in ASPECT_THEMES for theme in themes}

    def from_search(c: DraftClaim) -> bool:
        return any(s.doc_id == d and a <= s.start and s.end <= b for s in c.spans for d, a, b in spans)

    best: dict[str, DraftClaim] = {}
    for c in claims:
        aspect = aspect_of.get(c.theme.value, c.theme.value)
        if from_search(c) and aspect in aspects and (
                aspect not in best or (c.strength, c.id) > (best[aspect].strength, best[aspect].id)):
            best[aspect] = c
    keep = {id(c) for c in best.values()}
    return [c for c in claims if not from_search(c) or id(c) in keep]

