"""The answer strategies of one side of an ask, an explicit ordered chain (issue 27).

A side (the ask, or one company / period of a comparison: ``answerer.side_plan``) is decided by the first strategy
of the chain that answers or refuses it. A strategy has a ``name`` and ``run(SideInput) -> Outcome``, one of
``Answered(sentences, note, dropped)`` and ``Refused(reason, note)`` (terminal: the chain stops), ``Degraded(reason)``
(it could not run as it should, e.g. no companyfacts source: ``reason`` goes to the answer's ``degraded`` and the
chain goes on) and ``NotApplicable(reason)`` (not its kind of ask, or it found nothing; nothing degraded). Any
outcome may carry ``notices``: degraded lines written while it ran, recorded before a ``Degraded`` reason.

``DEFAULT_ORDER``: choice among named candidates (one table row each) -> computed figure -> XBRL line -> statement
line (a USD metric XBRL did not answer) -> no passages (refusal) -> LLM answerer -> extractive over the passages ->
sentence lookup first (a count, date or name: prose states it) -> table lookup over the retrieved filings ->
sentence lookup (after the tables: an amount or percent) -> refusal (no value of the asked type, or no passages).
The passage strategies share one side's work (the filings' texts, the extraction over the passages) through
``SideInput.work``, computed on first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from equimind.answer.acronyms import acronym_groups, common_noun_acronyms
from equimind.answer.extract import DocPeriods, Extraction, extract
from equimind.answer.figures import FigureAnswerer, fiscal_period_of, fiscal_year_of
from equimind.answer.llm_answer import LLMAnswerError
from equimind.answer.record import NO_VALUE_OF_TYPE_TEXT, AnswerSentence, PassageRead, RefusalReason
from equimind.answer.units import Unit, all_units, document_rows, document_sentences
from equimind.answer.values import needs_value
from equimind.answer.xbrl_answer import FactsSource, xbrl_answer
from equimind.core.citations import CitationVerifier
from equimind.core.errors import NotFoundError
from equimind.lexicon.concepts import USD
from equimind.query.kinds import AnswerKind
from equimind.query.question import QuestionAnalysis

if TYPE_CHECKING:
    from equimind.answer.llm_answer import LLMAnswerer
    from equimind.answer.similarity import UnitSimilarity
    from equimind.store.docstore import DocStore

TABLE_KINDS = (AnswerKind.AMOUNT, AnswerKind.COUNT, AnswerKind.PERCENT)  # asks a table row can answer
TABLES_FIRST = (AnswerKind.AMOUNT, AnswerKind.PERCENT)  # asks whose filing lookup reads the tables before the prose
DEFAULT_ORDER = ("choice", "computed", "xbrl", "statement_line", "no_passages", "llm", "extractive",
                 "sentence_lookup_first", "table_lookup", "sentence_lookup", "refusal")


def article(word: str) -> str:
    """The indefinite article before ``word`` ("an amount", "a count")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class Notice:
    """A degraded line a strategy wrote while it ran; ``once``: recorded once per answer (not again for a later
    side)."""
    text: str
    once: bool = False


@dataclass(frozen=True)
class Answered:
    sentences: tuple[AnswerSentence, ...]
    note: str
    dropped: int = 0
    notices: tuple[Notice, ...] = ()
    kind: ClassVar[str] = "answered"


@dataclass(frozen=True)
class Refused:
    reason: RefusalReason
    note: str
    dropped: int = 0
    notices: tuple[Notice, ...] = ()
    kind: ClassVar[str] = "refused"


@dataclass(frozen=True)
class Degraded:
    reason: str
    notices: tuple[Notice, ...] = ()
    kind: ClassVar[str] = "degraded"


@dataclass(frozen=True)
class NotApplicable:
    reason: str
    notices: tuple[Notice, ...] = ()
    kind: ClassVar[str] = "not_applicable"


Outcome = Answered | Refused | Degraded | NotApplicable


