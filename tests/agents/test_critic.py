"""RAG critic: deterministic rules, sufficiency transitions, as-of, and the LLM validate → retry → fallback path."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from equimind.core.documents import Source
from equimind.core.errors import ConfigError
from equimind.core.search import EvidenceNode
from equimind.lexicon.aspects import CORE_ASPECTS, Aspect
from equimind.research.critic import (
    NO_EVIDENCE,
    AspectStatus,
    CriticMode,
    DataKind,
    Dimension,
    DimensionScore,
    LLMCriticOutput,
    RAGCriticAgent,
    find_contradictions,
)

AS_OF = date(2024, 6, 30)
QUESTION = "Is NVIDIA's data-center growth sustainable?"


def node(nid: str, text: str, *, form: str = "10-K", filed: date | None = date(2024, 2, 21),
         section: str | None = None, source: Source = Source.SEC_EDGAR, doc: str | None = None) -> EvidenceNode:
    return EvidenceNode(id=nid, doc_id=doc or f"doc-{nid}", start=0, end=len(text), text=text, ticker="NVDA",
                        company="NVIDIA", source=source, form=form, filed_at=filed, section=section, score=1.0,
                        doc_sha256="x")


RISK = node("risk", "Our data center revenue depends on a few customers; this concentration and new export controls "
                    "could adversely affect our results. Competition is intense.", section="Item 1A. Risk Factors",
            doc="10k")
MDNA = node("mdna", "Revenue for fiscal year 2024 was $60.9 billion, up 126% from a year ago. Data Center revenue "
                    "was $47.5 billion. Gross margin increased to 72.7%.",
            section="Item 7. Management's Discussion and Analysis", doc="10k")
PRICES = node("px", "NVDA closed at $123.54. The 50-day moving average is $110.20 and the 14-day RSI is 58.3.",
              form="prices", filed=date(2024, 6, 28), source=Source.YAHOO_FINANCE)
TENQ = node("q1", "First quarter revenue was $26.0 billion, up 18% from the previous quarter, driven by data center.",
            form="10-Q", filed=date(2024, 5, 29), section="Item 2. Management's Discussion and Analysis")


def critic(model: Any = None) -> RAGCriticAgent:
    return RAGCriticAgent(model)


def test_empty_evidence_is_insufficient_with_every_aspect_missing() -> None:
    v = critic().run(QUESTION, [], AS_OF, available=["prices"])
    assert v.sufficient is False
    assert v.missing == list(CORE_ASPECTS)  # the web-activity aspect is required only when asked
    assert all(s.score == 0.0 and s.reason == NO_EVIDENCE for s in v.scores)
    assert all(a.reason == NO_EVIDENCE for a in v.aspects)
    assert NO_EVIDENCE in v.log
    assert {n.aspect: n.kinds for n in v.needs} == {
        Aspect.FUNDAMENTALS: [DataKind.COMPANYFACTS, DataKind.FORM_10K],
        Aspect.RISKS: [DataKind.FORM_10K, DataKind.FORM_10Q],
        Aspect.VALUATION_TECHNICALS: [DataKind.PRICES, DataKind.COMPANYFACTS],
        Aspect.RECENT_EVENTS: [DataKind.FORM_10Q, DataKind.FORM_8K, DataKind.NEWS],
    }


def test_filings_only_cover_risks_and_fundamentals_but_not_valuation() -> None:
    v = critic().run(QUESTION, [RISK, MDNA], AS_OF, exclude_terms=["NVDA", "NVIDIA"])
    covered = {a.aspect for a in v.aspects if a.covered}
    assert covered == {Aspect.FUNDAMENTALS, Aspect.RISKS}
    assert v.missing == [Aspect.VALUATION_TECHNICALS, Aspect.RECENT_EVENTS]
    assert v.sufficient is False
    assert v.score(Dimension.SOURCE_DIVERSITY) == pytest.approx(1 / 3, abs=1e-4)
    # coverage = 0.8 * 2/4 + 0.2 * (topic terms data, center found: 2/2) = 0.6
    assert v.coverage == pytest.approx(0.6)
    assert "Item 1A" in next(a.reason for a in v.aspects if a.aspect is Aspect.RISKS)
    assert next(n for n in v.needs if n.aspect is Aspect.VALUATION_TECHNICALS).kinds[0] is DataKind.PRICES


def test_adding_prices_and_recent_10q_makes_it_sufficient() -> None:
    v = critic().run(QUESTION, [RISK, MDNA, PRICES, TENQ], AS_OF, exclude_terms=["NVDA", "NVIDIA"])
    assert v.missing == []
    # ages 2, 32, 130, 130 -> newest 2, median 81: 0.5*0.5^(2/90) + 0.5*0.5^(81/90) = 0.76030
    assert v.score(Dimension.RECENCY) == pytest.approx(0.7603, abs=1e-4)
    assert v.score(Dimension.SOURCE_DIVERSITY) == pytest.approx(2 / 3, abs=1e-4)
    assert v.score(Dimension.SPECIFICITY) == 0.75  # the risk-factor passage has no number
    assert v.score(Dimension.CONSISTENCY) == 1.0
    # 0.3*1 + 0.2*0.7603 + 0.15*0.6667 + 0.15*0.75 + 0.2*1 = 0.8646
    assert v.overall == pytest.approx(0.8646, abs=1e-3)
    assert v.sufficient is True
    assert v.mode is CriticMode.DETERMINISTIC


def test_available_figures_cover_valuation_but_not_recent_events() -> None:
    v = critic().run(QUESTION, [RISK, MDNA], AS_OF, available=["prices", "rsi_14"])
    assert v.missing == [Aspect.RECENT_EVENTS]
    assert v.score(Dimension.SOURCE_DIVERSITY) == pytest.approx(2 / 3, abs=1e-4)


def test_stale_evidence_fails_recency_and_recent_events() -> None:
    later = date(2026, 6, 30)
    v = critic().run(QUESTION, [RISK, MDNA, PRICES, TENQ], later)
    assert Aspect.RECENT_EVENTS in v.missing
    assert v.score(Dimension.RECENCY) < 0.2
    assert v.sufficient is False


def test_planted_future_nodes_are_ignored() -> None:
    future_px = node("fpx", "NVDA closed at $140.00; RSI 71.2 and moving average $120.5.", form="prices",
                     filed=date(2024, 7, 15), source=Source.YAHOO_FINANCE)
    future_q = node("fq", "Second quarter revenue was $30.0 billion.", form="10-Q", filed=date(2024, 8, 28))
    v = critic().run(QUESTION, [RISK, MDNA, future_px, future_q], AS_OF)
    assert v.missing == [Aspect.VALUATION_TECHNICALS, Aspect.RECENT_EVENTS]
    assert any("2 node(s) dated after as-of" in line for line in v.log)
    assert all("fpx" not in a.evidence_ids and "fq" not in a.evidence_ids for a in v.aspects)
    only_future = critic().run(QUESTION, [future_px], AS_OF)
    assert only_future.missing == list(CORE_ASPECTS) and only_future.sufficient is False


def test_cross_document_contradiction_lowers_consistency() -> None:
    up = node("up", "Revenue increased in fiscal 2024 to $60.9 billion.", doc="a")
    down = node("down", "Revenue decreased in fiscal 2024 because of weaker demand.", doc="b")
    same_doc = node("down2", "Revenue decreased in fiscal 2024 in the Gaming segment.", doc="a")
    assert find_contradictions([up, same_doc]) == []
    assert find_contradictions([up, down]) == ["revenue 2024: rose in 1 document(s), fell in 1"]
    v = critic().run(QUESTION, [up, down], AS_OF)
    assert v.score(Dimension.CONSISTENCY) == 0.75
    assert v.contradictions and "revenue 2024" in v.contradictions[0]


def test_claim_period_is_the_first_year_named() -> None:
    # measured on NVIDIA's FY2026 10-Q vs FY2025 10-K: a comparison sentence is not a contradiction
    q = node("q", "Gross margins decreased to 72.4% for the second quarter of fiscal year 2026 compared to 75.1% for "
                  "the second quarter of fiscal year 2025, as our Blackwell revenue consists primarily of systems.",
             doc="10q")
    k = node("k", "Gross margin increased to 75.0% in fiscal year 2025 from 72.7% in fiscal year 2024.", doc="10k")
    assert find_contradictions([q, k]) == []
    k26 = node("k26", "Gross margin increased to 73.0% in fiscal year 2026.", doc="other")
    assert find_contradictions([q, k26]) == ["gross margin 2026: rose in 1 document(s), fell in 1"]


def test_deterministic_and_order_independent_scores() -> None:
    nodes = [RISK, MDNA, PRICES, TENQ]
    a = critic().run(QUESTION, nodes, AS_OF)
    assert a == critic().run(QUESTION, nodes, AS_OF)
    b = critic().run(QUESTION, list(reversed(nodes)), AS_OF)
    assert (a.scores, a.missing, a.sufficient, a.overall) == (b.scores, b.missing, b.sufficient, b.overall)


def test_required_aspects_and_bad_settings() -> None:
    narrow = RAGCriticAgent(required=[Aspect.RISKS])
    v = narrow.run("What are the risk factors?", [RISK], AS_OF)
    assert v.missing == []
    with pytest.raises(ConfigError):
        RAGCriticAgent(required=[])
    with pytest.raises(ConfigError):
        RAGCriticAgent(threshold=0.1, floor=0.5)


# ----------------------------------------------------------------------------------------------------------------
# LLM path (pydantic-ai FunctionModel: a real model object driven by a local function)


def llm_output(score: float = 0.9, covered: bool = True, ids: tuple[str, ...] = ("risk",)) -> dict[str, Any]:
    out = LLMCriticOutput(
        dimensions=[DimensionScore(dimension=d, score=score, reason=f"llm says {d.value}") for d in Dimension],
        aspects=[AspectStatus(aspect=a, covered=covered, reason="llm judged", evidence_ids=list(ids)) for a in Aspect],
    )
    return out.model_dump(mode="json")


class Scripted:
    """Returns the scripted tool-call arguments in turn and records every request."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.calls = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, reply)])


