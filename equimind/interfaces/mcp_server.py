"""MCP server (stdio, official ``mcp`` SDK ``MCPServer``): EquiMind's read tools and the research run.

Tools: ``search_filings``, ``get_passage``, ``verify_citation``, ``verify_citations`` (a batch), ``list_documents``,
``corpus_status``, ``memory``, ``market_snapshot``, ``changes``, ``research``, ``ask`` — thin adapters over
``EquiMindEngine``, returning what the REST API returns for the same data. Every result carries a ``trace``
(request id, version, corpus signature, config hash: ``equimind.security.trace``). Every ``tools/call`` goes through
the default-deny gate (``equimind.security.gate``) with the exact arguments the client sent, BEFORE the SDK parses
them: an unknown tool, an extra, missing or ill-typed argument (a batch element included) is denied, and every call
(allowed or denied) is in the audit log before anything runs. If the audit write fails, the tool does not run.
Without ``EQUIMIND_AUDIT_KEY`` the server refuses to start.

Run it with ``equimind mcp`` or ``python -m equimind.interfaces.mcp_server`` (settings from ``EQUIMIND_*``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from contextvars import ContextVar
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from equimind import __version__
from equimind.app.engine import EquiMindEngine
from equimind.core.config import Settings
from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError, EquiMindError
from equimind.interfaces.api.models import CitationBatchOut, CitationCheckOut, CitationSpan, DocumentList
from equimind.interfaces.traced import (
    TracedAnswer,
    TracedChangeReport,
    TracedCitationCheck,
    TracedHealth,
    TracedMarketReport,
    TracedMemory,
    TracedPassage,
    TracedRecommendation,
    TracedSearchResult,
)
from equimind.security.chain import AuditError
from equimind.security.gate import Gate, ToolDenied, build_gate
from equimind.security.trace import new_request_id, traced
from equimind.store.audit_anchor import audit_anchor

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

    from equimind.app.services import Services

log = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
TOOLS = ("search_filings", "get_passage", "verify_citation", "verify_citations", "list_documents", "corpus_status",
         "memory", "market_snapshot", "changes", "research", "ask")
INSTRUCTIONS = (
    "EquiMind: evidence-first equity research over stored SEC filings and market data. corpus_status says what the "
    "store holds (document and chunk counts, embedder and its stamp, reranker, backend, snapshot or live, version); "
    "list_documents lists the indexed documents by ticker, form and filing dates. search_filings finds passages "
    "(each hit carries document.doc_id and a [start, end) span); get_passage returns a span with its document; "
    "verify_citation checks one quote against the canonical text, verify_citations up to 50 quotes against the "
    "spans they claim; memory recalls past evidence and research runs for a ticker; market_snapshot gives prices, "
    "indicators and fundamentals as of a date; changes lists what changed from one filing of a company to the next "
    "(new and dropped risk factors, changed figures, rewordings), ranked, each cited on both sides; ask answers a "
    "specific question from cited spans or XBRL facts; "
    "research runs the full debate and returns a cited recommendation. Every result carries a trace: request_id, "
    "version, corpus_signature (the indexed documents) and config_hash (the result-changing settings) -- two "
    "results with equal corpus_signature and config_hash came from the same data and settings. Every call is "
    "checked against a default-deny policy and recorded in a tamper-evident audit log."
)


# The request id of the tool call being served (set by GatedMCPServer.call_tool, read where the result is traced;
# the SDK runs a sync tool in a worker thread with a copy of this context).
CALL_REQUEST_ID: ContextVar[str | None] = ContextVar("equimind_mcp_request_id", default=None)


class GatedMCPServer(MCPServer[Any]):
    """An ``MCPServer`` whose every tool call is checked and audited by ``gate`` on the raw client arguments."""

    def __init__(self, gate: Gate, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate = gate

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        parent = super().call_tool
        rid = new_request_id()  # the result's trace.request_id, and the audit records'
        token = CALL_REQUEST_ID.set(rid)

        async def run(**checked: Any) -> Any:
            return await parent(name, checked, context)

        try:
            return await self.gate.acall(name, arguments, run, request_id=rid)
        except ToolDenied as exc:
            raise ToolError(f"{exc} (audit record {exc.audit_seq})") from exc
        except AuditError as exc:  # already logged by the gate
            raise ToolError(f"refused: the call could not be audited, so it was not run ({exc})") from exc
        finally:
            CALL_REQUEST_ID.reset(token)


def _tool(fn: Callable[[], T]) -> T:
    """Run an engine call; EquiMind errors reach the client as their own message (they name the fix)."""
    try:
        return fn()
    except EquiMindError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def build_server(engine: EquiMindEngine, gate: Gate) -> GatedMCPServer:
    """The MCP server with the eleven EquiMind tools registered (argument limits live in the gate policy)."""
    server = GatedMCPServer(gate, name="equimind", instructions=INSTRUCTIONS, version=__version__,
                            log_level="WARNING")

    out = _Traced(engine)
    _corpus_tools(server, engine, out)
    _evidence_tools(server, engine, out)
    _work_tools(server, engine, out)
    return server


class _Traced:
    """Runs an engine call, then attaches the trace (taken after the work: documents a research run fetched count)."""

    def __init__(self, engine: EquiMindEngine) -> None:
        self._engine = engine

    def __call__(self, cls: type[M], fn: Callable[[], BaseModel]) -> M:
        return traced(cls, _tool(fn), self._engine.trace(CALL_REQUEST_ID.get()))


def _corpus_tools(server: GatedMCPServer, engine: EquiMindEngine, out: _Traced) -> None:
    """What is stored: corpus_status, list_documents, memory."""

    @server.tool()
    def corpus_status() -> TracedHealth:
        """What the corpus holds and how it is served: document/chunk counts, embedder and the stamp of the stored
        vectors, reranker, vector backend, LLM provider, snapshot or live mode, EquiMind version, degradations."""
        return out(TracedHealth, engine.health)

    @server.tool()
    def list_documents(ticker: str | None = None, form: str | None = None, since: date | None = None,
                       until: date | None = None, limit: int | None = None) -> DocumentList:
        """Indexed documents (metadata only, newest filing first): doc_id, ticker, company, form, filed_at,
        period_end, source, title, url; optional ticker, form (e.g. 10-K), filing-date range (since/until,
        YYYY-MM-DD, inclusive) and limit (1-1000, default 100; total says how many match)."""
        flt = FilterSpec(tickers=(ticker,) if ticker else (), since=since, until=until,
                         forms=(form.upper(),) if form else ())
        docs = _tool(lambda: engine.documents(flt))
        return DocumentList.of(docs, limit or 100, engine.trace(CALL_REQUEST_ID.get()))

    @server.tool()
    def memory(ticker: str, as_of: date | None = None) -> TracedMemory:
        """What EquiMind remembers about a ticker as of a date: dated evidence, period summaries, past research
        runs (nothing dated after as_of)."""
        return out(TracedMemory, lambda: engine.memory(engine.known_ticker(ticker), as_of))

    del corpus_status, list_documents, memory  # registered on the server


def _evidence_tools(server: GatedMCPServer, engine: EquiMindEngine, out: _Traced) -> None:
    """What the documents say: search_filings, get_passage, verify_citation, verify_citations."""

    @server.tool()
    def search_filings(query: str, ticker: str | None = None, since: date | None = None, until: date | None = None,
                       form: str | None = None, k: int | None = None) -> TracedSearchResult:
        """Hybrid search (dense + BM25, fused, reranked) over stored filings; optional ticker, filing-date range
        (since/until, YYYY-MM-DD, inclusive), form (e.g. 10-K) and number of passages k (1-50)."""
        flt = FilterSpec(tickers=(ticker,) if ticker else (), since=since, until=until,
                         forms=(form.upper(),) if form else ())
        return out(TracedSearchResult, lambda: engine.search(query, flt, top_k=k))

    @server.tool()
    def get_passage(doc_id: str, start: int, end: int) -> TracedPassage:
        """The span [start, end) of a stored document's canonical text, with context and document metadata."""
        return out(TracedPassage, lambda: engine.passage(doc_id, start, end))

    @server.tool()
    def verify_citation(doc_id: str, quote: str) -> TracedCitationCheck:
        """Find a quote in a document (exact, then whitespace/case-normalised; else the closest passage). No LLM."""
        return out(TracedCitationCheck, lambda: CitationCheckOut.of(engine.verify_citation(doc_id, quote)))

    @server.tool()
    def verify_citations(citations: list[CitationSpan]) -> CitationBatchOut:
        """Check 1-50 quotes at once: each {doc_id, start, end, quote} is looked for inside its claimed span first,
        then anywhere in the document (exact, then normalised; no LLM). Each result says whether it is verified,
        where it was found, and whether that lies inside the claimed span; an unknown document is an item error."""
        spans = _tool(lambda: engine.verify_citations([(c.doc_id, c.start, c.end, c.quote) for c in citations]))
        return CitationBatchOut.of(spans, engine.trace(CALL_REQUEST_ID.get()))

    del search_filings, get_passage, verify_citation, verify_citations  # registered on the server