def why(outcome: Outcome) -> str:
    """What an outcome says in a side's trace: the answer's note, the refusal's reason and note, why it passed."""
    if isinstance(outcome, Answered):
        return outcome.note
    return f"{outcome.reason.value}: {outcome.note}" if isinstance(outcome, Refused) else outcome.reason


def record_degraded(outcome: Outcome, degraded: list[str]) -> None:
    """Append what ``outcome`` says was degraded: its notices in order (a ``once`` notice only when not already
    there), then a ``Degraded`` outcome's reason."""
    for n in outcome.notices:
        if not (n.once and n.text in degraded):
            degraded.append(n.text)
    if isinstance(outcome, Degraded):
        degraded.append(outcome.reason)


@dataclass(frozen=True)
class Filings:
    """The retrieved filings of one side: canonical texts (passage order), declared periods, acronyms."""
    texts: dict[str, str]
    periods: DocPeriods
    groups: Sequence[Sequence[str]]
    common: frozenset[str]


@dataclass
class SideWork:
    """What the passage strategies of one side share, computed on first use."""
    filings: Filings | None = None
    extraction: Extraction | None = None


@dataclass(frozen=True)
class SideInput:
    """One side of the ask: its reading (``QuestionAnalysis``, with the side's period), the company key, the side's
    own passages (filed by the as-of date), the as-of date and the company's visible document ids."""
    q: QuestionAnalysis
    key: str
    passages: tuple[PassageRead, ...]
    as_of: date
    doc_ids: tuple[str, ...] = ()
    work: SideWork = field(default_factory=SideWork, compare=False, repr=False)


class Strategy(Protocol):
    @property
    def name(self) -> str: ...

    def run(self, side: SideInput) -> Outcome: ...


@dataclass(frozen=True)
class Step:
    """One strategy's outcome in a side's trace."""
    strategy: str
    outcome: str  # answered / refused / degraded / not_applicable
    why: str

    def to_log(self) -> dict[str, str]:
        return {"strategy": self.strategy, "outcome": self.outcome, "why": self.why}


def run_chain(chain: Sequence[Strategy], side: SideInput, degraded: list[str]) -> tuple[Outcome | None, list[Step]]:
    """Run ``chain`` in order until a strategy answers or refuses; degraded lines are appended as they come. The
    deciding outcome (None: no strategy decided) and every step taken."""
    steps: list[Step] = []
    for strategy in chain:
        outcome = strategy.run(side)
        record_degraded(outcome, degraded)
        steps.append(Step(strategy.name, outcome.kind, why(outcome)))
        if isinstance(outcome, Answered | Refused):
            return outcome, steps
    return None, steps


@dataclass(frozen=True)
class ChoiceRows:
    """A choice among the candidates the ask names, one row each in one table (``FigureAnswerer.choice``)."""
    figures: FigureAnswerer
    name: ClassVar[str] = "choice"

    def run(self, side: SideInput) -> Outcome:
        if side.q.choice is None:
            return NotApplicable("no choice among named candidates")
        found = self.figures.choice(side.q, side.key, side.doc_ids)
        if found is None:
            return NotApplicable(f"no table of {side.key} holds a row for each of "
                                 f"{', '.join(side.q.choice.names())} in the asked year")
        return Answered((found[0],), found[1])


@dataclass(frozen=True)
class ComputedFigure:
    """A ratio / growth rate the ask names, computed from reported lines (``FigureAnswerer.computed``)."""
    figures: FigureAnswerer
    name: ClassVar[str] = "computed"

    def run(self, side: SideInput) -> Outcome:
        lines: list[str] = []
        if side.q.formula is None:
            if side.q.explained is None:
                return NotApplicable("no formula named")
            # the reason a figure changed: the passages give it, unless the statements do not define the figure
            found = self.figures.undefined(side.q, side.key, side.as_of, side.doc_ids, lines)
            if found is None:
                return NotApplicable(f"the reason {side.q.explained.formula.name} changed is read from the passages")
            return Answered((found[0],), found[1], notices=tuple(Notice(t) for t in lines))
        found = self.figures.computed(side.q, side.key, side.as_of, side.doc_ids, lines)
        notices = tuple(Notice(t) for t in lines)
        if found is not None:
            return Answered((found[0],), found[1], notices=notices)
        if not lines:
            return NotApplicable(f"{side.q.formula.formula.name} could not be computed")
        return Degraded(lines[-1], notices[:-1])


