"""``GET /api/v1/memory/{ticker}``: what EquiMind remembers about a ticker."""

from __future__ import annotations

from fastapi import APIRouter

from equimind.interfaces.api.deps import AsOfDep, EngineDep, RequestIdDep, TickerDep
from equimind.interfaces.api.errors import ERRORS
from equimind.interfaces.traced import TracedMemory
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["research"])


@router.get("/memory/{ticker}", responses=ERRORS)
def memory(ticker: TickerDep, engine: EngineDep, rid: RequestIdDep, as_of: AsOfDep = None) -> TracedMemory:
    """What EquiMind remembers about a ticker: dated evidence, period summaries, past research runs."""
    return traced(TracedMemory, engine.memory(ticker, as_of), engine.trace(rid))
