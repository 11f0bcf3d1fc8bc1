"""The evidence routes: ``POST /search``, ``GET /documents``, ``GET /documents/{doc_id}`` (a cited span),
``POST /citations/verify`` and ``POST /citations/verify-batch``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from fastapi.responses import Response

from equimind.core.documents import FilterSpec
from equimind.interfaces.api.deps import EngineDep, RequestIdDep
from equimind.interfaces.api.errors import BODY_ERRORS, ERRORS, ApiError, invalid
from equimind.interfaces.api.models import (
    DOC_ID_PATTERN,
    FORM_PATTERN,
    MAX_CONTEXT,
    MAX_SPAN,
    TICKER_PATTERN,
    CitationBatchOut,
    CitationBatchRequest,
    CitationCheckOut,
    CitationRequest,
    DocumentList,
    IsoDate,
    SearchRequest,
)
from equimind.interfaces.traced import TracedCitationCheck, TracedPassage, TracedSearchResult
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["evidence"])


@router.post("/search", responses=BODY_ERRORS, response_model=TracedSearchResult)
def search(body: SearchRequest, engine: EngineDep, rid: RequestIdDep) -> Response:
    """Hybrid search (filter → dense + BM25 → RRF → rerank): top passages with their parents and scores."""
    flt = body.to_filter()
    if flt.tickers:
        # Not engine.known_ticker: that also accepts a ticker only the SEC map knows (a research run fetches it);
        # a search can only find what is stored, so a ticker without indexed documents is a 404 here.
        stored = engine.stored_tickers()
        unknown = [t for t in flt.tickers if t not in stored]
        if unknown:
            raise ApiError(404, f"no stored documents for ticker(s) {', '.join(unknown)}",
                           f"tickers with stored documents: {', '.join(stored) or 'none yet'}")
    result = engine.search(body.query, flt, mode=body.mode, top_k=body.top_k, auto_filter=body.auto_filter)
    out = traced(TracedSearchResult, result, engine.trace(rid))
    return Response(out.model_dump_json(), media_type="application/json")  # validated already: serialise once


@router.get("/documents")
def documents(engine: EngineDep, rid: RequestIdDep,
              ticker: Annotated[str | None, Query(pattern=TICKER_PATTERN)] = None,
              form: Annotated[str | None, Query(pattern=FORM_PATTERN)] = None,
              since: Annotated[IsoDate | None, Query(description="Filed on or after (YYYY-MM-DD).")] = None,
              until: Annotated[IsoDate | None, Query(description="Filed on or before (YYYY-MM-DD).")] = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 1000) -> DocumentList:
    """Indexed documents (metadata only, newest first), optionally for one ticker and form and a filing-date
    range; at most ``limit`` of them (``total`` says how many match)."""
    if since and until and since > until:
        raise invalid(("query", "until"), f"until ({until}) is before since ({since}); swap them or drop one")
    flt = FilterSpec(tickers=(ticker.upper(),) if ticker else (), forms=(form.upper(),) if form else (),
                     since=since, until=until)
    return DocumentList.of(engine.documents(flt), limit, engine.trace(rid))


@router.get("/documents/{doc_id}", responses=ERRORS)
def document_span(engine: EngineDep, doc_id: Annotated[str, PathParam(pattern=DOC_ID_PATTERN)],
                  start: Annotated[int, Query(ge=0, le=100_000_000)],
                  end: Annotated[int, Query(ge=1, le=100_000_000)],
                  context: Annotated[int, Query(ge=0, le=MAX_CONTEXT)] = 400,
                  *, rid: RequestIdDep) -> TracedPassage:
    """A cited span [start, end) of a document's canonical text, with ``context`` characters either side."""
    if end <= start:
        raise invalid(("query", "end"), f"end ({end}) must be greater than start ({start})")
    if end - start > MAX_SPAN:
        raise invalid(("query", "end"), f"the span may be at most {MAX_SPAN} characters, got {end - start}")
    return traced(TracedPassage, engine.passage(doc_id, start, end, context=context), engine.trace(rid))


@router.post("/citations/verify", responses=BODY_ERRORS)
def verify_citation(body: CitationRequest, engine: EngineDep, rid: RequestIdDep) -> TracedCitationCheck:
    """Find a quote in a document (exact, then whitespace/case-normalised; no LLM)."""
    check = CitationCheckOut.of(engine.verify_citation(body.doc_id, body.quote))
    return traced(TracedCitationCheck, check, engine.trace(rid))


@router.post("/citations/verify-batch", responses=BODY_ERRORS)
def verify_citations(body: CitationBatchRequest, engine: EngineDep, rid: RequestIdDep) -> CitationBatchOut:
    """Check up to 50 quotes at once, each against the span [start, end) it claims (a match inside the span wins);
    an unknown document is reported on its item, not as an error of the whole batch."""
    spans = engine.verify_citations([(c.doc_id, c.start, c.end, c.quote) for c in body.citations])
    return CitationBatchOut.of(spans, engine.trace(rid))
