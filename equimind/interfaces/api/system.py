"""``GET /api/v1/health``: component status."""

from __future__ import annotations

from fastapi import APIRouter

from equimind.engine import Health
from equimind.interfaces.api.deps import EngineDep

router = APIRouter(prefix="/api/v1")


@router.get("/health", tags=["system"])
def health(engine: EngineDep) -> Health:
    """Component status: store counts, embedder and reranker, LLM provider, snapshot or live mode."""
    return engine.health()
