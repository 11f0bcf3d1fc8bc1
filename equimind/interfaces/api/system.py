"""``GET /api/v1/health``: component status, and which worker process answered."""

from __future__ import annotations

import os

from fastapi import APIRouter
from pydantic import BaseModel

from equimind.interfaces import traced as traced_models
from equimind.interfaces.api.deps import EngineDep, RequestIdDep
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1")


class WorkerInfo(BaseModel):
    pid: int


class TracedHealth(traced_models.TracedHealth):
    """The traced health plus ``worker``: the API process that answered (``equimind serve --workers N`` runs N). Same
    class name, so the OpenAPI component stays ``TracedHealth``; the MCP tool returns the base class."""

    worker: WorkerInfo


@router.get("/health", tags=["system"])
def health(engine: EngineDep, rid: RequestIdDep) -> TracedHealth:
    """Component status: store counts, embedder and its stamp, reranker, LLM provider, vector backend, snapshot or
    live mode, version, and the pid of the worker process that answered."""
    base = traced(traced_models.TracedHealth, engine.health(), engine.trace(rid))
    values = {name: getattr(base, name) for name in traced_models.TracedHealth.model_fields}
    return TracedHealth.model_construct(_fields_set={*base.model_fields_set, "worker"}, **values,
                                        worker=WorkerInfo(pid=os.getpid()))
