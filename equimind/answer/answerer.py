"""The answer path's entry point: ``Answerer.answer(parsed_question, hits) -> Answer``.

Collaborators come in through the constructor, none is built here: the docstore (canonical texts for quotes, the
documents the answerability check sees), an optional companyfacts source (``FactsSource``: the snapshot or the live
SEC client) and an optional ``LLMAnswerer``. The flow for one question:

1. the question comes parsed (``query/parsed.py``: bad input was refused there, the company and its subjects are
   found, the ask is read); nothing here reads the question's text again;
2. the answerability verdict over the parsed ask (ADR 0006) decides decision vs specific ask and refuses a
   specific ask whose terms the visible documents do not hold (the existing rule) — unless it is an XBRL ask that
   companyfacts answer; a decision ask is refused here with ``DECISION_ASK`` (the debate rates it);
3. per side (the ticker, and the companies or periods a comparison names: ``side_plan``): the first strategy of the
   ordered chain (``answer.strategies``: computed figure, XBRL line, statement line, no-passages refusal, LLM
   answerer, extractive, the filing lookups, the final refusal) that answers or refuses it; a strategy that cannot
   run as it should (no companyfacts, a model failure) says so in ``degraded`` and the chain goes on; which
   strategy decided and why each earlier one passed is the side's entry in ``Answer.strategies``;
4. verdict: every side answered -> supported; some -> partial; none -> refused with the reason, what was searched
   and what is missing ("the retrieved passages hold the question's terms but no value of the asked type").
Passages filed after the as-of date are dropped before anything reads them.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

import Stemmer

from equimind.answer.answerability import AnswerabilityCheck
from equimind.answer.exhibits import company_exhibit_note, with_note
from equimind.answer.figures import FigureAnswerer
from equimind.answer.record import Answer, AnswerSentence, PassageRead, Refusal, RefusalReason, Support
from equimind.answer.similarity import UnitSimilarity
from equimind.answer.strategies import Answered, Refused, SideInput, Strategy, article, default_chain, run_chain
from equimind.answer.term_index import DocTerms
from equimind.answer.xbrl_answer import FactsSource
from equimind.core.search import EvidenceNode, SearchHit
from equimind.query.analysis import Subject
from equimind.query.kinds import AnswerKind
from equimind.query.parsed import ParsedQuestion
from equimind.query.question import QuestionAnalysis

if TYPE_CHECKING:
    from equimind.answer.llm_answer import LLMAnswerer
    from equimind.store.docstore import DocStore

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


@dataclass(frozen=True)
class Side:
    sentences: tuple[AnswerSentence, ...]
    reason: RefusalReason | None
    note: str
    dropped: int = 0
    trace: dict[str, Any] = field(default_factory=dict)  # the strategies tried (``Answer.strategies``)


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
        # the answer strategies of a side, in order (``answer.strategies.DEFAULT_ORDER``)
        self.chain: tuple[Strategy, ...] = default_chain(docstore, self.figures, facts, llm, self._stem, similarity)

    def answer(self, pq: ParsedQuestion, hits: Sequence[Hit], *, topic: bool = False) -> Answer:
        """The Answer to the parsed question over ``hits``; ``topic``: answer a decision ask's topic
        (``ParsedQuestion.topic``) instead of refusing it as a decision ask. The subjects and their documents are
        the ones ``pq`` carries (the store's at the as-of date, or a benchmark's own documents)."""
        text, ticker, as_of = pq.text, pq.ticker, pq.as_of
        passages = [p for p in dict.fromkeys(passage_of(h) for h in hits) if p.filed_at is None or
                    p.filed_at <= as_of]
        subject, others = pq.subject, pq.others
        verdict = self.check.verdict(pq.ask, subject, others)
        q = pq.reading(topic)
        base: dict[str, Any] = {"question": text, "ticker": ticker, "as_of": as_of, "kind": q.kind,
                                "passages_searched": passages,
                                "parsed_question": {**pq.to_log(), "reading": "topic" if q is pq.topic else "ask",
                                                    "answerability_rule": verdict.rule}}
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
                return Answer(**base, support=Support.REFUSED, degraded=degraded, strategies=[s.trace for s in sides],
                              refusal=Refusal(
                    reason=RefusalReason.NOT_ANSWERABLE, message=verdict.reason or verdict.rule,
                    searched={"documents": verdict.documents, "passages": verdict.passages, "forms": verdict.forms},
                    missing=[t.word for t in verdict.missing]))
            return self._verdict(base, q, sides, passages, degraded)
        sides = [self._side(qs, k, passages, as_of, degraded, docs.get(k.upper(), ())) for k, qs in plan]
        return self._verdict(base, q, sides, passages, degraded)

    def _side(self, q: QuestionAnalysis, key: str, passages: Sequence[PassageRead], as_of: date,
              degraded: list[str], doc_ids: Sequence[str] = ()) -> Side:
        """The side answered by the first strategy of ``self.chain`` that answers or refuses it
        (``answer.strategies``), with the trace of every strategy tried."""
        mine = tuple(p for p in passages if p.ticker is None or p.ticker == key)
        outcome, steps = run_chain(self.chain, SideInput(q, key, mine, as_of, tuple(doc_ids)), degraded)
        trace = {"side": key, "periods": [p.label() for p in q.periods],
                 "decided_by": steps[-1].strategy if outcome is not None else None,
                 "steps": [s.to_log() for s in steps]}
        if isinstance(outcome, Answered):
            return Side(outcome.sentences, None, outcome.note, outcome.dropped, trace)
        if isinstance(outcome, Refused):
            return Side((), outcome.reason, outcome.note, outcome.dropped, trace)
        return Side((), RefusalReason.NO_PASSAGES, f"no strategy answered {key}", 0, trace)

    def _verdict(self, base: dict[str, Any], q: QuestionAnalysis, sides: Sequence[Side],
                 passages: Sequence[PassageRead], degraded: list[str]) -> Answer:
        answered = [s for s in sides if s.sentences]
        per_side = 1 if len(sides) > 1 else 3  # a comparison states one sentence per side (company or period)
        sentences = [x for s in answered for x in s.sentences[:per_side]][:3]
        dropped = sum(s.dropped for s in sides)
        notes = [s.note for s in sides]
        base["parsed_question"] = {**base["parsed_question"], "sides": notes}
        base["strategies"] = [s.trace for s in sides]
        if len(answered) == len(sides):
            return Answer(**base, support=Support.SUPPORTED, sentences=sentences, dropped_sentences=dropped,
                          degraded=degraded)
        failed = next(s for s in sides if not s.sentences)
        reason = failed.reason or RefusalReason.NO_PASSAGES
        note = company_exhibit_note(self.docstore, failed.trace.get("side") or base["ticker"], base["as_of"])
        refusal = Refusal(reason=reason, message=with_note(_refusal_message(q, failed, passages), note),
                          missing=list(q.leftover),
                          searched={"passages": len(passages),
                                    "documents": len({p.doc_id for p in passages})})
        support = Support.PARTIAL if answered else Support.REFUSED
        return Answer(**base, support=support, sentences=sentences, refusal=refusal, dropped_sentences=dropped,
                      degraded=degraded)


def _refusal_message(q: QuestionAnalysis, side: Side, passages: Sequence[PassageRead]) -> str:
    where = "; ".join(searched_documents(passages)) or "no passages"
    kind = q.value_kind.value
    return (f"not found: {side.note}. Searched {len(passages)} passages ({where}). Missing: {article(kind)} {kind} "
            f"answering '{q.ask.ask}'. Ingest the filing that reports it (equimind ingest) or rephrase the question "
            "with the filing's words")


def searched_documents(passages: Sequence[PassageRead]) -> list[str]:
    """The documents the passages came from, as a refusal names them: "NFLX 10-K filed 2025-01-27", and one entry
    for many of a kind ("NFLX prices: 9 documents filed 2024-12-31 to 2025-09-30"); a local PDF carries no ticker
    or filing date, and none is printed."""
    kinds: dict[tuple[str, str], set[date | None]] = {}
    for p in passages:
        kinds.setdefault((p.ticker or "", p.form or ""), set()).add(p.filed_at)
    out: list[str] = []
    for (ticker, form), days in sorted(kinds.items()):
        name = " ".join(x for x in (ticker, form) if x)
        dated = sorted(d for d in days if d is not None)
        if len(dated) > 2:
            out.append(f"{name}: {len(dated)} documents filed {dated[0]} to {dated[-1]}")
        else:
            out += [f"{name} filed {d}" for d in dated] or [name]
    return out


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
