"""``GET /api/v1/memory/{ticker}``: what EquiMind remembers about a ticker."""

from __future__ import annotations

from fastapi import APIRouter

from equimind.interfaces.api.deps import AsOfDep, EngineDep, TickerDep
from equimind.interfaces.api.errors import ERRORS
from equimind.memory.records import MemorySnapshot

router = APIRouter(prefix="/api/v1", tags=["research"])


@router.get("/memory/{ticker}", responses=ERRORS)
def memory(ticker: TickerDep, engine: EngineDep, as_of: AsOfDep = None) -> MemorySnapshot:
    """What EquiMind remembers about a ticker: dated evidence, period summaries, past research runs."""
    return engine.memory(ticker, as_of)
