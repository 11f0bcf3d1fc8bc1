"""The question, understood once: ``QuestionParser.parse(text, as_of, ticker) -> ParsedQuestion``.

This is the one place where the text of a question is read. It

1. checks the text (empty, too long) and raises ``ConfigError`` naming the fix;
2. finds the company: the ticker given, else the one company the question names (stored companies first, then the
   SEC ticker map: ``query/company.resolve_company``; two without a comparison word is an error listing both);
3. builds the subjects the words are read against: the company (its ticker, the names its stored documents carry,
   the name the caller or companyfacts knows) and every other stored company, each with its documents visible at
   the as-of date (``subjects``);
4. reads the ask (``query/question.analyse_question`` over ``query/analysis.analyse``): decision or specific, the
   focus terms, the companies compared, the answer kind and value kind, the metric or computed figure, the periods,
   the unit asked; for a decision ask with content words, also its topic read as a text ask;
5. shapes the retrieval query (``query/shape.shape_query``) when query shaping is on.

The stages below take the ``ParsedQuestion`` and read its fields; none parses the text again. Two things can change
after the parse and are re-read without re-reading the text: the documents visible to each subject (a research
run's fetch stores new filings: ``rescope``), and — only when a fetch makes a new company's name known — the names
the words are read against, in which case ``rescope`` reads the ask again through this same module and the log says
so (``rescoped``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

import Stemmer

from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError
from equimind.core.timeguard import as_of_filter
from equimind.lexicon.text import question_words
from equimind.query.analysis import AskAnalysis, AskKind, Subject, name_words
from equimind.query.company import resolve_company
from equimind.query.question import QuestionAnalysis, analyse_question
from equimind.query.shape import ShapedQuery, shape_query
from equimind.sources.base import TickerInfo
from equimind.store.docstore import DocStore

log = logging.getLogger(__name__)
MAX_QUESTION_CHARS = 2000
SPECIFIC_EXAMPLE = "What was NVIDIA's revenue in fiscal 2025?"
DECISION_EXAMPLE = "Should I invest in NVIDIA?"


def check_question(question: str, example: str = SPECIFIC_EXAMPLE) -> str:
    """The stripped text, or ``ConfigError`` naming the problem and the fix."""
    text = (question or "").strip()
    if not text:
        raise ConfigError(f"the question is empty; ask a question, e.g. \"{example}\"")
    if len(text) > MAX_QUESTION_CHARS:
        raise ConfigError(f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}: "
                          "ask one question in a sentence or two")
    return text


@dataclass(frozen=True)
class ParsedQuestion:
    """Everything the stages need to know about a question, read from its text once."""

    text: str  # the question as the user asked it (stripped)
    ticker: str  # the subject company's key
    as_of: date
    subject: Subject  # the company: name words and the documents visible at ``as_of``
    others: tuple[Subject, ...]  # the other companies known, for comparisons
    analysis: QuestionAnalysis  # the specific-ask reading (its ``ask``: decision vs specific, focus terms)
    topic: QuestionAnalysis | None = None  # a decision ask's topic read as a text ask, when it names one
    shaped: ShapedQuery | None = None  # the retrieval query (None: query shaping off)
    company_from: str = "given"  # how the company was found: given, or the question's words
    rescoped: tuple[str, ...] = field(default=())  # why the ask was read again after the parse (new names)
    words: tuple[str, ...] = ()  # the question's words minus stopwords (the critic's and rewriter's topic words)

    @property
    def ask(self) -> AskAnalysis:
        return self.analysis.ask

    @property
    def search_text(self) -> str:
        return self.shaped.text if self.shaped is not None else self.text

    @property
    def search_terms(self) -> str:
        """Line-item words for the BM25 leg only (ADR 0011), empty without shaping."""
        return " ".join(self.shaped.terms) if self.shaped is not None else ""

    def reading(self, topic: bool = False) -> QuestionAnalysis:
        """The reading an answer uses: the topic's for ``topic`` when the question has one, else the ask's."""
        return self.topic if topic and self.topic is not None else self.analysis

    def base_filter(self) -> FilterSpec:
        return as_of_filter(FilterSpec(tickers=(self.ticker,)), self.as_of)

    def to_log(self) -> dict[str, Any]:
        return {"text": self.text, "ticker": self.ticker, "as_of": self.as_of.isoformat(),
                "company_from": self.company_from, "subject_names": sorted(self.subject.names),
                "compared": list(self.ask.co_subjects), **self.analysis.to_log(),
                "topic": self.topic.to_log() if self.topic is not None else None,
                "shaped": None if self.shaped is None else {"text": self.shaped.text, "terms": list(self.shaped.terms)},
                "rescoped": list(self.rescoped)}


class QuestionParser:
    """Builds ``ParsedQuestion``s against one store. ``ticker_map`` (the SEC ticker map, may raise when unreadable)
    and ``entity_name`` (a company's name from its companyfacts) are optional readers of other data."""

    def __init__(self, docstore: DocStore, *, ticker_map: Callable[[], Mapping[str, TickerInfo]] | None = None,
                 entity_name: Callable[[str], str | None] | None = None, shaping: bool = True,
                 registered: Callable[[], Mapping[str, Sequence[str]]] | None = None) -> None:
        self.docstore = docstore
        self._ticker_map = ticker_map
        self._entity_name = entity_name
        self._registered = registered  # ticker -> its ticker-less documents (local files named by the registrant)
        self.shaping = shaping
        self.stem = Stemmer.Stemmer("english")  # the BM25 index's stemmer (store.sparse.STEMMER_LANGUAGE)

    # --- the company and the subjects ---------------------------------------------------------------------------
    def company_of(self, text: str) -> tuple[str, str]:
        """(ticker, how it was found) of the one company ``text`` names; ConfigError listing the candidates when
        ambiguous, NotFoundError when none is known."""
        stored = dict.fromkeys((r.ticker, r.company) for r in self.docstore.list_documents() if r.ticker)
        tickers: Mapping[str, TickerInfo] = {}
        unread: EquiMindError | None = None
        if self._ticker_map is not None:
            try:
                tickers = self._ticker_map()
            except EquiMindError as exc:  # live mode without an SEC identity: only the store's companies are known
                log.warning("no SEC ticker map to resolve the question's company: %s", exc)
                unread = exc
        try:
            found = resolve_company(text, stored, tickers)
        except NotFoundError as exc:
            if unread is None:
                raise
            raise NotFoundError(f"{exc}; the SEC ticker map could not be read ({unread}), so only the stored "
                                "companies that carry a ticker were known") from exc
        where = "a stored company" if found.stored else "the SEC ticker map"
        return found.ticker, f"the question's words ('{found.matched}': {where}, {found.name})"

    def entity_name(self, ticker: str) -> str | None:
        if self._entity_name is None:
            return None
        try:
            return self._entity_name(ticker) or None
        except NotFoundError:
            return None

    def subjects(self, as_of: date, ticker: str, company: str | None = None) -> tuple[Subject, list[Subject]]:
        """The run's subject and the other companies of the store, each with its documents visible at ``as_of``:
        those stored under its ticker and the ticker-less ones its registrant's names name (``registered``)."""
        own: Subject | None = None
        others: list[Subject] = []
        registered = self._registered() if self._registered is not None else {}
        for t in sorted(self.docstore.known_tickers() | set(registered) | {ticker}):
            refs = self.docstore.list_documents(as_of_filter(FilterSpec(tickers=(t,)), as_of), status="indexed")
            if registered.get(t):  # the local files its registrant's names name: what search finds for it
                refs = [*refs, *self.docstore.list_documents(
                    as_of_filter(FilterSpec(doc_ids=tuple(registered[t])), as_of), status="indexed")]
            extra = (company,) if t == ticker else ()
            s = Subject(t, name_words(t, *sorted({r.company or "" for r in refs}), *extra),
                        tuple(r.doc_id for r in refs))
            if t == ticker:
                own = s
            else:
                others.append(s)
        assert own is not None
        return own, others

    # --- the parse ----------------------------------------------------------------------------------------------
    def parse(self, question: str, as_of: date, ticker: str | None = None, *, company: str | None = None,
              example: str = SPECIFIC_EXAMPLE) -> ParsedQuestion:
        """The question read once: its company (``ticker`` or the one its words name), subjects and reading."""
        text = check_question(question, example)
        how = "given"
        if ticker is None or not ticker.strip():
            ticker, how = self.company_of(text)
        key = ticker.strip().upper()
        subject, others = self.subjects(as_of, key, company or self.entity_name(key))
        return self.read(text, key, as_of, subject, others, company_from=how)

    def read(self, text: str, ticker: str, as_of: date, subject: Subject, others: Sequence[Subject], *,
             company_from: str = "given", rescoped: tuple[str, ...] = ()) -> ParsedQuestion:
        """Read ``text`` against the given subjects (a benchmark's own documents, or the store's)."""
        analysis = analyse_question(text, subject, others, self.stem)
        # a topic reading differs from the ask's only for a decision ask with content words (``analyse_question``)
        topic = analyse_question(text, subject, others, self.stem, topic=True) \
            if analysis.ask.kind is AskKind.DECISION and analysis.ask.topic else None
        shaped = shape_query(text) if self.shaping else None
        return ParsedQuestion(text=text, ticker=ticker.strip().upper(), as_of=as_of, subject=subject,
                              others=tuple(others), analysis=analysis,
                              topic=topic, shaped=shaped,
                              company_from=company_from, rescoped=rescoped, words=question_words(text))

    def rescope(self, pq: ParsedQuestion, company: str | None = None) -> ParsedQuestion:
        """The same question over the documents visible now (a research run stored new filings). When the names the
        words are read against changed (a fetch made the company's or a new company's name known), the ask is read
        again here, and ``rescoped`` says why."""
        subject, others = self.subjects(pq.as_of, pq.ticker, company or self.entity_name(pq.ticker))
        same = subject.names == pq.subject.names and [(o.key, o.names) for o in others] == [
            (o.key, o.names) for o in pq.others]
        if same:
            return replace(pq, subject=subject, others=tuple(others))
        why = (f"the names known for {pq.ticker} or the other companies changed after the parse "
               f"({sorted(pq.subject.names)} -> {sorted(subject.names)})")
        return self.read(pq.text, pq.ticker, pq.as_of, subject, others, company_from=pq.company_from,
                         rescoped=(*pq.rescoped, why))