def test_llm_valid_output_is_used_and_judged_by_the_same_rule() -> None:
    script = Scripted(llm_output(0.9))
    v = critic(FunctionModel(script)).run(QUESTION, [RISK, MDNA], AS_OF)
    assert script.calls == 1
    assert v.mode is CriticMode.LLM
    assert v.scores[0].reason == "llm says coverage"
    assert v.sufficient is True and v.overall == pytest.approx(0.9)
    assert v.prompt_sha256 and len(v.prompt_sha256) == 64
    lazy = critic(FunctionModel(Scripted(llm_output(1.0, covered=False)))).run(QUESTION, [RISK], AS_OF)
    assert lazy.sufficient is False and lazy.missing == list(CORE_ASPECTS)  # scores of 1.0 cannot override the rule


def test_llm_invalid_twice_falls_back_to_deterministic() -> None:
    bad = {"dimensions": [{"dimension": "coverage", "score": 7, "reason": ""}], "aspects": []}
    script = Scripted(bad)
    v = critic(FunctionModel(script)).run(QUESTION, [RISK, MDNA], AS_OF)
    assert script.calls == 2  # the first answer and exactly one retry
    assert v.mode is CriticMode.FALLBACK
    assert any("invalid after 1 retry" in line and "deterministic critic" in line for line in v.log)
    offline = critic().run(QUESTION, [RISK, MDNA], AS_OF)
    assert (v.scores, v.missing, v.sufficient) == (offline.scores, offline.missing, offline.sufficient)