def _work_tools(server: GatedMCPServer, engine: EquiMindEngine, out: _Traced) -> None:
    """Computed results: market_snapshot, changes, research, ask."""

    @server.tool()
    def market_snapshot(ticker: str, as_of: date | None = None) -> TracedMarketReport:
        """Last close, technical indicators, fundamentals, sentiment and macro for a ticker as of a date."""
        return out(TracedMarketReport, lambda: engine.market(engine.known_ticker(ticker), as_of))

    @server.tool()
    def changes(ticker: str, form: str | None = None, from_filing: str | None = None, to_filing: str | None = None,
                sections: list[str] | None = None, as_of: date | None = None) -> TracedChangeReport:
        """What changed from one filing of a company to the next: risk factors added or removed, figures changed
        (old -> new), paragraphs reworded, ranked by the stated ranking_rule; every change cites the old and the new
        filing (doc_id, [start, end) span, quote; checked against the stored text). Default pair: the latest
        periodic filing against the one before it (a 10-Q against the 10-K before it compares its risk-factor
        update). form: 10-K or 10-Q; from_filing / to_filing: a filing date (YYYY-MM-DD), accession number, fiscal
        year (2019, 2024Q2) or document id; sections: risk_factors, mdna, business, notes, market_risk, legal,
        full_text; nothing filed after as_of is used."""
        return out(TracedChangeReport, lambda: engine.changes(ticker, form=form, from_=from_filing, to=to_filing,
                                                              sections=tuple(sections or ()), as_of=as_of))

    @server.tool()
    def research(ticker: str, question: str, as_of: date | None = None) -> TracedRecommendation:
        """Full research run: agentic retrieval, Bull/Bear debate and Judge; a rating with cited claims."""
        return out(TracedRecommendation, lambda: engine.research(ticker, question, as_of))

    @server.tool()
    def ask(question: str, ticker: str | None = None, as_of: date | None = None) -> TracedAnswer:
        """A direct answer to a specific question: every sentence backed by verified filing spans (doc id, span,
        quote, document sha256) or XBRL facts (concept, period, accession), or a refusal naming what was searched
        and what is missing. The ticker may be omitted when the question names the company."""
        return out(TracedAnswer, lambda: engine.ask(question, engine.known_ticker(ticker) if ticker else None, as_of))

    del market_snapshot, changes, research, ask  # registered on the server


def prepare(settings: Settings, services: Services | None = None) -> GatedMCPServer:
    """Build the gate first (ConfigError: no audit key, unusable policy), then the stores and the server."""
    gate = build_gate(settings, audit_anchor(settings))
    if gate.policy.error is not None:
        raise ConfigError(f"the tool policy could not be loaded ({gate.policy.error}); fix or unset "
                          "EQUIMIND_GATE_POLICY")
    if services is None:
        from equimind.app.services import open_services

        services = open_services(settings)
    return build_server(EquiMindEngine(services, background_indexing=True), gate)


def run_stdio(settings: Settings, services: Services | None = None) -> None:
    """Serve MCP over stdin/stdout until the client disconnects. Raises ConfigError (e.g. no EQUIMIND_AUDIT_KEY)
    before serving anything."""
    server = prepare(settings, services)
    log.info("EquiMind MCP server on stdio; tools: %s; audit log %s", ", ".join(TOOLS), settings.audit_path)
    server.run("stdio")


def main() -> None:
    """``python -m equimind.interfaces.mcp_server``: settings from the environment (EQUIMIND_*)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    try:
        run_stdio(Settings())
    except EquiMindError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from exc


if __name__ == "__main__":
    main()
