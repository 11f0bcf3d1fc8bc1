"""``POST /api/v1/research`` (the full run) and ``/research/stream`` (the same run as Server-Sent Events)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from sse_starlette import EventSourceResponse, ServerSentEvent

from equimind.engine import EquiMindEngine
from equimind.interfaces.api.deps import EngineDep, checked_ticker, engine_for
from equimind.interfaces.api.errors import BODY_ERRORS, stream_error
from equimind.interfaces.api.models import ResearchRequest
from equimind.models import Recommendation
from equimind.research.events import ResearchEvent

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/v1", tags=["research"])

STREAM_DOC = ("text/event-stream. `event: stage` — data is a ResearchEvent {stage, iteration, message, data}; "
              "`event: recommendation` — data is the Recommendation; `event: error` — data is {status, detail}.")


@router.post("/research", responses=BODY_ERRORS)
def research(body: ResearchRequest, engine: EngineDep) -> Recommendation:
    """The full run: agentic retrieval, compression, Bull/Bear/Judge debate, cited recommendation."""
    ticker = checked_ticker(engine, body.ticker)
    return engine_for(engine, body.provider).research(ticker, body.question, body.as_of)


@router.post("/research/stream", response_class=EventSourceResponse,
             responses={**BODY_ERRORS, 200: {"content": {"text/event-stream": {}}, "description": STREAM_DOC}})
async def research_stream(body: ResearchRequest, engine: EngineDep) -> EventSourceResponse:
    """The research run as Server-Sent Events: one ``stage`` event per stage and iteration, then the
    ``recommendation`` (or an ``error`` event)."""
    ticker = await run_in_threadpool(checked_ticker, engine, body.ticker)
    runner = engine_for(engine, body.provider)
    return EventSourceResponse(_research_events(runner, ticker, body), ping=15)


async def _research_events(engine: EquiMindEngine, ticker: str, body: ResearchRequest
                           ) -> AsyncIterator[ServerSentEvent]:
    """Runs the (synchronous) research in a worker thread and relays its events as they happen."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ServerSentEvent | None] = asyncio.Queue()

    def put(item: ServerSentEvent | None) -> None:
        with contextlib.suppress(RuntimeError):  # RuntimeError: the loop is closed (server shutting down)
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def on_event(event: ResearchEvent) -> None:
        put(ServerSentEvent(data=event.model_dump_json(), event="stage"))

    def work() -> None:
        try:
            rec = engine.research(ticker, body.question, body.as_of, on_event=on_event)
            put(ServerSentEvent(data=rec.model_dump_json(), event="recommendation"))
        except Exception as exc:
            put(ServerSentEvent(data=json.dumps(stream_error(exc)), event="error"))
        finally:
            put(None)

    worker = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while (item := await queue.get()) is not None:
            yield item
    finally:
        if not worker.done():
            log.info("research stream for %s closed by the client; the run finishes in the background", ticker)
