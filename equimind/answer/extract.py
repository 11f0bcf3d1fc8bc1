"""The extractive answerer: the sentence(s) or table row(s) of the retrieved passages that best answer the ask.

Score of a unit (``units.Unit``) = the idf-weighted share of the ask's focus stems it holds (its *coverage*; idf over
the units of this answer's passages: log((N + 1) / (df + 0.5)), so a word every passage has counts little), plus
``SIMILARITY_WEIGHT`` times the cosine of the question and the unit under the store's embedding model (its meaning:
``answer.similarity``; an answer written in other words than the question), plus ``PERIOD_BONUS`` when it names the
asked fiscal year, minus ``RANK_PENALTY`` per retrieval rank. A unit qualifies when it holds at least
``MIN_COVERAGE`` of the term weight, or when its cosine is at least ``MIN_SIMILARITY`` and it holds at least
``MIN_COVERAGE_WITH_MEANING`` of the weight (meaning alone never qualifies: some word of the ask must be there). The
answer is the best qualifying unit that holds a value of the asked type (an amount for how much, a count for how
many, a date for when, a name for which/where: ``values``). When qualifying units exist but none holds such a value
the answer is "not found" — never a near miss. A unit with instruction-like text
(``lexicon.injection.is_instruction``) is never an answer. A table row is quoted as the row plus its header row (the
column header names the period) and the value is read from the column of the asked year. Without an embedding model
the score is the terms' alone, and the answer says so. Deterministic: scores, then document order.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from equimind.answer.record import AnswerSentence, Method, StatedValue
from equimind.answer.rows import is_contents_row, names_metric, row_values
from equimind.answer.units import Unit, UnitKind, cells, unit_quotes
from equimind.answer.values import (
    in_asked_scale,
    is_change,
    needs_value,
    scale_word,
    table_scale,
    values_of,
)
from equimind.core.documents import sha256_hex
from equimind.core.tunables import Tunable, register, tuned
from equimind.lexicon.amounts import SCALES
from equimind.lexicon.calendar import MONTHS
from equimind.lexicon.concepts import METRIC_VERBS
from equimind.lexicon.injection import is_instruction
from equimind.lexicon.text import TOKEN
from equimind.lexicon.vocabulary import Term, content_terms, either_pairs
from equimind.query.analysis import FUNCTION_WORDS, stem_sets
from equimind.query.kinds import AnswerKind
from equimind.query.periods import PeriodKind, find_periods
from equimind.query.question import GROWTH_WORDS, QuestionAnalysis

MIN_COVERAGE = register(Tunable("answer.min_term_coverage", 0.5, (0.34, 0.5, 0.67), "term share to qualify")).name
MIN_SIMILARITY = 0.5  # ... or this question-unit cosine (``answer.similarity``) with MIN_COVERAGE_WITH_MEANING
MIN_COVERAGE_WITH_MEANING = 0.2
SIMILARITY_WEIGHT = 1.0  # the cosine adds to the score as coverage does: two signals on one 0-1 scale
PREFIX = 5
TABLE_SCALE_NOTE = re.compile(r"\(?\s*in\s+(?:thousands|millions|billions)[^)]*\)?", re.I)
PERIOD_BONUS = 0.15
HEAD_NAME_BONUS = 0.3  # a name written right before the ask's head noun ("the Blackwell architecture")
LABEL_BONUS = 0.1  # times the share of the ask's terms in a table row's label (its first cell)
METRIC_ROW_BONUS = 0.5  # a row whose label is the asked metric's line item (``names_metric``)
COUNTED_BONUS = 0.2  # a count followed by the counted word of the ask
CUE_OMITTED_SHARE = 0.6  # coverage of a unit that omits the ask's answer-type word ("city" in "which city"): the
# share of the other terms it holds, times this (it qualifies holding them all; a unit with the word ranks above)
RANK_PENALTY = 0.01
SECOND_SENTENCE_SHARE = 0.9  # a second unit is added (text / name / yes-no asks) when it scores this close
MAX_SENTENCES = 2


@dataclass(frozen=True)
class Scored:
    unit: Unit
    coverage: float
    score: float
    values: tuple[StatedValue, ...]
    similarity: float | None = None
    label_share: float = 0.0  # a row: the share of the ask's term weight its label (first cell) holds

    def qualifies(self) -> bool:
        """Enough of the question's terms, or (with the embedding model) a meaning close to the question's and
        some of its terms."""
        if self.coverage >= tuned(MIN_COVERAGE):
            return True
        return (self.similarity is not None and self.similarity >= MIN_SIMILARITY
                and self.coverage >= MIN_COVERAGE_WITH_MEANING)


@dataclass(frozen=True)
class Extraction:
    sentences: tuple[AnswerSentence, ...]
    qualifying: int  # units holding enough of the question's terms
    with_value: int  # ... of which hold a value of the asked type
    skipped_instructions: int
    best_coverage: float

    def to_log(self) -> dict[str, Any]:
        return {"qualifying_units": self.qualifying, "with_value": self.with_value,
                "skipped_instruction_like": self.skipped_instructions, "best_coverage": round(self.best_coverage, 3)}


def holds(term: str, stems: frozenset[str]) -> bool:
    """The unit holds the term's stem, or a word sharing a prefix of ``PREFIX`` characters with it whose one stem
    extends the other ("employ" / "employe", "repurchas" / "repurchase"): the stemmer's misses on word families."""
    if term in stems:
        return True
    if len(term) < PREFIX:
        return False
    if any(term[:n] in stems for n in range(PREFIX, len(term))):  # a stem of >= PREFIX characters starts the term
        return True
    ordered = _sorted_stems(stems)  # a stem the term starts (it is >= PREFIX long, as the term is): bisect
    i = bisect.bisect_left(ordered, term)
    return i < len(ordered) and ordered[i].startswith(term)


