"""Structured outputs the LLM agents must return (validated by pydantic-ai; invalid output is retried, then fails).

Deliberately absent: a claim strength and a final rating. Strength comes from the cited evidence and the rating from
the judge rule over verified claims (docs/decisions/0003-offline-judge-rule.md), so neither can be set by the model,
nor by text planted in a filing that the model might obey.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from equimind.core.research import Rating
from equimind.debate.records import Theme


class QuotedEvidence(BaseModel):
    """A verbatim quote from one evidence item."""

    model_config = ConfigDict(extra="forbid")

    evidence_id: str = Field(description="The id of the evidence item quoted, e.g. 'E3'.")
    quote: str = Field(min_length=1, max_length=1500,
                       description="Copied verbatim from that item's text: one or two whole sentences.")


class ArguedClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=800, description="The claim in one or two sentences.")
    theme: Theme = Field(description="What the claim is about.")
    citations: list[QuotedEvidence] = Field(default_factory=list, max_length=4)
    figure_ids: list[str] = Field(default_factory=list, max_length=4,
                                  description="Ids of figures the claim relies on, exactly as given.")
    rebuts: str | None = Field(default=None, description="In a rebuttal round: the opponent claim id answered.")


class CaseOutput(BaseModel):
    """One side's claims for one round."""

    model_config = ConfigDict(extra="forbid")

    claims: list[ArguedClaim] = Field(default_factory=list, max_length=10)


class JudgeOutput(BaseModel):
    """The judge's synthesis. Its proposed rating is advisory: the rule over verified claims sets the rating."""

    model_config = ConfigDict(extra="forbid")

    winning_side: Literal["bull", "bear", "balanced"]
    proposed_rating: Rating
    winning_thesis: str = Field(min_length=1, max_length=1200)
    key_risk_ids: list[str] = Field(default_factory=list, max_length=6, description="Ids of bear claims.")
    key_catalyst_ids: list[str] = Field(default_factory=list, max_length=6, description="Ids of bull claims.")
    contradictions: list[str] = Field(default_factory=list, max_length=10,
                                      description="One line per contradiction and how it is resolved.")
    reasoning: list[str] = Field(default_factory=list, max_length=12)
