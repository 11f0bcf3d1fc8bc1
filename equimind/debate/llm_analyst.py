"""The LLM analyst: bull, bear and judge agents on pydantic-ai with structured outputs and per-call accounting.

Evidence goes to the model as quoted JSON data inside tags (``<`` and ``>`` escaped so no passage can close a tag);
the agents have no function tools, only their structured output. Every failure is classified (rate limited, timeout,
refused, malformed output, auth, unavailable) and raised as an ``LLMCallError`` carrying the call's record, so the
debate can fall back visibly or re-raise, never silently.
"""

from __future__ import annotations

import logging
import time
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

from equimind.core.config import ProviderName, Settings
from equimind.core.research import Speaker
from equimind.debate.schemas import CaseOutput, JudgeOutput
from equimind.llm.calls import (
    CallRecord,
    LLMCallError,
    LLMFailure,
    LLMOutputError,
    LLMRateLimitedError,
    as_data,
    classify,
    usage_of,
)
from equimind.llm.prompting import Prompt, load_prompts
from equimind.llm.providers import LLMConfig, build_model, model_settings, parse_provider

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

logger = logging.getLogger(__name__)
OutT = TypeVar("OutT", CaseOutput, JudgeOutput)


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
                reqs, inp, out, cost = usage_of(messages)
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
