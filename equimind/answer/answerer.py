"""The answer path's entry point: ``Answerer.answer(question, ticker, as_of, hits) -> Answer``.

Collaborators come in through the constructor, none is built here: the docstore (canonical texts for quotes, the
documents the answerability check sees), an optional companyfacts source (``FactsSource``: the snapshot or the live
SEC client) and an optional ``LLMAnswerer``. The flow for one question:

1. bad input (empty, longer than ``MAX_QUESTION_CHARS``, no ticker) -> ``ConfigError`` naming the fix;
2. the answerability analysis (ADR 0006) decides decision vs specific ask and refuses a specific ask whose terms the
   visible documents do not hold (the existing rule) — unless it is an XBRL ask that companyfacts answer; a decision
   ask is refused here with ``DECISION_ASK`` (the debate rates it);
3. per subject (the ticker, and the companies a comparison names): an XBRL ask is answered from companyfacts as filed
   by the as-of date; otherwise the LLM answerer when one is given (a model failure falls back to the extractive
   answerer, recorded in ``degraded``), else the extractive answerer over that subject's passages;
4. verdict: every side answered -> supported; some -> partial; none -> refused with the reason, what was searched
   and what is missing ("the retrieved passages hold the question's terms but no value of the asked type").
Passages filed after the as-of date are dropped before anything reads them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any

import Stemmer

from equimind.answer.acronyms import acronym_groups, common_noun_acronyms
from equimind.answer.answerability import AnswerabilityCheck
from equimind.answer.extract import DocPeriods, extract
from equimind.answer.figures import FigureAnswerer, fiscal_year_of
from equimind.answer.llm_answer import LLMAnswerError
from equimind.answer.record import (
    NO_VALUE_OF_TYPE_TEXT,
    Answer,
    AnswerSentence,
    PassageRead,
    Refusal,
    RefusalReason,
    Support,
)
from equimind.answer.similarity import UnitSimilarity
from equimind.answer.term_index import DocTerms
from equimind.answer.units import Unit, all_units, document_rows, document_sentences
from equimind.answer.values import needs_value
from equimind.answer.xbrl_answer import FactsSource, xbrl_answer
from equimind.core.citations import CitationVerifier
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.search import EvidenceNode, SearchHit
from equimind.lexicon.concepts import USD
from equimind.query.analysis import Subject
from equimind.query.kinds import AnswerKind
from equimind.query.question import QuestionAnalysis, analyse_question

if TYPE_CHECKING:
    from equimind.answer.llm_answer import LLMAnswerer
    from equimind.store.docstore import DocStore

log = logging.getLogger(__name__)
MAX_QUESTION_CHARS = 2000
TABLE_KINDS = (AnswerKind.AMOUNT, AnswerKind.COUNT, AnswerKind.PERCENT)  # asks a table row can answer
Hit = SearchHit | EvidenceNode


def passage_of(hit: Hit) -> PassageRead:
    """The span an answerer reads: a search hit's parent passage, an evidence node's own span."""
    if isinstance(hit, SearchHit):
        d = hit.document
        return PassageRead(doc_id=d.doc_id, start=hit.parent_start, end=hit.parent_end,
                           score=hit.scores.rerank_score or hit.scores.rrf_score or 0.0, ticker=d.ticker,
                           form=d.form, filed_at=d.filed_at)
    return PassageRead(doc_id=hit.doc_id, start=hit.start, end=hit.end, score=hit.score, ticker=hit.ticker,
                       form=hit.form, filed_at=hit.filed_at)


def check_question(question: str, ticker: str) -> str:
    text = (question or "").strip()
    if not text:
        raise ConfigError("the question is empty; ask a specific question, e.g. \"What was NVIDIA's revenue in "
                          "fiscal 2025?\"")
    if len(text) > MAX_QUESTION_CHARS:
        raise ConfigError(f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}: "
                          "ask one question in a sentence or two")
    if not (ticker or "").strip():
        raise ConfigError("no ticker given; pass the company's ticker (e.g. --ticker NVDA)")
    return text


@dataclass(frozen=True)
class Side:
    sentences: tuple[AnswerSentence, ...]
    reason: RefusalReason | None
    note: str
    dropped: int = 0


class Answerer:
    def __init__(self, docstore: DocStore, facts: FactsSource | None = None, llm: LLMAnswerer | None = None,
                 terms_cache: MutableMapping[str, DocTerms] | None = None,
                 similarity: UnitSimilarity | None = None) -> None:

        self.docstore = docstore
        self.similarity = similarity
        self.facts = facts
        self.llm = llm
        self.check = AnswerabilityCheck(docstore, terms_cache)
        self.figures = FigureAnswerer(docstore, facts)
        self._stem = Stemmer.Stemmer("english")

    def answer(self, question: str, ticker: str, as_of: date, hits: Sequence[Hit], *,
               company: str | None = None, topic: bool = False,
               scope: tuple[Subject, Sequence[Subject]] | None = None) -> Answer:
        """The Answer to ``question``; ``topic``: answer a decision ask's topic (``analyse_question``) instead of
        refusing it as a decision ask; ``scope``: the subject and the other companies given directly (documents
        without tickers, e.g. a benchmark's PDFs) instead of the store's tickers."""
        text = check_question(question, ticker)
        ticker = ticker.strip().upper()
        passages = [p for p in dict.fromkeys(passage_of(h) for h in hits) if p.filed_at is None or
                    p.filed_at <= as_of]
        subject, others = scope or self.check.subjects(as_of, ticker, company or self._entity_name(ticker))
        verdict = self.check.judge_subject(text, subject, others)
        q = analyse_question(text, subject, others, self._stem, topic=topic)
        base: dict[str, Any] = {"question": text, "ticker": ticker, "as_of": as_of, "kind": q.kind,
                                "passages_searched": passages,
                                "analysis": {**q.to_log(), "answerability_rule": verdict.rule}}
        if q.kind is AnswerKind.DECISION:
            return Answer(**base, support=Support.REFUSED, refusal=Refusal(
                reason=RefusalReason.DECISION_ASK, message=f"a decision ask ({q.cue}): it gets a rating from the "
                f"debate, not a direct answer; run `equimind research {ticker} \"{text}\"`"))
        degraded: list[str] = []
        plan = side_plan(q, ticker, subject, others)
        docs = {o.key.upper(): o.doc_ids for o in others} | {ticker: subject.doc_ids}
        if not verdict.answerable:  # only a reported or computed figure can still answer: the filings lack the
            # ask's terms ("DPO": the analyst's word, not the filing's)
            sides = [self._side(qs, k, [], as_of, degraded, docs.get(k.upper(), ())) for k, qs in plan] \
                if q.xbrl or q.formula else []
            if not sides or not all(s.sentences for s in sides):
                return Answer(**base, support=Support.REFUSED, degraded=degraded, refusal=Refusal(
                    reason=RefusalReason.NOT_ANSWERABLE, message=verdict.reason or verdict.rule,
                    searched={"documents": verdict.documents, "passages": verdict.passages, "forms": verdict.forms},
                    missing=[t.word for t in verdict.missing]))
            return self._verdict(base, q, sides, passages, degraded)
        sides = [self._side(qs, k, passages, as_of, degraded, docs.get(k.upper(), ())) for k, qs in plan]
        return self._verdict(base, q, sides, passages, degraded)

    def _entity_name(self, ticker: str) -> str | None:
        """The company's name from its companyfacts, so a store without its filings still knows its name."""
        if self.facts is None:
            return None
        try:
            return self.facts.company_facts(ticker).entity_name or None
        except NotFoundError:
            return None

    def _side(self, q: QuestionAnalysis, key: str, passages: Sequence[PassageRead], as_of: date,
              degraded: list[str], doc_ids: Sequence[str] = ()) -> Side:
        mine = [p for p in passages if p.ticker is None or p.ticker == key]
        if q.formula is not None:
            found = self.figures.computed(q, key, as_of, doc_ids, degraded)
            if found is not None:
                return Side((found[0],), None, found[1])
        if q.xbrl and q.metric is not None:
            side = self._xbrl(q, key, as_of, degraded)
            if side is None and q.metric.metric.unit == USD:
                line = self.figures.reported_line(q, key, doc_ids)
                side = Side((line[0],), None, line[1]) if line is not None else None
            if side is not None:
                return side
        if not mine:
            return Side((), RefusalReason.NO_PASSAGES, f"no passage of {key} was retrieved")
        if self.llm is not None:
            side = self._llm(q, key, mine, degraded)
            if side is not None:
                return side
        return self._extract(q, key, mine, degraded)

    def _xbrl(self, q: QuestionAnalysis, key: str, as_of: date, degraded: list[str]) -> Side | None:
        assert q.metric is not None
        if self.facts is None:
            degraded.append("xbrl: no companyfacts source given; answered from the passages")
            return None
        try:
            cf = self.facts.company_facts(key)
        except NotFoundError as exc:
            degraded.append(f"xbrl: {exc}")
            return None
        result = xbrl_answer(cf, q.metric.metric, q.periods[0] if q.periods else None, as_of, key)
        if result.not_ended:
            return Side((), RefusalReason.PERIOD_NOT_ENDED, result.reason)
        if result.sentence is None:
            degraded.append(f"xbrl: {result.reason}; answered from the passages")
            return None
        return Side((result.sentence,), None, result.reason)

    def _llm(self, q: QuestionAnalysis, key: str, passages: Sequence[PassageRead], degraded: list[str]) -> Side | None:
        assert self.llm is not None
        try:
            res = self.llm.run(q, passages, CitationVerifier(self.docstore), self._stem, key)
        except LLMAnswerError as exc:
            degraded.append(f"llm ({exc.failure}): {exc}; answered by the offline extractive answerer")
            return None
        if res.sentences:
            return Side(res.sentences, None, "llm, verified", res.dropped)
        if res.refused:
            return Side((), RefusalReason.LLM_REFUSED, f"the model found no answer: {res.missing}", res.dropped)
        return Side((), RefusalReason.NOTHING_VERIFIED, "no sentence of the model's answer was verified: "
                    + "; ".join(res.drops), res.dropped)

    def _extract(self, q: QuestionAnalysis, key: str, passages: Sequence[PassageRead], degraded: list[str]) -> Side:
        texts = {p.doc_id: self.docstore.get_document_text(p.doc_id) for p in passages}
        periods = self._doc_periods(texts)
        groups = acronym_groups(list(texts.values()))
        common = common_noun_acronyms(list(texts.values()))
        ex = extract(q, all_units(texts, passages), texts, self._stem, key, periods, self._meaning(q, degraded),
                     groups, common)
        if ex.sentences:
            return Side(ex.sentences, None, f"extractive: {ex.to_log()}")
        # Lookups over the whole retrieved filings when no passage answers: statement tables first for a money
        # or percent ask (a line item's value), prose first for a count, a date or a name (stated in sentences).
        # The tables are read when some passage held the ask's terms and a row can answer its kind.
        tables = bool(ex.qualifying) and q.value_kind in TABLE_KINDS
        for rows in ((True, False) if q.value_kind in (AnswerKind.AMOUNT, AnswerKind.PERCENT) else (False, True)):
            if tables if rows else needs_value(q.value_kind):
                side = self._filing_lookup(q, key, texts, len(passages), periods, groups, common, rows)
                if side is not None:
                    return side
        if ex.qualifying:
            return Side((), RefusalReason.NO_VALUE_OF_TYPE, f"{NO_VALUE_OF_TYPE_TEXT} ({q.value_kind.value}): "
                        f"{ex.qualifying} sentences/rows of {key} hold the terms, none a {q.value_kind.value}")
        return Side((), RefusalReason.NO_PASSAGES, f"no retrieved sentence or table row of {key} holds half of "
                    f"the question's terms (best {ex.best_coverage:.2f})")

    def _filing_lookup(self, q: QuestionAnalysis, key: str, texts: dict[str, str], rank: int,
                       periods: DocPeriods, groups: Sequence[Sequence[str]], common: frozenset[str],
                       rows: bool) -> Side | None:
        """Every table row (``rows``) or every sentence of the retrieved filings, scored by terms alone (embedding
        thousands of units per ask is not worth it for a lookup named by the ask's own words). A row qualifies as
        in the passages; a sentence outside them only holding every term of the ask (one the search ranked out:
        "approximately 36,000 employees" for a headcount ask)."""
        units_of = document_rows if rows else document_sentences
        units = [u for i, d in enumerate(texts) for u in units_of(texts[d], d, rank + i, key)]
        found = extract(q, units, texts, self._stem, key, periods, groups=groups, not_names=common,
                        every_term=not rows)
        if not found.sentences:
            return None
        return Side(found.sentences, None, f"{'table' if rows else 'sentence'} lookup in the retrieved filings: "
                    f"{found.to_log()}")

    def _meaning(self, q: QuestionAnalysis, degraded: list[str]) -> Callable[[Sequence[Unit]], list[float] | None]:
        """The question-unit cosines for ``extract`` (None without a similarity model, noted in ``degraded``)."""
        def scores(units: Sequence[Unit]) -> list[float] | None:
            if self.similarity is None:
                note = "answer: no unit similarity model given; sentences scored by term coverage alone"
            else:
                found = self.similarity.scores(q.question, units)
                if found is not None:
                    return found
                note = f"answer: {self.similarity.problem}"
            if note not in degraded:
                degraded.append(note)
            return None

        return scores

    def _doc_periods(self, texts: dict[str, str]) -> dict[str, tuple[int | None, str | None]]:
        """doc id -> (fiscal year, fiscal period) as the document's source declared them."""
        out: dict[str, tuple[int | None, str | None]] = {}
        for doc_id in texts:
            doc = self.docstore.get_document(doc_id)
            # an annual report is the fiscal year's ("FY") when its source names no period (a local PDF's 10-K)
            period = doc.meta_dict().get("fiscal_period") or ("FY" if doc.form.upper().startswith("10-K") else None)
            out[doc_id] = (fiscal_year_of(doc), period)
        return out

    def _verdict(self, base: dict[str, Any], q: QuestionAnalysis, sides: Sequence[Side],
                 passages: Sequence[PassageRead], degraded: list[str]) -> Answer:
        answered = [s for s in sides if s.sentences]
        per_side = 1 if len(sides) > 1 else 3  # a comparison states one sentence per side (company or period)
        sentences = [x for s in answered for x in s.sentences[:per_side]][:3]
        dropped = sum(s.dropped for s in sides)
        notes = [s.note for s in sides]
        base["analysis"] = {**base["analysis"], "sides": notes}
        if len(answered) == len(sides):
            return Answer(**base, support=Support.SUPPORTED, sentences=sentences, dropped_sentences=dropped,
                          degraded=degraded)
        failed = next(s for s in sides if not s.sentences)
        reason = failed.reason or RefusalReason.NO_PASSAGES
        refusal = Refusal(reason=reason, message=_refusal_message(q, failed, passages), missing=list(q.leftover),
                          searched={"passages": len(passages),
                                    "documents": len({p.doc_id for p in passages})})
        support = Support.PARTIAL if answered else Support.REFUSED
        return Answer(**base, support=support, sentences=sentences, refusal=refusal, dropped_sentences=dropped,
                      degraded=degraded)


def _refusal_message(q: QuestionAnalysis, side: Side, passages: Sequence[PassageRead]) -> str:
    forms = sorted({f"{p.ticker} {p.form} filed {p.filed_at}" for p in passages})
    where = "; ".join(forms) or "no passages"
    return (f"not found: {side.note}. Searched {len(passages)} passages ({where}). Missing: a "
            f"{q.value_kind.value} answering '{q.ask.ask}'. Ingest the filing that reports it (equimind ingest) "
            "or rephrase the question with the filing's words")


def side_plan(q: QuestionAnalysis, ticker: str, subject: Subject,
              others: Sequence[Subject]) -> list[tuple[str, QuestionAnalysis]]:
    """The parts of the ask, each answered on its own: one per compared company (with its period), one per compared
    period of a single company ("revenue in fiscal 2025 versus fiscal 2024"), else the ask itself."""
    if q.kind is not AnswerKind.COMPARISON:
        return [(ticker, q)]
    if not q.ask.co_subjects:
        return [(ticker, replace(q, periods=(p,))) for p in q.periods[:2]]
    keys = [ticker, *q.ask.co_subjects]
    out: list[tuple[str, QuestionAnalysis]] = []
    for i, key in enumerate(keys):
        period = _period_for(q, key, i, subject, others)
        out.append((key, replace(q, periods=(period,) if period is not None else ())))
    return out


def _period_for(q: QuestionAnalysis, key: str, index: int, subject: Subject, others: Sequence[Subject]) -> Any:
    """The period of side ``index``: with one period per compared company, the i-th period goes to the company
    named i-th; otherwise the first period (None: the latest fiscal year)."""
    if not q.periods:
        return None
    if q.kind is AnswerKind.COMPARISON and len(q.periods) == len(q.ask.co_subjects) + 1:
        order = _mention_order(q.ask.ask, [subject, *[o for o in others if o.key in q.ask.co_subjects]])
        return q.periods[order.index(key)] if key in order else q.periods[0]
    return q.periods[0]


def _mention_order(ask: str, subjects: Sequence[Subject]) -> list[str]:
    words = [w.strip("'s") for w in ask.lower().replace("\u2019", "'").split()]

    def first(s: Subject) -> int:
        hits = [i for i, w in enumerate(words) if w in s.names or w == s.key.lower()]
        return min(hits, default=len(words))

    return [s.key for s in sorted(subjects, key=first)]
