"""Aspect coverage of one evidence node (the rule the critic, the rewriter and memory share)."""

from __future__ import annotations

from datetime import date

from equimind.core.documents import Source
from equimind.core.search import EvidenceNode
from equimind.lexicon.aspects import Aspect, node_aspects

AS_OF = date(2024, 6, 30)


def node(nid: str, text: str, *, form: str = "10-K", filed: date | None = date(2024, 2, 21),
         section: str | None = None, source: Source = Source.SEC_EDGAR, doc: str | None = None) -> EvidenceNode:
    return EvidenceNode(id=nid, doc_id=doc or f"doc-{nid}", start=0, end=len(text), text=text, ticker="NVDA",
                        company="NVIDIA", source=source, form=form, filed_at=filed, section=section, score=1.0,
                        doc_sha256="x")


PRICES = node("px", "NVDA closed at $123.54. The 50-day moving average is $110.20 and the 14-day RSI is 58.3.",
              form="prices", filed=date(2024, 6, 28), source=Source.YAHOO_FINANCE)


def test_generic_stock_price_talk_is_not_valuation_evidence() -> None:
    risk = node("rf", "Our stock price may be volatile, and the valuation allowance and dividend yield assumptions "
                      "may change.", section="Item 1A. Risk Factors")
    assert Aspect.VALUATION_TECHNICALS not in node_aspects(risk, AS_OF)
    assert Aspect.VALUATION_TECHNICALS in node_aspects(PRICES, AS_OF)