@dataclass(frozen=True)
class XbrlLine:
    """A reported metric from XBRL companyfacts as filed by the as-of date."""
    facts: FactsSource | None
    name: ClassVar[str] = "xbrl"

    def run(self, side: SideInput) -> Outcome:
        q = side.q
        if not q.xbrl or q.metric is None:
            return NotApplicable("not an XBRL ask")
        if self.facts is None:
            return Degraded("xbrl: no companyfacts source given; answered from the passages")
        try:
            cf = self.facts.company_facts(side.key)
        except NotFoundError as exc:
            return Degraded(f"xbrl: {exc}")
        result = xbrl_answer(cf, q.metric.metric, q.periods[0] if q.periods else None, side.as_of, side.key)
        if result.not_ended:
            return Refused(RefusalReason.PERIOD_NOT_ENDED, result.reason)
        if result.sentence is None:
            return Degraded(f"xbrl: {result.reason}; answered from the passages")
        return Answered((result.sentence,), result.reason)


@dataclass(frozen=True)
class StatementLine:
    """A USD metric XBRL did not answer, as the company's statements print it (``FigureAnswerer.reported_line``);
    it runs only when the XBRL strategy passed on an XBRL ask, so XBRL gave nothing."""
    figures: FigureAnswerer
    name: ClassVar[str] = "statement_line"

    def run(self, side: SideInput) -> Outcome:
        q = side.q
        if not q.xbrl or q.metric is None:
            return NotApplicable("not an XBRL ask")
        if q.metric.metric.unit != USD:
            return NotApplicable(f"{q.metric.metric.name} is not a USD line ({q.metric.metric.unit})")
        line = self.figures.reported_line(q, side.key, side.doc_ids)
        if line is None:
            return NotApplicable(f"no statement line of {q.metric.metric.name} for the asked fiscal year")
        return Answered((line[0],), line[1])


@dataclass(frozen=True)
class NoPassages:
    """The side has no retrieved passage: nothing below can answer it."""
    name: ClassVar[str] = "no_passages"

    def run(self, side: SideInput) -> Outcome:
        if not side.passages:
            return Refused(RefusalReason.NO_PASSAGES, f"no passage of {side.key} was retrieved")
        return NotApplicable(f"{len(side.passages)} passages of {side.key} retrieved")


@dataclass(frozen=True)
class LLMStrategy:
    """The LLM answerer over the side's passages, every sentence verified; a model failure falls back."""
    docstore: DocStore
    llm: LLMAnswerer | None
    stem: Any
    name: ClassVar[str] = "llm"

    def run(self, side: SideInput) -> Outcome:
        if self.llm is None:
            return NotApplicable("no LLM configured")
        try:
            res = self.llm.run(side.q, side.passages, CitationVerifier(self.docstore), self.stem, side.key)
        except LLMAnswerError as exc:
            return Degraded(f"llm ({exc.failure}): {exc}; answered by the offline extractive answerer")
        if res.sentences:
            return Answered(res.sentences, "llm, verified", res.dropped)
        if res.refused:
            return Refused(RefusalReason.LLM_REFUSED, f"the model found no answer: {res.missing}", res.dropped)
        return Refused(RefusalReason.NOTHING_VERIFIED, "no sentence of the model's answer was verified: "
                       + "; ".join(res.drops), res.dropped)