@functools.lru_cache(maxsize=4096)
def _sorted_stems(stems: frozenset[str]) -> tuple[str, ...]:
    # A unit's stem set is asked about every term of the question (a frozenset keeps its hash: lookups are cheap).
    return tuple(sorted(stems))


def holds_term(term: Term, stems: frozenset[str]) -> bool:
    """The unit holds one of the term's alternatives (every stem of it: ``vocabulary``)."""
    return any(all(holds(s, stems) for s in alt) for alt in term.alternatives)


def _idf(sets: Sequence[frozenset[str]], terms: Sequence[Term]) -> dict[Term, float]:
    n = len(sets)
    return {t: math.log((n + 1) / (sum(1 for u in sets if holds_term(t, u)) + 0.5)) for t in terms}


def _asked_year(q: QuestionAnalysis) -> int | None:
    for p in q.periods:
        if p.fiscal_year:
            return p.fiscal_year
        if p.kind in (PeriodKind.MONTH_QUARTER, PeriodKind.DAY, PeriodKind.MONTH) and p.year:
            return p.year
    return None


DocPeriods = dict[str, tuple[int | None, str | None]]  # doc id -> (fiscal year, fiscal period "FY" / "Q2" ...)


def period_ok(q: QuestionAnalysis, s: Scored, docs: DocPeriods) -> bool:
    """A number answers the asked period only if its unit names that year (a row: the column it is read from; a
    year named after "compared to" is the comparison's base, not the number's period), or names no year and comes
    from that fiscal year's own report (a 10-Q's "revenue was $41.1 billion" is not fiscal 2025's); a sentence about
    a quarter or the first months of a year never answers a full year; an event's month ("announced in May 2024")
    is answered by a unit that dates it in that month or names its year: otherwise it is a near miss, and a near
    miss is "not found"."""
    year = _asked_year(q)
    if year is not None and q.value_kind is AnswerKind.NAME:  # "which acquisitions ... in fiscal 2025": a sentence
        named = unit_years(s.unit.span.text)  # dating its event in other years only is about another period (a
        return not named or bool(named & {year - 1, year})  # fiscal year spans at most two calendar years)
    if year is None or q.value_kind not in (AnswerKind.AMOUNT, AnswerKind.COUNT, AnswerKind.PERCENT):
        return True
    text = (s.values[0].period or "") if s.unit.kind is UnitKind.ROW and s.values else s.unit.span.text
    own = COMPARED_WITH.split(text, maxsplit=1)[0]  # "... grew 62% compared to fiscal 2025": 2025 is the base
    wanted = next((p for p in q.periods if p.fiscal_year == year), None)
    if wanted is not None and wanted.kind is PeriodKind.FISCAL_YEAR and s.unit.kind is UnitKind.SENTENCE and any(
            p.kind in PART_YEAR for p in find_periods(own)):
        return False  # "$3.89 billion for the six months ended June 30, 2025 and 2024" is no full year's figure
    month = next((p for p in q.periods if p.kind is PeriodKind.MONTH and p.year == year), None)
    if month is not None and wanted is None:  # an event's month: the unit dates it in that month, or names its year
        return names_month(own, month.month or 0, year) or year in unit_years(own)
    named = unit_years(own)
    if named:
        return year in named
    fy, fp = docs.get(s.unit.doc_id, (None, None))
    if fy != year:
        return False
    if wanted is not None and wanted.kind is PeriodKind.FISCAL_YEAR:
        return fp == "FY"
    if wanted is not None and wanted.kind is PeriodKind.QUARTER:
        return fp == f"Q{wanted.quarter}"
    return True


