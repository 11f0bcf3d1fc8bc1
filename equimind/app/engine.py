"""The orchestrator: one object behind the CLI, the REST API and the MCP server.

``research`` runs the DB-first agentic loop (search the store → critic → on-demand fetch + query rewrite, at most
``settings.max_iterations`` rounds) → context compression → Bull/Bear/Judge debate → cited Recommendation.
The other methods are the read paths the interfaces expose (search, passage, citation check, market, memory, health).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, Field

from equimind import __version__
from equimind.analytics.market import DEFAULT_LOOKBACK_DAYS, MarketReport, market_report
from equimind.analytics.price_series import PriceSeries
from equimind.answer.record import Answer
from equimind.app.changes_run import run_changes
from equimind.app.research_run import ResearchRun
from equimind.app.services import Services
from equimind.changes.model import ChangeReport
from equimind.core.citations import CitationCheck, SpanCheck, verify_citation, verify_spans
from equimind.core.config import Settings
from equimind.core.degraded import Degradation, DegradationNote
from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError
from equimind.core.research import Recommendation
from equimind.core.search import DocumentRef, SearchResult
from equimind.embedding.rerank import unavailable_line
from equimind.ingest.embed_format import EmbeddingStamp, parse_format, read_stamp, stamp_note
from equimind.ingest.pipeline import IngestReport, Progress
from equimind.memory.records import MemorySnapshot
from equimind.query.parsed import DECISION_EXAMPLE, ParsedQuestion, check_question
from equimind.query.shape import ShapedQuery, shape_query
from equimind.research.events import EventSink
from equimind.retrieval.subject import company_of_hits
from equimind.security.trace import Trace, Tracer

log = logging.getLogger(__name__)


class Passage(BaseModel):
    """A cited span with its surrounding context (what the dashboard highlights)."""

    doc_id: str
    start: int
    end: int
    text: str
    before: str
    after: str
    section: str | None
    pages: tuple[int, int] | None
    document: DocumentRef
    doc_sha256: str


class Health(BaseModel):
    status: str
    mode: str  # "snapshot" | "live"
    snapshot: str | None
    store: dict[str, int]
    embedder: dict[str, Any]
    reranker: dict[str, Any]
    provider: str
    version: str = __version__
    backend: dict[str, str] = Field(default_factory=dict)  # vectors (chroma embedded | server), sparse
    degraded: list[DegradationNote] = Field(default_factory=list)


def doc_ref(doc: Any) -> DocumentRef:
    return DocumentRef(doc_id=doc.id, ticker=doc.ticker, company=doc.company, form=doc.form, filed_at=doc.filed_at,
                       period_end=doc.period_end, source=doc.source, origin=doc.origin, title=doc.title, url=doc.url)


class EquiMindEngine:
    """Wires retrieval, critic, fetch, compression, memory and the debate behind one call."""

    def __init__(self, services: Services, *, background_indexing: bool = False) -> None:
        """``background_indexing``: embed what first-answer indexing deferred in a thread once the answer is back
        (long-lived processes: the API, the MCP server); otherwise the caller calls ``finish_indexing``."""
        self.services = services
        self.settings: Settings = services.settings
        self.tracer = Tracer(services.settings, services.docstore, services.text_format, served=self._served_position)
        self.background_indexing = background_indexing

    def trace(self, request_id: str | None = None) -> Trace:
        """The provenance of a result produced now (``security/trace.py``): take it after the work, so documents a
        research run fetched are in its corpus signature."""
        return self.tracer.trace(request_id)

    # --- read paths ---------------------------------------------------------------------------------------------
    def search(self, query: str, flt: FilterSpec | None = None, mode: str | None = None,
               top_k: int | None = None, auto_filter: bool | None = None) -> SearchResult:
        """Hybrid search. With no filter given and ``auto_filter`` (default: Settings.auto_filter), the companies and
        fiscal years the query names become the filter, and the result says so (``SearchResult.auto_filter``). With
        ``Settings.query_shaping`` the index is searched with the query's ask (``SearchResult.query`` shows it)."""
        if not query.strip():
            raise ConfigError("the query is empty; give some words to search for")
        use_auto = self.settings.auto_filter if auto_filter is None else auto_filter
        note: str | None = None
        if use_auto and (flt is None or flt.is_empty()):
            parsed = self.services.filter_parser().explain(query)
            flt, note = parsed.spec, parsed.describe()
        result = self._retrieve(query, flt, None, mode=mode, top_k=top_k)
        if note is None:
            return result
        identity = self._identity_degraded()
        degraded = result.degraded if identity is None else [*result.degraded, identity]
        return result.model_copy(update={"auto_filter": note, "degraded": degraded})

    def _identity_degraded(self) -> Degradation | None:
        """The line a search or ask carries when the SEC ticker map could not be read (live mode without an SEC
        identity): ticker-less documents (PDFs) could not be given their registrant's ticker."""
        problem = self.services.identity_problem
        if problem is None:
            return None
        return Degradation(
            capability="company_identity", reason=f"the SEC ticker map is unavailable ({problem}), so a ticker in "
            "the query matches only documents that carry one, not ticker-less ones such as PDFs — set "
            "EQUIMIND_SEC_IDENTITY or use --snapshot")

    def _retrieve(self, text: str, flt: FilterSpec | None, shaped: ShapedQuery | None, *, mode: str | None = None,
                  top_k: int | None = None) -> SearchResult:
        """One search of the store: ``shaped`` is the parsed question's retrieval query when ``text`` is the question
        itself; any other text (a search command's query, a research run's generated sub-query) is shaped here."""
        if shaped is None and self.settings.query_shaping:
            shaped = shape_query(text)
        searched, terms = (shaped.text, " ".join(shaped.terms)) if shaped is not None else (text, "")
        return self.services.searcher().search(searched, flt, mode=mode, top_k=top_k, sparse_terms=terms)

    def passage(self, doc_id: str, start: int, end: int, context: int = 400) -> Passage:
        doc = self.services.docstore.get_document(doc_id)
        n = len(doc.text)
        if not (0 <= start < end <= n):
            raise ConfigError(f"span [{start}, {end}) is outside document {doc_id[:12]} (length {n}); "
                              "use 0 <= start < end <= length")
        return Passage(doc_id=doc_id, start=start, end=end, text=doc.text[start:end],
                       before=doc.text[max(0, start - context):start], after=doc.text[end:end + context],
                       section=doc.section_at(start), pages=doc.pages_for(start, end), document=doc_ref(doc),
                       doc_sha256=doc.sha256)

    def verify_citation(self, doc_id: str, quote: str) -> CitationCheck:
        if not quote.strip():
            raise ConfigError("the quote is empty; pass the exact text to verify")
        return verify_citation(self.services.docstore, doc_id, quote)

    def verify_citations(self, items: list[tuple[str, int, int, str]]) -> list[SpanCheck]:
        """A batch of (doc_id, start, end, quote): each quote looked for inside its claimed span first (no LLM)."""
        return verify_spans(self.services.docstore, items)

    def documents(self, flt: FilterSpec | None = None) -> list[DocumentRef]:
        """The indexed documents (metadata only, newest filing first) matching ``flt``."""
        return self.services.docstore.list_documents(flt, status="indexed")

    def market(self, ticker: str, as_of: date | None = None) -> MarketReport:
        return market_report(self.settings, ticker.upper(), as_of or date.today(), self.services.sources.market)

    def memory(self, ticker: str, as_of: date | None = None) -> MemorySnapshot:
        return self.services.memory.snapshot(ticker.upper(), as_of=as_of)

    def report(self, run_id: int) -> tuple[dict[str, Any], PriceSeries | None, str | None]:
        """A stored research result (``MemoryStore.report``), the price series up to its as-of date for the
        report's chart, and why there is none when it cannot be had (no recorded or live prices)."""
        result = self.services.memory.report(run_id)
        try:
            series = self.price_series(str(result["ticker"]), date.fromisoformat(str(result["as_of"])))
        except EquiMindError as exc:
            return result, None, str(exc)
        return result, series, None

    def health(self) -> Health:
        s = self.services
        rer = s.reranker
        fix = getattr(rer, "unavailable_fix", None)
        degraded = [] if rer.available else [unavailable_line(rer, str(rer.unavailable_reason))]
        try:
            embedder: dict[str, Any] = {"name": s.embedder.name, "dim": s.embedder.dim, "available": True}
        except EquiMindError as exc:
            embedder = {"name": self.settings.embed_model or "all-MiniLM-L6-v2", "available": False,
                        "reason": str(exc)}
            degraded.append(Degradation(capability="embedder", reason=f"unavailable ({exc})"))
        if self.settings.snapshot is None and not self.settings.sec_identity:
            degraded.append(Degradation(capability="sec_edgar",
                                        reason="live calls refused (EQUIMIND_SEC_IDENTITY is not set)"))
        stored = read_stamp(s.docstore)
        embedder["text_format"] = s.text_format
        embedder["stored"] = stored.as_dict() if stored is not None else None
        wanted = EmbeddingStamp(embedder=embedder["name"], text_format=parse_format(s.text_format))
        note = stamp_note(stored, wanted)
        if note is not None:
            degraded.append(note)
        status = "ok" if embedder["available"] and note is None else "degraded"
        return Health(status=status, mode="snapshot" if self.settings.snapshot else "live",
                      snapshot=str(self.settings.snapshot) if self.settings.snapshot else None,
                      store=s.docstore.counts(), embedder=embedder,
                      reranker={"name": rer.name, "available": rer.available, "reason": rer.unavailable_reason,
                                "fix": fix},
                      provider=self.settings.provider, backend=self._backend(), degraded=degraded)

    def _served_position(self) -> int | None:
        """The feed position of this process's search indexes (None before its first search)."""
        searcher = self.services._searcher
        return searcher.indexes.served_position if searcher is not None else None

    def _backend(self) -> dict[str, str]:
        # the server URLs are left out: they may carry credentials
        out = {"vectors": "chroma-server" if self.settings.chroma_url else "chroma-embedded", "sparse": "bm25s",
               "docstore": "postgresql" if self.settings.docstore_url else "sqlite"}
        if self.settings.docstore_url:  # this host's search indexes against the shared store's change feed
            served = self._served_position()
            store = self.services.docstore.feed_position()
            out["feed"] = f"store at {store}, this host's indexes at {'none yet' if served is None else served}"
        return out

    def known_ticker(self, ticker: str) -> str:
        """Normalise a ticker and check it exists: stored, or in the SEC ticker map (the recorded one in snapshot
        mode). In live mode, an unreachable SEC leaves the check to the fetch step, which reports the failure."""
        t = ticker.strip().upper()
        if not t or len(t) > 10 or not t.replace(".", "").replace("-", "").isalnum():
            raise ConfigError(f"ticker {ticker!r} is not valid; use a symbol like NVDA")
        if t in self.services.docstore.known_tickers(only_indexed=False):
            return t
        try:
            self.services.sources.resolve(t)  # the live resolver refuses without an SEC identity
        except NotFoundError as exc:
            raise NotFoundError(f"unknown ticker {t}: not in the store nor in the SEC ticker map ({exc}); "
                                "check the symbol") from exc
        except EquiMindError as exc:
            log.warning("could not check ticker %s against the SEC map: %s", t, exc)
        return t

    # --- research ----------------------------------------------------------------------------------------------
    def research(self, ticker: str, question: str, as_of: date | None = None, *,
                 on_event: EventSink | None = None) -> Recommendation:
        t = self.known_ticker(ticker)
        parsed = self.services.question_parser.parse(question, as_of or date.today(), t, example=DECISION_EXAMPLE)
        with self._first_answer(t):
            return ResearchRun(self.services, parsed, on_event, search=self._loop_search).run()

    def changes(self, ticker: str, *, form: str | None = None, from_: str | None = None, to: str | None = None,
                sections: tuple[str, ...] = (), as_of: date | None = None) -> ChangeReport:
        """What changed between two filings of a company (``app/changes_run.py``): each change cited on both sides."""
        return run_changes(self.services, self.known_ticker, ticker, form=form, from_=from_, to=to,
                           sections=sections, as_of=as_of)

    def ask(self, question: str, ticker: str | None = None, as_of: date | None = None, *,
            on_event: EventSink | None = None) -> Answer:
        """A direct, cited answer to a specific ask (or a refusal naming what was searched and what is missing).
        With no ticker, the company comes from the question's words (stored companies, then the SEC ticker map).
        The question is parsed here, once (``query/parsed.py``), and the run reads the parse."""
        check_question(question)
        t = self.known_ticker(ticker) if ticker else None
        parsed = self._parse_ask(question, as_of or date.today(), t)
        with self._first_answer(parsed.ticker):
            answer = ResearchRun(self.services, parsed, on_event, search=self._loop_search,
                                 product_search=lambda: self.search(question)).answer()
        identity = self._identity_degraded()
        if identity is None or str(identity) in answer.degraded:
            return answer
        return answer.model_copy(update={"degraded": [*answer.degraded, str(identity)]})

    def _parse_ask(self, question: str, as_of: date, ticker: str | None) -> ParsedQuestion:
        """The ask parsed; a question that names no company is asked of the company ``equimind search``'s top
        passages come from, when they overwhelmingly do (``retrieval.subject``), and ``company_from`` says so."""
        parser = self.services.question_parser
        try:
            return parser.parse(question, as_of, ticker)
        except NotFoundError as exc:
            if ticker is not None:
                raise
            found = company_of_hits(question, self.search(question).hits,  # local files count for their registrant
                                    doc_tickers=self.services.filter_parser().doc_tickers())
            if found is None or found.ticker is None:
                raise NotFoundError(f"{exc}; nor do the search's top passages come from one company "
                                    "(run `equimind search` to see them)") from exc
            return replace(parser.parse(question, as_of, found.ticker),
                           company_from=f"{found.describe()} ({found.company or found.ticker}); pass --ticker to "
                           "ask about another company")

    def _loop_search(self, text: str, flt: FilterSpec, shaped: ShapedQuery | None) -> SearchResult:
        return self._retrieve(text, flt, shaped, mode=None, top_k=self.settings.top_k)

    # --- first-answer indexing ----------------------------------------------------------------------------------
    @contextmanager
    def _first_answer(self, ticker: str) -> Iterator[None]:
        """Around one research or ask run: prewarm the embedder (a first-use ONNX export overlaps the fetch), finish
        the ticker's deferred embeddings first (a run sees every stored filing of its ticker whole), and afterwards —
        in a long-lived engine (API, MCP) — embed what the run deferred in a background thread; a CLI process calls
        ``finish_indexing`` itself once the answer is shown."""
        self.services.prewarm_embedder()
        self.services.complete_deferred((ticker,))
        try:
            yield
        finally:
            if self.background_indexing and self.services.docstore.deferred():
                threading.Thread(target=self._finish_quietly, name="equimind-complete", daemon=True).start()

    def _finish_quietly(self) -> None:
        try:
            report = self.finish_indexing()
            log.info("first-answer indexing completed: %d documents, %d embeddings", report.documents_completed,
                     report.embeddings_computed)
        except EquiMindError as exc:  # the next run on the ticker completes it; the searches say what is missing
            log.warning("completing deferred embeddings failed: %s", exc)

    def finish_indexing(self, progress: Progress | None = None) -> IngestReport:
        """Embed every chunk that first-answer indexing deferred (``ingest/first_answer.py``). Idempotent."""
        return self.services.complete_deferred(progress=progress)

    # --- read paths the interfaces share (added by the thin-interfaces refactor) ----------------------------------
    def stored_tickers(self) -> list[str]:
        """The tickers with indexed documents in the store, sorted (what an unknown-ticker error lists)."""
        return sorted(self.services.docstore.known_tickers())

    def price_series(self, ticker: str, as_of: date | None = None, lookback_days: int = 365) -> PriceSeries:
        """Daily OHLCV + indicator series of ``ticker`` up to ``as_of`` (default today) for the dashboard's chart: an
        ``equimind.analytics.price_series.PriceSeries``. Indicators start from the same history as the market
        report's (two years before ``as_of``, or more for a longer window), so their last values equal its figures."""
        day = as_of or date.today()
        start = day - timedelta(days=max(DEFAULT_LOOKBACK_DAYS, lookback_days + 365))
        history = self.services.sources.market.prices.history(ticker, start=start).up_to(day)
        if not history.bars:
            raise NotFoundError(f"no price bars for {ticker} between {start} and {day}; choose a later as_of")
        return PriceSeries.from_history(history, day, day - timedelta(days=lookback_days))