@dataclass(frozen=True)
class PassageReader:
    """Reads a side's retrieved filings once (``SideWork``) for the passage strategies."""
    docstore: DocStore
    stem: Any
    similarity: UnitSimilarity | None = None

    def filings(self, side: SideInput) -> Filings:
        if side.work.filings is None:
            texts = {p.doc_id: self.docstore.get_document_text(p.doc_id) for p in side.passages}
            side.work.filings = Filings(texts, self._doc_periods(texts), acronym_groups(list(texts.values())),
                                        common_noun_acronyms(list(texts.values())))
        return side.work.filings

    def extraction(self, side: SideInput) -> tuple[Extraction, tuple[Notice, ...]]:
        """The extraction over the side's passages, and the notices written computing it (none once computed)."""
        if side.work.extraction is not None:
            return side.work.extraction, ()
        f = self.filings(side)
        notices: list[Notice] = []
        side.work.extraction = extract(side.q, all_units(f.texts, side.passages), f.texts, self.stem, side.key,
                                       f.periods, self._meaning(side.q, notices), f.groups, f.common)
        return side.work.extraction, tuple(notices)

    def lookup(self, side: SideInput, rows: bool) -> Extraction:
        """Every table row (``rows``) or sentence of the retrieved filings, scored by terms alone; a sentence qualifies
        only holding every term of the ask (one the search ranked out: "approximately 36,000 employees")."""
        f = self.filings(side)
        units_of = document_rows if rows else document_sentences
        units = [u for i, d in enumerate(f.texts) for u in units_of(f.texts[d], d, len(side.passages) + i, side.key)]
        return extract(side.q, units, f.texts, self.stem, side.key, f.periods, groups=f.groups, not_names=f.common,
                       every_term=not rows)

    def _meaning(self, q: QuestionAnalysis, notices: list[Notice]) -> Callable[[Sequence[Unit]], list[float] | None]:
        """The question-unit cosines for ``extract`` (None without a similarity model, noted once per answer)."""
        def scores(units: Sequence[Unit]) -> list[float] | None:
            if self.similarity is None:
                note = "answer: no unit similarity model given; sentences scored by term coverage alone"
            else:
                found = self.similarity.scores(q.question, units)
                if found is not None:
                    return found
                note = f"answer: {self.similarity.problem}"
            notices.append(Notice(note, once=True))
            return None

        return scores

    def _doc_periods(self, texts: dict[str, str]) -> DocPeriods:
        """doc id -> (fiscal year, fiscal period) as the document's source declared them; an annual report is the
        fiscal year's ("FY") when its source names no period (a local PDF's 10-K)."""
        docs = {doc_id: self.docstore.get_document(doc_id) for doc_id in texts}
        return {doc_id: (fiscal_year_of(d), fiscal_period_of(d)) for doc_id, d in docs.items()}


def names_figure(q: QuestionAnalysis, sentences: Sequence[AnswerSentence]) -> bool:
    """A computed figure asked ("Netflix's quick ratio") that could not be computed is answered from the passages
    only by a sentence that names it: "in compliance with all covenants and ratios" is not a quick ratio."""
    if q.formula is None:
        return True
    words = [w for w in re.split(r"[\s-]+", q.formula.phrase.lower()) if w]
    pattern = re.compile(r"\b" + r"[\s-]+".join(re.escape(w) for w in words) + r"s?\b", re.I)
    return any(pattern.search(x.text) or any(pattern.search(qt.text) for qt in x.quotes) for x in sentences)


@dataclass(frozen=True)
class Extractive:
    """The best sentence or table row of the side's passages (``answer.extract``); for a computed figure that was
    not computed, only one that names the figure (``names_figure``)."""
    reader: PassageReader
    name: ClassVar[str] = "extractive"

    def run(self, side: SideInput) -> Outcome:
        ex, notices = self.reader.extraction(side)
        if ex.sentences and names_figure(side.q, ex.sentences):
            return Answered(ex.sentences, f"extractive: {ex.to_log()}", notices=notices)
        if ex.sentences:
            figure = side.q.formula.formula.name if side.q.formula is not None else "figure"
            return NotApplicable(f"no passage sentence names the {figure} asked (it could not be computed): "
                                 f"{ex.to_log()}", notices)
        return NotApplicable(f"no passage sentence or row answers: {ex.to_log()}", notices)


