"""``GET /api/v1/health``: component status."""

from __future__ import annotations

from fastapi import APIRouter

from equimind.interfaces.api.deps import EngineDep, RequestIdDep
from equimind.interfaces.traced import TracedHealth
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1")


@router.get("/health", tags=["system"])
def health(engine: EngineDep, rid: RequestIdDep) -> TracedHealth:
    """Component status: store counts, embedder and its stamp, reranker, LLM provider, vector backend, snapshot or
    live mode, version."""
    return traced(TracedHealth, engine.health(), engine.trace(rid))