def test_llm_invalid_then_valid_is_accepted_after_one_retry() -> None:
    script = Scripted({"dimensions": [], "aspects": []}, llm_output(0.8))
    v = critic(FunctionModel(script)).run(QUESTION, [RISK, MDNA], AS_OF)
    assert script.calls == 2
    assert v.mode is CriticMode.LLM
    assert "validated after 1 retry" in v.log[-1]


def test_llm_citing_unknown_evidence_ids_is_invalid() -> None:
    script = Scripted(llm_output(0.9, ids=("made-up",)))
    v = critic(FunctionModel(script)).run(QUESTION, [RISK, MDNA], AS_OF)
    assert script.calls == 2
    assert v.mode is CriticMode.FALLBACK


def test_llm_not_called_for_empty_evidence() -> None:
    script = Scripted(llm_output())
    v = critic(FunctionModel(script)).run(QUESTION, [], AS_OF)
    assert script.calls == 0 and v.missing == list(CORE_ASPECTS)


def test_a_hiring_question_requires_web_activity_figures() -> None:
    nodes = [node("n1", "Revenue rose and gross margin and operating income grew; risk factors include competition "
                  "and supply chain uncertainty.", section="Item 7")]
    plain = critic().run(QUESTION, nodes, AS_OF, available=["prices", "companyfacts"])
    assert Aspect.WEB_ACTIVITY not in plain.missing
    asked = critic().run("Is NVIDIA hiring more engineers?", nodes, AS_OF, available=["prices", "companyfacts"])
    assert Aspect.WEB_ACTIVITY in asked.missing and not asked.sufficient
    need = next(n for n in asked.needs if n.aspect is Aspect.WEB_ACTIVITY)
    assert need.kinds == [DataKind.WEB] and "web_activity" in asked.rule
    got = critic().run("Is NVIDIA hiring more engineers?", nodes, AS_OF,
                       available=["prices", "companyfacts", "jobs_open_roles", "github_commits_13w"])
    assert Aspect.WEB_ACTIVITY not in got.missing