PART_YEAR = (PeriodKind.YEAR_TO_DATE, PeriodKind.QUARTER, PeriodKind.MONTH_QUARTER)
COMPARED_WITH = re.compile(r"\b(?:(?:as )?compared (?:to|with)|versus|relative to|over the same period)\b", re.I)


def names_month(text: str, month: int, year: int) -> bool:
    """``text`` dates something in ``month`` of ``year`` ("In May 2024", "On August 26, 2025")."""
    name = MONTHS[month - 1] if 1 <= month <= 12 else None  # no month outside the calendar is named
    return name is not None and re.search(rf"(?i)\b{name[:3]}[a-z]*\.?\s+(?:\d{{1,2}},?\s+)?{year}\b", text) is not None


def unit_years(text: str) -> set[int]:
    """The fiscal / calendar years a span names as periods (a year inside a full date such as "June 13, 2025" is a
    day, not a period; a month names its year: "In September 2023")."""
    out: set[int] = set()
    for p in find_periods(text):
        year = p.fiscal_year if p.fiscal_year is not None else (p.year if p.kind is PeriodKind.MONTH else None)
        if year is not None:
            out.add(year)
    return out


def _sentence_values(q: QuestionAnalysis, text: str, not_names: frozenset[str], level: bool
                     ) -> tuple[StatedValue, ...]:
    """The values of the asked type a sentence states, less a name that is no name and a change when a level is
    asked. (A count need not be written before the ask's own word: "people" asked, "employees" written; a count
    that is, ranks first: ``COUNTED_BONUS``.)"""
    return tuple(v for v in values_of(q.value_kind, text, question_words=q.question.split())
                 if v.text not in not_names and not (level and is_change(text, v)))


def _counted(q: QuestionAnalysis, s: Scored, stem: Any) -> bool:
    """A count written right before a word of the ask ("36,000 employees" for "how many employees")."""
    if q.value_kind is not AnswerKind.COUNT:
        return False
    text = s.unit.span.text
    for v in s.values:
        i = text.find(v.text)
        after = TOKEN.findall(text[i + len(v.text):i + len(v.text) + 40].lower())[:2] if i >= 0 else []
        if after and any(holds(t, frozenset(stem.stemWords(after))) for t in q.terms):
            return True
    return False


def _names_head(q: QuestionAnalysis, text: str) -> bool:
    if not q.head:
        return False
    asked = {w.lower().strip("'s?") for w in q.question.split()}
    pattern = rf"\b([A-Z][\w-]+)\s+{re.escape(q.head[:PREFIX])}"
    return any(m.group(1).lower() not in asked for m in re.finditer(pattern, text, re.I) if m.group(1)[0].isupper())


