"""The evidence routes: ``POST /search``, ``GET /documents``, ``GET /documents/{doc_id}`` (a cited span) and
``POST /citations/verify``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from fastapi.responses import Response

from equimind.engine import Passage
from equimind.interfaces.api.deps import EngineDep
from equimind.interfaces.api.errors import BODY_ERRORS, ERRORS, ApiError, invalid
from equimind.interfaces.api.models import (
    DOC_ID_PATTERN,
    FORM_PATTERN,
    MAX_CONTEXT,
    MAX_SPAN,
    TICKER_PATTERN,
    CitationCheckOut,
    CitationRequest,
    SearchRequest,
)
from equimind.models import DocumentRef, FilterSpec, SearchResult

router = APIRouter(prefix="/api/v1", tags=["evidence"])


@router.post("/search", responses=BODY_ERRORS, response_model=SearchResult)
def search(body: SearchRequest, engine: EngineDep) -> Response:
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
    return Response(result.model_dump_json(), media_type="application/json")  # validated already: serialise once


@router.get("/documents")
def documents(engine: EngineDep,
              ticker: Annotated[str | None, Query(pattern=TICKER_PATTERN)] = None,
              form: Annotated[str | None, Query(pattern=FORM_PATTERN)] = None) -> list[DocumentRef]:
    """Indexed documents (metadata only, newest first), optionally for one ticker and form."""
    flt = FilterSpec(tickers=(ticker.upper(),) if ticker else (), forms=(form.upper(),) if form else ())
    return engine.services.docstore.list_documents(flt, status="indexed")


@router.get("/documents/{doc_id}", responses=ERRORS)
def document_span(engine: EngineDep, doc_id: Annotated[str, PathParam(pattern=DOC_ID_PATTERN)],
                  start: Annotated[int, Query(ge=0, le=100_000_000)],
                  end: Annotated[int, Query(ge=1, le=100_000_000)],
                  context: Annotated[int, Query(ge=0, le=MAX_CONTEXT)] = 400) -> Passage:
    """A cited span [start, end) of a document's canonical text, with ``context`` characters either side."""
    if end <= start:
        raise invalid(("query", "end"), f"end ({end}) must be greater than start ({start})")
    if end - start > MAX_SPAN:
        raise invalid(("query", "end"), f"the span may be at most {MAX_SPAN} characters, got {end - start}")
    return engine.passage(doc_id, start, end, context=context)


@router.post("/citations/verify", responses=BODY_ERRORS)
def verify_citation(body: CitationRequest, engine: EngineDep) -> CitationCheckOut:
    """Find a quote in a document (exact, then whitespace/case-normalised; no LLM)."""
    return CitationCheckOut.of(engine.verify_citation(body.doc_id, body.quote))
