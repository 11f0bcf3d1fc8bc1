"""A research run's evidence does not depend on unrelated documents in the store (issue 15): the same question at the
same as-of over the same company's documents gives the same passages whatever other tickers were ingested since."""

from __future__ import annotations

import json
from datetime import date

import pytest

pytestmark = pytest.mark.integration

AS_OF = date(2025, 9, 30)
QUESTION = "Is data-center growth sustainable?"  # words NVDA's filings use far more than AAPL's


def _evidence(rec) -> dict:  # type: ignore[no-untyped-def]
    data = json.loads(rec.model_dump_json())
    data.pop("timings_ms")
    data.pop("since")  # the rating ledger's change from the run before: history, not this run's evidence
    rag = data.pop("agentic_rag")
    data["hits"] = [[h["chunk_id"] for h in it["hits"]] for it in rag["log"]]
    assert not any(it["fetched"] for it in rag["log"][1:]), "a warm run fetched again"
    return data


def test_unrelated_tickers_ingested_between_two_runs_change_nothing(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    engine.research("AAPL", QUESTION, AS_OF)  # fetches AAPL's documents; the next run reads them from the store
    first = engine.research("AAPL", QUESTION, AS_OF)
    before = engine.services.docstore.counts()
    engine.research("NVDA", QUESTION, AS_OF)  # fetches and indexes NVDA's filings into the same store
    assert engine.services.docstore.counts() != before, "the unrelated ticker added nothing to the store"
    second = engine.research("AAPL", QUESTION, AS_OF)
    cited = [c for claim in first.bull_case + first.bear_case for c in claim.citations]
    assert cited, "the debate cited nothing"
    assert _evidence(second)["bear_case"] == _evidence(first)["bear_case"]
    assert _evidence(second) == _evidence(first)