def score_units(q: QuestionAnalysis, units: Sequence[Unit], stem: Any,
                similarity: Sequence[float] | None = None,
                groups: Sequence[Sequence[str]] = (), not_names: frozenset[str] = frozenset()) -> list[Scored]:
    """Each unit's coverage and score (module docstring); ``similarity``: the question-unit cosine per unit
    (``answer.similarity``), None to score by terms alone; ``groups``: more interchangeable phrases (the acronyms
    the filings define: ``answer.acronyms``); ``not_names``: capitalised words that are not names (short names of
    common nouns: "CDN" for "content delivery network")."""
    phrases = (q.metric.phrase, *q.metric.metric.phrases) if q.metric is not None else ()
    amount = q.value_kind is AnswerKind.AMOUNT or "how much" in q.ask.ask.lower()  # "how much ... and how fast"
    terms = content_terms(q.terms, stem, amount, phrases, sorted(METRIC_VERBS),
                          groups, either_pairs(q.ask.ask, stem))
    sets = stem_sets([u.context for u in units], stem)
    idf = _idf(sets, terms)
    total = sum(idf.values()) or 1.0
    cue_words = [*q.cue_words, *([q.asker_verb] if q.asker_verb else [])]  # both may be omitted, at a discount
    cue = {str(x) for x in stem.stemWords(cue_words)} if cue_words else set()
    optional = [t for t in terms if set(t.stems) <= cue]
    required = (total - sum(idf[t] for t in optional)) if len(optional) < len(terms) else 0.0
    year = _asked_year(q)
    # a level asked ("what were X revenues"), not a change: an amount written after "increased" is not its value
    level = q.value_kind is AnswerKind.AMOUNT and not (GROWTH_WORDS & set(TOKEN.findall(q.ask.ask.lower())))
    out: list[Scored] = []
    sims = list(similarity) if similarity is not None else [None] * len(units)
    for u, s, sim in zip(units, sets, sims, strict=True):
        held = [t for t in terms if holds_term(t, s)]
        coverage = sum(idf[t] for t in held) / total if terms else 0.0
        if optional and required > 0:  # a unit may omit the word naming the answer's type, at a discount
            coverage = max(coverage, CUE_OMITTED_SHARE * sum(idf[t] for t in held if t not in optional) / required)
        bonus = PERIOD_BONUS if year is not None and year in unit_years(u.context) else 0.0
        label_share = 0.0
        if u.kind is UnitKind.ROW:
            vals = row_values(q, u, year)
            first = cells(u.span.text)[0]
            label = stem_sets([first], stem)[0]
            label_share = sum(w for t, w in idf.items() if holds_term(t, label)) / total
            bonus += LABEL_BONUS * label_share
            bonus += METRIC_ROW_BONUS if names_metric(q, first) else 0.0
        else:
            vals = _sentence_values(q, u.span.text, not_names, level)
            bonus += HEAD_NAME_BONUS if _names_head(q, u.span.text) else 0.0
        if sim is not None:
            bonus += SIMILARITY_WEIGHT * sim
        scored = Scored(u, coverage, coverage + bonus - RANK_PENALTY * u.rank, vals, sim, label_share)
        if _counted(q, scored, stem):
            scored = replace(scored, score=scored.score + COUNTED_BONUS)
        out.append(scored)
    return out


def _sentence_text(s: Scored, asked: float | None = None, outflow: bool = False) -> str:
    """A unit as the answer states it: a sentence as written; a row as "label: value (period)", the value in the
    unit the question asked, and an outflow asked for (``QuestionAnalysis.outflow``) stated positive."""
    u = s.unit
    if u.kind is UnitKind.SENTENCE:
        return u.span.text.strip()
    label = cells(u.span.text)[0]
    if s.values:
        v = s.values[0]
        scale = table_scale(u.scale_context)
        word = re.search(r"(?i)thousand|million|billion", v.text)  # the value states its own scale
        unit = "" if scale == 1.0 or v.unit == "%" or word else f" {scale_word(scale)}"
        period = TABLE_SCALE_NOTE.sub("", v.period or "").strip()
        printed = f"{v.text}{unit}"
        shown = SCALES[word.group(0).lower()] if word else scale
        negative = v.number is not None and (v.number < 0 or "(" in v.text)  # "(1,577)": a negative as printed
        if outflow and v.unit == "USD" and negative and v.number is not None:
            to = asked or shown
            size = in_asked_scale(abs(v.number), to) if scale_word(to) else f"${abs(v.number):,.0f}"
            printed = f"{size} (an outflow, printed: {printed})"
        elif asked is not None and v.unit == "USD" and v.number is not None and asked != shown:
            printed = f"{in_asked_scale(v.number, asked)} (printed: {printed})"  # the unit the question asked
        return f"{label}: {printed}{f' ({period})' if period else ''}."
    return f"{label}: {' | '.join(cells(u.span.text)[1:])}."


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&'.-]*")


