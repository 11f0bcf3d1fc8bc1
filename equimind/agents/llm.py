"""The LLM analyst: bull, bear and judge agents on pydantic-ai with structured outputs and per-call accounting.

Evidence goes to the model as quoted JSON data inside tags (``<`` and ``>`` escaped so no passage can close a tag);
the agents have no function tools, only their structured output. Every failure is classified (rate limited, timeout,
refused, malformed output, auth, unavailable) and raised as an ``LLMCallError`` carrying the call's record, so the
debate can fall back visibly or re-raise, never silently.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from equimind.agents.prompting import Prompt, load_prompts
from equimind.agents.providers import LLMConfig, build_model, model_settings, parse_provider
from equimind.agents.schemas import CaseOutput, JudgeOutput
from equimind.config import ProviderName, Settings
from equimind.errors import ParseError, RateLimitedError, SourceError
from equimind.models import Speaker

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

logger = logging.getLogger(__name__)
OutT = TypeVar("OutT", CaseOutput, JudgeOutput)


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


def _usage_of(messages: Sequence[ModelMessage]) -> tuple[int, int, int, float | None]:
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


class LLMAnalyst:
    """Bull, bear and judge agents over one pydantic-ai Model."""

    def __init__(self, model: Model, *, label: str, settings: ModelSettings | None = None, output_retries: int = 1,
                 prompts: dict[str, Prompt] | None = None) -> None:
        from pydantic_ai import Agent, AgentRetries

        if output_retries < 0:
            raise ValueError("output_retries must be >= 0")
        self.label = label
        self.prompts = prompts or load_prompts()
        retries: AgentRetries = {"output": output_retries, "tools": 0}
        self._case_agents: dict[Speaker, Agent[None, CaseOutput]] = {
            side: Agent(model, output_type=CaseOutput, instructions=self.prompts[side.value].text, name=side.value,
                        model_settings=settings, retries=retries)
            for side in (Speaker.BULL, Speaker.BEAR)}
        self._judge_agent: Agent[None, JudgeOutput] = Agent(
            model, output_type=JudgeOutput, instructions=self.prompts["judge"].text, name="judge",
            model_settings=settings, retries=retries)

    @classmethod
    def from_config(cls, config: LLMConfig) -> LLMAnalyst:
        return cls(build_model(config), label=config.label, settings=model_settings(config),
                   output_retries=config.retries)

    @classmethod
    def from_settings(cls, settings: Settings, *, api_key: str | None, provider: str | None = None,
                      model: str | None = None) -> LLMAnalyst | None:
        """None for the offline provider; otherwise the analyst (ConfigError when a needed key is missing)."""

        if (parse_provider(provider) if provider else settings.provider) is ProviderName.OFFLINE:
            return None
        return cls.from_config(LLMConfig.from_settings(settings, api_key=api_key, provider=provider, model=model))

    @property
    def prompt_hashes(self) -> dict[str, str]:
        return {p.key: p.sha256 for p in self.prompts.values()}

    async def argue(self, speaker: Speaker, user_prompt: str, round_no: int) -> tuple[CaseOutput, CallRecord]:
        return await self._run(self._case_agents[speaker], speaker.value, round_no, user_prompt)

    async def judge(self, user_prompt: str) -> tuple[JudgeOutput, CallRecord]:
        return await self._run(self._judge_agent, "judge", 0, user_prompt)

    async def _run(self, agent: Agent[None, OutT], name: str, round_no: int, prompt: str) -> tuple[OutT, CallRecord]:
        from pydantic_ai import capture_run_messages

        t0 = time.perf_counter()
        with capture_run_messages() as messages:
            try:
                result = await agent.run(prompt)
            except Exception as exc:  # classified below; nothing is swallowed
                failure, message = classify(exc, messages)
                reqs, inp, out, cost = _usage_of(messages)
                record = CallRecord(name, round_no, self.label, failure.value, reqs, inp, out, cost,
                                    round((time.perf_counter() - t0) * 1000, 1), message)
                logger.warning("LLM %s call (round %d) failed: %s", name, round_no, message)
                err_cls = {LLMFailure.RATE_LIMITED: LLMRateLimitedError,
                           LLMFailure.MALFORMED: LLMOutputError}.get(failure, LLMCallError)
                raise err_cls(failure, f"{self.label} {name}: {message}", record) from exc
        usage = result.usage
        record = CallRecord(name, round_no, self.label, "ok", usage.requests, usage.input_tokens,
                            usage.output_tokens, float(usage.cost) if usage.cost is not None else None,
                            round((time.perf_counter() - t0) * 1000, 1))
        return result.output, record


# ---- briefs: what the model reads ------------------------------------------------------------------------------


def as_data(value: Any) -> str:
    """JSON with '<' and '>' escaped, so quoted text can never open or close a prompt tag."""
    return json.dumps(value, ensure_ascii=False, indent=1, default=str).replace("<", "\\u003c").replace(">",
                                                                                                    "\\u003e")


def case_brief(*, ticker: str, question: str, as_of: date, phase: str, evidence: list[dict[str, Any]],
               figures: list[dict[str, Any]], own: list[dict[str, Any]], opponent: list[dict[str, Any]]) -> str:
    return "\n".join([
        f"Ticker: {ticker}. As-of date: {as_of.isoformat()}. Phase: {phase}.",
        f"<question>{as_data(question)}</question>",
        f"<evidence>\n{as_data(evidence)}\n</evidence>",
        f"<figures>\n{as_data(figures)}\n</figures>",
        f"<your_claims>\n{as_data(own)}\n</your_claims>",
        f"<opponent_claims>\n{as_data(opponent)}\n</opponent_claims>",
        "Return your claims as the structured output. Quote verbatim; cite evidence_id or figure_ids.",
    ])


def judge_brief(*, ticker: str, question: str, as_of: date, claims: list[dict[str, Any]],
                verdict: dict[str, Any]) -> str:
    return "\n".join([
        f"Ticker: {ticker}. As-of date: {as_of.isoformat()}.",
        f"<question>{as_data(question)}</question>",
        f"<claims>\n{as_data(claims)}\n</claims>",
        f"<rule_verdict>\n{as_data(verdict)}\n</rule_verdict>",
        "Return the structured synthesis.",
    ])
