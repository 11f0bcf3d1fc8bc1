"""One LLM call's failure classes, its accounting record and the data quoting every prompt uses (the debate's
analyst and the answer path's LLM answerer both classify their failures here).

Evidence goes to the model as quoted JSON data inside tags (``<`` and ``>`` escaped so no passage can close a tag);
the agents have no function tools, only their structured output. Every failure is classified (rate limited, timeout,
refused, malformed output, auth, unavailable) and raised as an ``LLMCallError`` carrying the call's record, so the
debate can fall back visibly or re-raise, never silently.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from equimind.core.errors import ParseError, RateLimitedError, SourceError

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

logger = logging.getLogger(__name__)


class LLMFailure(StrEnum):
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    MALFORMED = "malformed_output"
    AUTH = "auth"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class CallRecord:
    """Accounting for one agent call (also recorded for failed calls)."""

    agent: str
    round: int
    model: str
    status: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    ms: float
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMCallError(SourceError):
    """An LLM call failed after its bounded retries. ``failure`` says how; ``record`` holds its accounting."""

    def __init__(self, failure: LLMFailure, message: str, record: CallRecord) -> None:
        super().__init__(message)
        self.failure = failure
        self.record = record


class LLMRateLimitedError(LLMCallError, RateLimitedError):
    """The provider answered 429 on every attempt."""


class LLMOutputError(LLMCallError, ParseError):
    """The model's structured output never validated (malformed JSON or schema violations)."""


def _last_text(messages: Sequence[ModelMessage]) -> str:
    from pydantic_ai.messages import ModelResponse, TextPart

    for m in reversed(messages):
        if isinstance(m, ModelResponse):
            texts = [p.content for p in m.parts if isinstance(p, TextPart)]
            if texts:
                return " ".join(texts)
    return ""


def _brief(exc: BaseException) -> str:
    """The exception's own message without a response body dump, at most 240 characters."""
    text = str(getattr(exc, "message", None) or exc)
    return text if len(text) <= 240 else text[:239] + "…"


def classify(exc: BaseException, messages: Sequence[ModelMessage]) -> tuple[LLMFailure, str]:
    """Map a pydantic-ai / SDK exception to a failure kind and a message that names the fix."""
    from pydantic_ai import exceptions as ex

    brief = _brief(exc)
    if isinstance(exc, ex.ModelRateLimitError | ex.ModelQuotaExceededError) or (
            isinstance(exc, ex.ModelHTTPError) and exc.status_code == 429):
        return LLMFailure.RATE_LIMITED, f"rate limited (429) after retries: {brief}; retry later or lower the load"
    if isinstance(exc, ex.ModelRequestTimeout | ex.ModelTimeoutError | TimeoutError):
        return LLMFailure.TIMEOUT, f"timed out: {brief}; raise EQUIMIND_LLM_TIMEOUT_S or try later"
    if isinstance(exc, ex.ContentFilterError):
        return LLMFailure.REFUSED, f"the model refused: {brief}"
    if isinstance(exc, ex.ModelAuthenticationError):
        return LLMFailure.AUTH, f"authentication failed: {brief}; check the API key"
    if isinstance(exc, ex.UnexpectedModelBehavior):
        prose = _last_text(messages)
        if prose:
            return LLMFailure.REFUSED, f"no structured output; the model replied in prose: {prose[:160]!r}"
        return LLMFailure.MALFORMED, f"structured output never validated: {brief}"
    return LLMFailure.UNAVAILABLE, f"provider error: {type(exc).__name__}: {brief}"


def usage_of(messages: Sequence[ModelMessage]) -> tuple[int, int, int, float | None]:
    from pydantic_ai.messages import ModelResponse

    reqs = inp = out = 0
    cost: float | None = None
    for m in messages:
        if isinstance(m, ModelResponse):
            reqs += 1
            inp += m.usage.input_tokens
            out += m.usage.output_tokens
            if m.usage.cost is not None:
                cost = (cost or 0.0) + float(m.usage.cost)
    return reqs, inp, out, cost


def as_data(value: Any) -> str:
    """JSON with '<' and '>' escaped, so quoted text can never open or close a prompt tag."""
    return json.dumps(value, ensure_ascii=False, indent=1, default=str).replace("<", "\\u003c").replace(">",
                                                                                                    "\\u003e")