def qualified_line(q: QuestionAnalysis, text: str) -> bool:
    """An amount or percent ask's sentence that states the metric of a part the ask does not name: a capitalised
    name written just before the metric's word ("AWS sales increased 19%", "North America segment sales"), not in
    the ask (a sentence's capitalised first word counts only as an acronym). "By how much did Amazon's consolidated
    sales grow" is answered by "Sales increased 11%" before "AWS sales increased 19%" (the segment's line, as a
    table row's ``rows.other_line``)."""
    if q.metric is None or q.value_kind not in (AnswerKind.AMOUNT, AnswerKind.PERCENT):
        return False
    asked = {w.lower().removesuffix("'s") for w in _WORD.findall(q.ask.ask)} | q.subject_names
    words = [w.removesuffix("'s").rstrip(".") for w in _WORD.findall(text)]
    phrases = [p.split() for p in {q.metric.phrase.lower(), *q.metric.metric.phrases}]
    for i in range(1, len(words)):
        if not any([w.lower() for w in words[i:i + len(p)]] == p for p in phrases):
            continue
        for k in range(i - 1, max(-1, i - 4), -1):  # the words before it, back to a function word
            w = words[k]
            if w.lower() in FUNCTION_WORDS:
                break
            name = w.isupper() and len(w) > 1 if k == 0 else w[:1].isupper()  # a first word: an acronym only
            if name and w.lower() not in asked:
                return True
    return False


# two capitalised names joined by a comma or "and" ("Google Services and Google Cloud", "the Americas, Europe, Greater
# China"), the first not a sentence's first word
_NAME_LIST = re.compile(r"(?<=[a-z,;:] )[A-Z][\w&'.-]*(?: [A-Z][\w&'.-]*)*(?:,(?: and)? | and )[A-Z]")
# a title in quotes ("Segment Information and Geographic Data")
_QUOTED = re.compile(r"\u201c[^\u201d]*\u201d|\"[^\"]*\"")
_INTO = re.compile(r"\binto\s+(?:[a-z]+\s+){0,2}[a-z]+[^s\W]s\b")  # "break down its business into reportable segments"


def lists_names(text: str) -> bool:
    """The sentence lists two or more capitalised names (``_NAME_LIST``), outside quoted titles."""
    return _NAME_LIST.search(_QUOTED.sub(" ", text)) is not None


def asks_for_names(q: QuestionAnalysis) -> bool:
    """The ask wants a set of names: a which / what ask whose head is a plural ("What segments does Alphabet
    report?", "Which acquisitions ..."), or an ask of how the company divides itself into a plural ("How does Apple
    break down its business into reportable segments?")."""
    if q.value_kind is AnswerKind.NAME:
        return bool(q.head and q.head.endswith("s") and not q.head.endswith("ss"))
    return q.value_kind is AnswerKind.TEXT and _INTO.search(q.ask.ask.lower()) is not None


def names_phrase(q: QuestionAnalysis, stem: Any) -> frozenset[str]:
    """The stems of what an ask for a set of names (``asks_for_names``) names them by: the words after "into" ("into
    reportable segments"), else the head noun ("What segments does Alphabet report?"); empty for another ask."""
    if not asks_for_names(q):
        return frozenset()
    m = _INTO.search(q.ask.ask.lower())
    words = m.group(0).split()[1:] if m else [q.head] if q.head else []
    return frozenset(str(x) for x in stem.stemWords([w for w in words if w not in FUNCTION_WORDS]))


