"""LLM structured output for the agents: validate → one retry → fallback (used by the critic and the rewriter)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from pydantic_ai.models import Model

logger = logging.getLogger(__name__)

OutT = TypeVar("OutT", bound=BaseModel)


@dataclass(frozen=True)
class StructuredOutcome:
    output: BaseModel | None
    log: tuple[str, ...]


def prompt_sha256(instructions: str) -> str:
    return hashlib.sha256(instructions.encode("utf-8")).hexdigest()


def run_structured(model: Model, output_type: type[OutT], instructions: str, prompt: str,
                   check: Callable[[OutT], str | None] | None, what: str) -> StructuredOutcome:
    """Run ``model`` for a validated ``output_type``: one retry on invalid output, ``None`` output on failure."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior

    agent = Agent(model, output_type=output_type, instructions=instructions, retries={"output": 1})
    if check is not None:
        def _validate(out: OutT) -> OutT:
            problem = check(out)
            if problem:
                raise ModelRetry(problem)
            return out
        agent.output_validator(_validate)
    try:
        result = agent.run_sync(prompt)
    except UnexpectedModelBehavior as exc:
        msg = f"LLM {what} output invalid after 1 retry ({exc}); fell back to the deterministic {what}"
        logger.warning(msg)
        return StructuredOutcome(None, (msg,))
    except ModelAPIError as exc:
        msg = f"LLM {what} call failed ({exc}); fell back to the deterministic {what}"
        logger.warning(msg)
        return StructuredOutcome(None, (msg,))
    retried = " after 1 retry" if result.usage.requests > 1 else ""
    return StructuredOutcome(result.output, (f"LLM {what} output validated{retried}",))

