"""``POST /api/v1/research`` (the full run), ``POST /api/v1/ask`` (a direct, cited answer) and their ``/stream``
twins (the same runs as Server-Sent Events)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from sse_starlette import EventSourceResponse, ServerSentEvent

from equimind.answer.record import Answer
from equimind.app.engine import EquiMindEngine
from equimind.interfaces.api.deps import EngineDep, RequestIdDep, checked_ticker, engine_for
from equimind.interfaces.api.errors import BODY_ERRORS, stream_error
from equimind.interfaces.api.models import AskRequest, ResearchRequest
from equimind.interfaces.traced import TracedAnswer, TracedRecommendation
from equimind.research.events import EventSink, ResearchEvent
from equimind.security.trace import traced

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/v1", tags=["research"])

STREAM_DOC = ("text/event-stream. `event: stage` — data is a ResearchEvent {stage, iteration, message, data}; "
              "`event: recommendation` — data is the Recommendation with its `trace`; `event: error` — data is "
              "{status, detail, request_id}.")
Traced = TracedRecommendation | TracedAnswer


@router.post("/research", responses=BODY_ERRORS)
def research(body: ResearchRequest, engine: EngineDep, rid: RequestIdDep) -> TracedRecommendation:
    """The full run: agentic retrieval, compression, Bull/Bear/Judge debate, cited recommendation."""
    ticker = checked_ticker(engine, body.ticker)
    runner = engine_for(engine, body.provider)
    rec = runner.research(ticker, body.question, body.as_of)
    return traced(TracedRecommendation, rec, runner.trace(rid))  # after the run: fetched documents are counted


@router.post("/research/stream", response_class=EventSourceResponse,
             responses={**BODY_ERRORS, 200: {"content": {"text/event-stream": {}}, "description": STREAM_DOC}})
async def research_stream(body: ResearchRequest, engine: EngineDep, rid: RequestIdDep) -> EventSourceResponse:
    """The research run as Server-Sent Events: one ``stage`` event per stage and iteration, then the
    ``recommendation`` (or an ``error`` event)."""
    ticker = await run_in_threadpool(checked_ticker, engine, body.ticker)
    runner = engine_for(engine, body.provider)

    def run(on_event: EventSink) -> Traced:
        rec = runner.research(ticker, body.question, body.as_of, on_event=on_event)
        return traced(TracedRecommendation, rec, runner.trace(rid))

    return EventSourceResponse(_events(run, "recommendation", ticker, rid), ping=15)


ASK_STREAM_DOC = ("text/event-stream. `event: stage` — data is a ResearchEvent; `event: answer` — data is the "
                  "Answer with its `trace`; `event: error` — data is {status, detail, request_id}.")


@router.post("/ask", responses=BODY_ERRORS)
def ask(body: AskRequest, engine: EngineDep, rid: RequestIdDep) -> TracedAnswer:
    """A direct answer to a specific question, every sentence backed by verified filing spans or XBRL facts, or a
    refusal saying what was searched and what is missing. The ticker may be omitted: the question names it."""
    ticker = checked_ticker(engine, body.ticker) if body.ticker else None
    return _traced_answer(engine, engine.ask(body.question, ticker, body.as_of), rid)


@router.post("/ask/stream", response_class=EventSourceResponse,
             responses={**BODY_ERRORS, 200: {"content": {"text/event-stream": {}}, "description": ASK_STREAM_DOC}})
async def ask_stream(body: AskRequest, engine: EngineDep, rid: RequestIdDep) -> EventSourceResponse:
    """The ask as Server-Sent Events: one ``stage`` event per stage and iteration, then the ``answer``."""
    ticker = await run_in_threadpool(checked_ticker, engine, body.ticker) if body.ticker else None

    def run(on_event: EventSink) -> Traced:
        return _traced_answer(engine, engine.ask(body.question, ticker, body.as_of, on_event=on_event), rid)

    return EventSourceResponse(_events(run, "answer", ticker or "the question's company", rid), ping=15)


def _traced_answer(engine: EquiMindEngine, answer: Answer, rid: str) -> TracedAnswer:
    return traced(TracedAnswer, answer, engine.trace(rid))


async def _events(run: Callable[[EventSink], Traced], final: str, label: str, rid: str
                  ) -> AsyncIterator[ServerSentEvent]:
    """Runs the (synchronous) run in a worker thread and relays its events as they happen, then ``final``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[ServerSentEvent | None] = asyncio.Queue()

    def put(item: ServerSentEvent | None) -> None:
        with contextlib.suppress(RuntimeError):  # RuntimeError: the loop is closed (server shutting down)
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def on_event(event: ResearchEvent) -> None:
        put(ServerSentEvent(data=event.model_dump_json(), event="stage"))

    def work() -> None:
        try:
            result = run(on_event)
            put(ServerSentEvent(data=result.model_dump_json(), event=final))
        except Exception as exc:
            put(ServerSentEvent(data=json.dumps({**stream_error(exc), "request_id": rid}), event="error"))
        finally:
            put(None)

    worker = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while (item := await queue.get()) is not None:
            yield item
    finally:
        if not worker.done():
            log.info("stream for %s closed by the client; the run finishes in the background", label)