def _names_listed(s: Scored, phrase: frozenset[str], stem: Any) -> bool:
    """A sentence that lists names (``lists_names``) under every word the ask names them by ("The Company's reportable
    segments consist of the Americas, Europe, ..." for "How does Apple break down its business into reportable
    segments?"): it answers an ask for a set of names whatever else of the ask's words it holds, when no sentence
    holding enough of them lists names (``extract``)."""
    if not phrase or s.unit.kind is not UnitKind.SENTENCE or not lists_names(s.unit.span.text):
        return False
    held = stem_sets([s.unit.span.text], stem)[0]
    return all(holds(w, held) for w in phrase)


def extract(q: QuestionAnalysis, units: Sequence[Unit], texts: dict[str, str], stem: Any,
            subject: str | None = None, doc_periods: DocPeriods | None = None,
            similarity: Callable[[Sequence[Unit]], Sequence[float] | None] | None = None,
            groups: Sequence[Sequence[str]] = (), not_names: frozenset[str] = frozenset(),
            every_term: bool = False) -> Extraction:
    """The best answering unit(s) (module docstring); an empty ``sentences`` is "not found"; ``similarity``: the
    question-unit cosines of the units it is given (``answer.similarity``), or None; ``groups``, ``not_names``: see
    ``score_units``; ``every_term``: a unit qualifies only holding every term of the ask (units beyond the
    retrieved passages: ``Answerer``'s sentence lookup)."""
    prose = q.value_kind in (AnswerKind.TEXT, AnswerKind.YES_NO)  # an explanation is never a table row
    clean = [u for u in units if not is_instruction(u.context) and not (prose and u.kind is UnitKind.ROW)
             and not is_contents_row(u)]
    scored = score_units(q, clean, stem, similarity(clean) if similarity is not None else None, groups, not_names)
    qualifying = [s for s in scored if (s.coverage >= 1.0 - 1e-9 if every_term else s.qualifies())]
    phrase = names_phrase(q, stem)
    if phrase and not any(s.unit.kind is UnitKind.SENTENCE and lists_names(s.unit.span.text) for s in qualifying):
        # an ask for a set of names whose qualifying sentences list none: a sentence listing them under the ask's
        # own words for them qualifies
        qualifying += [s for s in scored if s not in qualifying and _names_listed(s, phrase, stem)]
    need = needs_value(q.value_kind)
    usable = [s for s in qualifying if (s.values or not need) and period_ok(q, s, doc_periods or {})
              and not (q.value_kind is AnswerKind.COUNT and s.unit.kind is UnitKind.ROW and not s.label_share)]
    # a count read from a table answers only when the row's label names what the ask counts (a row of expenses
    # under a header the ask's words are in holds an amount, whatever its table's unit line says)
    # a sentence stating a part's figure the ask does not name comes after one that does not; an ask for a set of
    # names is answered first by a sentence that lists names
    names = asks_for_names(q)
    # an amount ask that names no measure (no metric, no figure: "How much did Meta pour into Reality Labs") is
    # answered by a sentence before a row: a row's number is its table's measure, which the ask does not name
    unmeasured = q.value_kind is AnswerKind.AMOUNT and q.metric is None and q.formula is None
    usable.sort(key=lambda s: (s.unit.kind is UnitKind.SENTENCE and qualified_line(q, s.unit.span.text),
                               names and not lists_names(s.unit.span.text),
                               unmeasured and s.unit.kind is UnitKind.ROW, -s.score,
                               s.unit.rank, s.unit.span.start))
    chosen = usable[:1]
    if usable and q.value_kind in (AnswerKind.TEXT, AnswerKind.NAME, AnswerKind.YES_NO):
        chosen += [s for s in usable[1:MAX_SENTENCES] if s.score >= SECOND_SENTENCE_SHARE * usable[0].score
                   and s.unit.kind is usable[0].unit.kind  # a form's label row does not follow a sentence
                   and s.unit.span.text.strip() != usable[0].unit.span.text.strip()]  # nor the same words again
    sentences = tuple(AnswerSentence(text=_sentence_text(s, q.scale, q.outflow), method=Method.EXTRACTIVE,
                                     subject=subject, quotes=unit_quotes(s.unit, sha256_hex(texts[s.unit.doc_id])),
                                     values=list(s.values), score=round(s.score, 4)) for s in chosen)
    best = max((s.coverage for s in scored), default=0.0)
    return Extraction(sentences, len(qualifying), len(usable), len(units) - len(clean), best)