@dataclass(frozen=True)
class TableLookup:
    """Every table row of the retrieved filings, when some passage held the ask's terms and a row can answer its
    kind (a line item's value)."""
    reader: PassageReader
    name: ClassVar[str] = "table_lookup"

    def run(self, side: SideInput) -> Outcome:
        kind = side.q.value_kind
        if kind not in TABLE_KINDS:
            return NotApplicable(f"{article(kind.value)} {kind.value} ask: no table row states one")
        ex, notices = self.reader.extraction(side)
        if not ex.qualifying:
            return NotApplicable("no retrieved sentence or row holds the ask's terms", notices)
        found = self.reader.lookup(side, rows=True)
        if not found.sentences or not names_figure(side.q, found.sentences):
            return NotApplicable(f"no table row of the retrieved filings answers: {found.to_log()}", notices)
        return Answered(found.sentences, f"table lookup in the retrieved filings: {found.to_log()}", notices=notices)


@dataclass(frozen=True)
class SentenceLookup:
    """Every sentence of the retrieved filings holding every term of the ask, for an ask a value answers: before the
    tables (``first``) for a count, date or name (prose states those), after them for an amount or percent."""
    reader: PassageReader
    first: bool

    @property
    def name(self) -> str:
        return "sentence_lookup_first" if self.first else "sentence_lookup"

    def run(self, side: SideInput) -> Outcome:
        kind = side.q.value_kind
        if not needs_value(kind):
            return NotApplicable(f"{article(kind.value)} {kind.value} ask: no value to look up")
        if (kind not in TABLES_FIRST) != self.first:
            return NotApplicable(f"{article(kind.value)} {kind.value} ask: the sentences are read "
                                 f"{'after' if self.first else 'before'} the tables")
        found = self.reader.lookup(side, rows=False)
        if not found.sentences or not names_figure(side.q, found.sentences):
            return NotApplicable(f"no sentence of the retrieved filings holds every term: {found.to_log()}")
        return Answered(found.sentences, f"sentence lookup in the retrieved filings: {found.to_log()}")


@dataclass(frozen=True)
class FinalRefusal:
    """Nothing answered: the passages hold the terms but no value of the asked type, or hold too few terms."""
    reader: PassageReader
    name: ClassVar[str] = "refusal"

    def run(self, side: SideInput) -> Outcome:
        (ex, notices), q, key = self.reader.extraction(side), side.q, side.key
        if q.formula is not None and ex.sentences:  # sentences were found, but none names the figure asked
            return Refused(RefusalReason.NO_VALUE_OF_TYPE, f"{q.formula.formula.name} could not be computed (see "
                           f"degraded) and no retrieved sentence of {key} states it", notices=notices)
        if ex.qualifying:
            kind = q.value_kind.value
            return Refused(RefusalReason.NO_VALUE_OF_TYPE, f"{NO_VALUE_OF_TYPE_TEXT} ({kind}): {ex.qualifying} "
                           f"sentences/rows of {key} hold the terms, none {article(kind)} {kind}", notices=notices)
        return Refused(RefusalReason.NO_PASSAGES, f"no retrieved sentence or table row of {key} holds half of the "
                       f"question's terms (best {ex.best_coverage:.2f})", notices=notices)


def default_chain(docstore: DocStore, figures: FigureAnswerer, facts: FactsSource | None, llm: LLMAnswerer | None,
                  stem: Any, similarity: UnitSimilarity | None) -> tuple[Strategy, ...]:
    """The chain in ``DEFAULT_ORDER`` (module docstring)."""
    reader = PassageReader(docstore, stem, similarity)
    return (ChoiceRows(figures), ComputedFigure(figures), XbrlLine(facts), StatementLine(figures), NoPassages(),
            LLMStrategy(docstore, llm, stem), Extractive(reader), SentenceLookup(reader, first=True),
            TableLookup(reader), SentenceLookup(reader, first=False), FinalRefusal(reader))
