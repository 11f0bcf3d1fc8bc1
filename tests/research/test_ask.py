"""``engine.ask``: a direct, cited answer to a specific ask over the DB-first loop (on-demand fetch from the recorded
snapshot into an empty home), the refusal with its reason, and bad input that changes nothing stored."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest

from equimind.answer.record import Method, RefusalReason, Support
from equimind.app.engine import EquiMindEngine
from equimind.core.errors import ConfigError, NotFoundError

AS_OF = date(2025, 9, 30)


@pytest.mark.integration
def test_ask_answers_nvidia_data_center_revenue_from_the_10k_segment_table(
        make_engine: Callable[..., EquiMindEngine]) -> None:
    engine = make_engine(top_k=20)  # the hash embedder ranks worse than MiniLM
    assert engine.services.docstore.counts().get("indexed", 0) == 0
    ans = engine.ask("What was NVIDIA's data center revenue in fiscal 2025?", None, AS_OF)
    assert ans.ticker == "NVDA" and ans.support is Support.SUPPORTED, ans.refusal
    assert "115,186" in ans.text
    quotes = [q for s in ans.sentences for q in s.quotes]
    row = next(q for q in quotes if q.role == "row")
    assert "Data Center" in row.text and "$115,186" in row.text
    for q in quotes:  # every quoted span is the exact text of a stored filing, checked without the answerer
        check = engine.verify_citation(q.doc_id, q.text)
        assert check.verified and (check.start, check.end) == (q.start, q.end) and check.doc_sha256 == q.doc_sha256
    doc = engine.services.docstore.get_document(row.doc_id)
    assert doc.form == "10-K" and doc.filed_at is not None and doc.filed_at <= AS_OF
    fetched = [f["kind"] for log in ans.agentic_rag for f in log["fetched"]]
    assert "10-K" in fetched  # the empty home fetched the filing the question needs


@pytest.mark.integration
def test_ask_answers_apple_net_income_from_xbrl_by_period(make_engine: Callable[..., EquiMindEngine]) -> None:
    ans = make_engine().ask("What was Apple's net income in fiscal 2024?", None, AS_OF)
    assert ans.support is Support.SUPPORTED, ans.refusal
    s = ans.sentences[0]
    assert s.method is Method.XBRL and "93,736" in s.text
    fig = s.figures[0]
    assert fig.value == 93_736_000_000 and (str(fig.period_start), str(fig.period_end)) == ("2023-10-01",
                                                                                            "2024-09-28")
    assert fig.provenance["concept"] == "us-gaap:NetIncomeLoss"
    assert fig.provenance["accession"] == "0000320193-24-000123" and fig.provenance["form"] == "10-K"


@pytest.mark.integration
def test_an_absent_ask_is_refused_with_what_is_missing(make_engine: Callable[..., EquiMindEngine]) -> None:
    ans = make_engine().ask("How many movie theaters did Netflix own in Brazil in 2024?", "NFLX", AS_OF)
    assert ans.support is Support.REFUSED and ans.refusal is not None
    assert ans.refusal.reason is RefusalReason.NOT_ANSWERABLE and "theaters" in ans.refusal.missing
    assert not ans.sentences


@pytest.mark.integration
def test_bad_input_is_a_clear_error_and_changes_nothing(make_engine: Callable[..., EquiMindEngine]) -> None:
    engine = make_engine()
    before = engine.services.docstore.counts()
    with pytest.raises(ConfigError, match="empty"):
        engine.ask("   ", None, AS_OF)
    with pytest.raises(ConfigError, match="characters long"):
        engine.ask("What was NVIDIA's revenue? " * 4000, None, AS_OF)
    with pytest.raises(ConfigError, match=r"several companies.*AAPL.*MSFT.*--ticker"):
        engine.ask("What was revenue of Apple and Microsoft?", None, AS_OF)
    with pytest.raises(NotFoundError, match="names no company"):
        engine.ask("What is the revenue of Acme Widgets?", None, AS_OF)
    with pytest.raises(NotFoundError, match="unknown ticker ZZZZQ"):
        engine.ask("What was revenue in 2024?", "ZZZZQ", AS_OF)
    assert engine.services.docstore.counts() == before


@pytest.mark.integration
def test_research_answers_a_specific_ask_instead_of_rating_it(make_engine: Callable[..., EquiMindEngine]) -> None:
    rec = make_engine().research("AAPL", "What was Apple's net income in fiscal 2024?", AS_OF)
    assert rec.rating is None and not rec.refused and not rec.bull_case and not rec.bear_case
    assert rec.answer is not None and "93,736" in rec.thesis
    dumped = rec.model_dump(mode="json")
    assert dumped["answer"]["sentences"][0]["figures"][0]["provenance"]["concept"] == "us-gaap:NetIncomeLoss"


@pytest.mark.integration
def test_a_decision_ask_with_a_topic_gets_the_rating_and_above_it_the_answer(
        make_engine: Callable[..., EquiMindEngine]) -> None:
    rec = make_engine().research("NVDA", "Is data-center growth sustainable?", AS_OF)
    assert rec.rating is not None and rec.bull_case  # the debate rated it
    assert rec.answer is not None and rec.answer.kind.value == "text"
    assert rec.answer.sentences and all("data center" in s.text.lower() for s in rec.answer.sentences)
    plain = make_engine().research("NVDA", "Should I buy NVIDIA?", AS_OF)
    assert plain.rating is not None and plain.answer is None  # nothing beyond the rating was asked


@pytest.mark.integration
def test_ask_reads_at_least_what_search_returns_for_the_same_question(
        make_engine: Callable[..., EquiMindEngine]) -> None:
    """One retrieval: every passage ``equimind search`` shows for the question (its auto filter on company and
    fiscal year) is among the passages the answer read, first and in search order."""
    engine = make_engine()
    question = "What did Microsoft say about Azure growth in fiscal 2024?"
    ans = engine.ask(question, "MSFT", AS_OF)
    shown = list(dict.fromkeys((h.document.doc_id, h.parent_start, h.parent_end)
                               for h in engine.search(question).hits))
    read = [(p.doc_id, p.start, p.end) for p in ans.passages_searched]
    assert shown and read[:len(shown)] == shown
    assert "product_search" in ans.timings_ms


@pytest.mark.integration
def test_a_question_naming_no_company_is_asked_of_the_company_the_search_found(
        make_engine: Callable[..., EquiMindEngine]) -> None:
    engine = make_engine(top_k=20)
    engine.ask("What was NVIDIA's data center revenue in fiscal 2025?", None, AS_OF)  # stores NVIDIA's filings
    ans = engine.ask("What was Data Center revenue in fiscal 2025?", None, AS_OF)
    assert ans.ticker == "NVDA" and ans.support is Support.SUPPORTED, ans.refusal
    assert ans.parsed_question["company_from"].startswith("search: ") and "--ticker" in \
        ans.parsed_question["company_from"]
    with pytest.raises(NotFoundError, match=r"names no company.*nor do the search's top passages"):
        engine.ask("What is the revenue of Acme Widgets?", None, AS_OF)
