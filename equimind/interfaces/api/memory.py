"""``GET /api/v1/memory/{ticker}``: what EquiMind remembers about a ticker; ``GET /api/v1/ledger/{ticker}``: its
rating ledger (every rated research run and what changed from the one before)."""

from __future__ import annotations

from fastapi import APIRouter

from equimind.core.errors import NotFoundError
from equimind.interfaces.api.deps import AsOfDep, EngineDep, RequestIdDep, TickerDep
from equimind.interfaces.api.errors import ERRORS, ApiError
from equimind.interfaces.traced import TracedLedger, TracedMemory
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["research"])


@router.get("/memory/{ticker}", responses=ERRORS)
def memory(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedMemory:
    """What EquiMind remembers about a ticker: dated evidence, period summaries, past research runs."""
    return traced(TracedMemory, engine.memory(ticker, as_of), engine.trace(rid))


@router.get("/ledger/{ticker}", responses=ERRORS)
def ledger(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedLedger:
    """The rating ledger of a ticker: each rated research run (as-of date, rating, conviction, the evidence and
    figures it used) with what changed from the run before; none dated after ``as_of``. 404 when nothing is
    recorded yet."""
    try:
        history = engine.services.memory.ledger_history(ticker, as_of)
    except NotFoundError as exc:
        hint = f"run POST /api/v1/research for {ticker} first (or choose a later as_of)"
        raise ApiError(404, str(exc), hint) from exc
    return traced(TracedLedger, history, engine.trace(rid))
