"""Progress events of a research run (streamed by the API as Server-Sent Events, printed by the CLI)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

log = logging.getLogger("equimind.research")


class ResearchStage(StrEnum):
    SEARCH = "search"
    CRITIC = "critic"
    FETCH = "fetch"
    REWRITE = "rewrite"
    FIGURES = "figures"
    CURATE = "curate"
    COMPRESS = "compress"
    ANSWERABILITY = "answerability"
    ANSWER = "answer"
    DEBATE = "debate"
    DONE = "done"


class ResearchEvent(BaseModel):
    """One progress event of a research run."""

    stage: ResearchStage
    iteration: int | None = None
    message: str
    data: dict[str, Any] = Field(default_factory=dict)


EventSink = Callable[[ResearchEvent], None]


class Emitter:
    """Logs every event and hands it to the caller's sink, if any."""

    def __init__(self, sink: EventSink | None) -> None:
        self._sink = sink

    def __call__(self, stage: ResearchStage, message: str, iteration: int | None = None, **data: Any) -> None:
        log.info("[%s] %s", stage.value, message)
        if self._sink is not None:
            self._sink(ResearchEvent(stage=stage, iteration=iteration, message=message, data=data))
