"""Answer-level check helpers: sampling, determinism fingerprint, look-ahead and citation checks."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from equimind.core.documents import Origin, Source, sha256_hex
from equimind.core.research import Citation, Claim, Figure, Recommendation, Speaker
from equimind.core.search import DocumentRef
from equimind.evaluation.answers import (
    AnswerTally,
    check_citations,
    lookahead_violations,
    sample_questions,
    stable_json,
)
from equimind.evaluation.golden import load_golden

TEXT = "Revenue grew 10% in 2024. Margins fell."


class FakeDocstore:
    def get_document_text(self, doc_id: str) -> str:
        return TEXT

    def get_refs(self, ids: object) -> dict[str, DocumentRef]:
        return {"d": DocumentRef(doc_id="d", ticker="X", company=None, form="10-K", filed_at=date(2025, 3, 1),
                                 period_end=None, source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, title="t",
                                 url=None)}


class FakeServices:
    docstore = FakeDocstore()


class FakeEngine:
    services = FakeServices()


def _rec(quote: str, start: int, as_of: date, figure_as_of: date | None = None) -> Recommendation:
    cite = Citation(doc_id="d", start=start, end=start + len(quote), quote=quote, doc_sha256=sha256_hex(TEXT))
    figs = [Figure(id="f", name="close", value=1.0, unit="USD", as_of=figure_as_of, formula="x")] \
        if figure_as_of else []
    return Recommendation(ticker="X", question="q", as_of=as_of, rating=None, conviction=0.5, thesis="t",
                          bull_case=[Claim(speaker=Speaker.BULL, text="up", citations=[cite])], figures=figs,
                          timings_ms={"total": 1.0})


def test_citations_valid_only_when_offsets_and_hash_match() -> None:
    tally = AnswerTally()
    assert check_citations(_rec("Revenue grew 10%", 0, date(2025, 6, 1)), FakeEngine(), tally) == 0  # type: ignore[arg-type]
    assert check_citations(_rec("Revenue grew 10%", 3, date(2025, 6, 1)), FakeEngine(), tally) == 1  # type: ignore[arg-type]
    assert (tally.citations, tally.citations_valid, tally.claims) == (2, 1, 2)


def test_a_direct_answers_quotes_are_checked_like_citations() -> None:
    from equimind.answer.record import Answer, AnswerSentence, Method, Quote, Support
    from equimind.query.kinds import AnswerKind

    def answered(start: int) -> Recommendation:
        quote = Quote(doc_id="d", start=start, end=start + 16, text="Revenue grew 10%", doc_sha256=sha256_hex(TEXT))
        ans = Answer(question="q", ticker="X", as_of=date(2025, 6, 1), kind=AnswerKind.PERCENT,
                     support=Support.SUPPORTED,
                     sentences=[AnswerSentence(text=quote.text, method=Method.EXTRACTIVE, quotes=[quote])])
        return Recommendation(ticker="X", question="q", as_of=date(2025, 6, 1), rating=None, conviction=0.0,
                              thesis="t", answer=ans)

    tally = AnswerTally()
    assert check_citations(answered(0), FakeEngine(), tally) == 0  # type: ignore[arg-type]
    assert check_citations(answered(2), FakeEngine(), tally) == 1  # type: ignore[arg-type]
    assert (tally.citations, tally.citations_valid, tally.claims) == (2, 1, 2)


def test_lookahead_flags_later_documents_and_figures() -> None:
    ok = _rec("Revenue", 0, date(2025, 6, 1), figure_as_of=date(2025, 5, 30))
    assert lookahead_violations(ok, FakeEngine()) == []  # type: ignore[arg-type]
    bad = _rec("Revenue", 0, date(2025, 2, 1), figure_as_of=date(2025, 2, 2))
    assert len(lookahead_violations(bad, FakeEngine())) == 2  # type: ignore[arg-type]


def test_stable_json_ignores_timings_only() -> None:
    a = _rec("Revenue", 0, date(2025, 6, 1))
    b = a.model_copy(update={"timings_ms": {"total": 99.0}})
    c = a.model_copy(update={"thesis": "other"})
    assert stable_json(a) == stable_json(b) != stable_json(c)


def test_sample_takes_all_absent_and_n_per_ticker() -> None:
    qs = load_golden()
    picked = sample_questions(qs, 1, ("AAPL", "MSFT"))
    assert {q.tickers[0] for q in picked} <= {"AAPL", "MSFT"}
    assert sum(not q.absent for q in picked) == 1
    assert sum(q.absent for q in picked) == sum(q.absent and q.tickers[0] in ("AAPL", "MSFT") for q in qs)


def test_the_evaluation_engines_run_the_offline_analyst_with_a_typed_provider(tmp_path: Path,
                                                                              monkeypatch: Any) -> None:
    """Settings.model_copy does not validate: a plain "offline" string once reached the LLM factory and failed."""
    from equimind.core.config import ProviderName, Settings
    from equimind.evaluation import answer_quality
    from equimind.evaluation.answers import _open_engine

    base = Settings(home=tmp_path / "home", provider=ProviderName.OPENAI)
    engine = _open_engine(base, tmp_path / "corpus", tmp_path / "answers", None)
    assert engine.services.settings.provider is ProviderName.OFFLINE and engine.services.llm[0] is None
    seen: list[Settings] = []

    def fake_open_store(settings: Settings, data_dir: Path, variant: str) -> tuple[Any, dict[str, Any]]:
        seen.append(settings)
        return engine.services, {"cached": True}

    monkeypatch.setattr(answer_quality, "open_store", fake_open_store)
    answer_quality.financebench_engine(base, tmp_path / "fb", tmp_path / "fbcache")
    assert seen[0].provider is ProviderName.OFFLINE and seen[0].snapshot == base.corpus_dir  # recorded, no network
    assert seen[0].home == tmp_path / "fbcache" / "cells"  # the product-format store
