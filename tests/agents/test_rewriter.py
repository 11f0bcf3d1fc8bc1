"""Query rewriter: template sub-queries with filter hints, and the LLM validate → retry → fallback path."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from equimind.core.documents import FilterSpec
from equimind.core.errors import ConfigError
from equimind.lexicon.aspects import Aspect
from equimind.research.critic import CriticMode, DataKind
from equimind.research.rewriter import QueryRewriter

AS_OF = date(2024, 6, 30)
QUESTION = "Is NVDA's data-center growth sustainable?"


def test_risk_queries_use_topic_terms_and_filing_filters() -> None:
    res = QueryRewriter().run(QUESTION, [Aspect.RISKS], ticker="NVDA", company="NVIDIA", as_of=AS_OF)
    assert res.mode is CriticMode.DETERMINISTIC
    assert res.texts[0] == "risk factors data center demand concentration export controls"
    assert len(res.queries) == 3 and len(set(q.perspective for q in res.queries)) == 3
    first = res.queries[0]
    assert first.aspect is Aspect.RISKS
    assert first.filters == FilterSpec(tickers=("NVDA",), until=AS_OF, forms=("10-K", "10-Q"))
    assert first.fetch == (DataKind.FORM_10K, DataKind.FORM_10Q)


def test_recent_events_get_10q_filter_and_recent_window() -> None:
    res = QueryRewriter().run(QUESTION, [Aspect.RECENT_EVENTS], ticker="NVDA", as_of=AS_OF)
    latest = res.queries[0]
    assert latest.filters.forms == ("10-Q",)
    assert latest.filters.since == date(2024, 3, 2)  # 120 days before the as-of date
    assert latest.filters.until == AS_OF
    assert all(q.filters.since == date(2024, 3, 2) for q in res.queries)
    assert "8-K" in res.queries[1].filters.forms


def test_every_missing_aspect_gets_queries_in_order() -> None:
    missing = [Aspect.VALUATION_TECHNICALS, Aspect.FUNDAMENTALS]
    res = QueryRewriter(per_aspect=2).run(QUESTION, missing, ticker="NVDA", as_of=AS_OF)
    assert [q.aspect for q in res.queries] == [Aspect.VALUATION_TECHNICALS] * 2 + [Aspect.FUNDAMENTALS] * 2
    assert res.queries[0].fetch[0] is DataKind.PRICES
    assert all("data center" in t for t in res.texts)
    assert res.queries[0].filters.forms == ()  # valuation talk can be anywhere


def test_no_topic_terms_falls_back_to_company_then_ticker() -> None:
    res = QueryRewriter(per_aspect=1).run("Should I buy NVDA?", [Aspect.FUNDAMENTALS], ticker="NVDA",
                                          company="NVIDIA Corp")
    assert res.texts == ["NVIDIA Corp revenue growth gross margin operating income"]
    bare = QueryRewriter(per_aspect=1).run("Should I buy it?", [Aspect.FUNDAMENTALS], ticker="NVDA")
    assert bare.texts[0].startswith("NVDA ")


def test_base_filter_is_respected_and_capped_at_as_of() -> None:
    base = FilterSpec(tickers=("AAPL",), doc_ids=("d1",), until=date(2025, 1, 1))
    res = QueryRewriter(per_aspect=1).run(QUESTION, [Aspect.RISKS], ticker="NVDA", as_of=AS_OF, base_filter=base)
    f = res.queries[0].filters
    assert (f.tickers, f.doc_ids, f.until) == (("AAPL",), ("d1",), AS_OF)


def test_nothing_missing_means_no_queries_and_determinism() -> None:
    assert QueryRewriter().run(QUESTION, []).queries == ()
    a = QueryRewriter().run(QUESTION, list(Aspect), ticker="NVDA", as_of=AS_OF)
    b = QueryRewriter().run(QUESTION, list(Aspect), ticker="NVDA", as_of=AS_OF)
    assert a == b and len(a.queries) == 12 and len(set(a.texts)) == 12
    with pytest.raises(ConfigError):
        QueryRewriter(per_aspect=0)


class Scripted:
    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.calls = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, reply)])


def test_llm_queries_get_aspect_filters() -> None:
    script = Scripted({"queries": [
        {"aspect": "risks", "perspective": "customers", "text": "hyperscaler customer concentration data center"},
        {"aspect": "recent_events", "perspective": "quarter", "text": "Q1 fiscal 2025 data center revenue"},
    ]})
    res = QueryRewriter(FunctionModel(script)).run(QUESTION, [Aspect.RISKS, Aspect.RECENT_EVENTS], ticker="NVDA",
                                                   as_of=AS_OF)
    assert script.calls == 1 and res.mode is CriticMode.LLM
    assert res.texts == ["hyperscaler customer concentration data center", "Q1 fiscal 2025 data center revenue"]
    assert res.queries[0].filters.forms == ("10-K", "10-Q", "8-K")
    assert res.queries[1].filters.since == date(2024, 3, 2)
    assert res.prompt_sha256 is not None


def test_llm_missing_an_aspect_twice_falls_back_to_templates() -> None:
    script = Scripted({"queries": [{"aspect": "risks", "perspective": "p", "text": "export controls"}]})
    res = QueryRewriter(FunctionModel(script)).run(QUESTION, [Aspect.RISKS, Aspect.RECENT_EVENTS], ticker="NVDA",
                                                   as_of=AS_OF)
    assert script.calls == 2
    assert res.mode is CriticMode.FALLBACK
    assert "invalid after 1 retry" in res.log[0]
    offline = QueryRewriter().run(QUESTION, [Aspect.RISKS, Aspect.RECENT_EVENTS], ticker="NVDA", as_of=AS_OF)
    assert res.queries == offline.queries
