"""The golden set: its shape, every gold quote found in the parsed canonical text, XBRL numbers consistent."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Document
from equimind.evaluation.golden import (
    QTYPES,
    ResolvedSpan,
    build_queries,
    filing_key,
    filings_needed,
    find_all,
    judge_hits,
    load_golden,
    resolve,
)


@pytest.fixture(scope="module")
def golden_docs(recorded_documents: list[Document]) -> list[Document]:
    docs = recorded_documents
    needed = filings_needed(load_golden())
    assert needed <= {filing_key(d) for d in docs}, "a golden filing is missing from the recorded corpus"
    return docs


def test_golden_set_shape() -> None:
    qs = load_golden()
    counts = Counter(q.qtype for q in qs)
    assert len(qs) >= 60
    assert counts["absent"] >= 8
    assert set(counts) <= set(QTYPES)
    assert counts["numeric_xbrl"] >= 4
    comparisons = [q for q in qs if q.qtype == "comparison"]
    assert comparisons and all(len({g.ticker for g in q.gold}) >= 2 for q in comparisons)
    for q in qs:
        assert all(len(g.quote) <= 160 for g in q.gold), f"{q.id}: keep gold quotes short"
        assert not any(g.quote.lower() in q.question.lower() for g in q.gold), f"{q.id} copies its passage"


def test_every_gold_quote_is_found_and_offsets_recorded(golden_docs: list[Document]) -> None:
    qs = [q for q in load_golden() if not q.absent]
    spans = resolve(qs, golden_docs)
    texts = {d.id: d.text for d in golden_docs}
    for q in qs:
        assert len(spans[q.id]) == len(q.gold)
        for g, occurrences in zip(q.gold, spans[q.id], strict=True):
            assert occurrences, f"{q.id}: {g.quote!r} not found"
            for s in occurrences:
                assert texts[s.doc_id][s.start:s.end] == g.quote


def test_absent_answers_have_no_gold_and_their_phrases_are_not_in_the_corpus(golden_docs: list[Document]) -> None:
    corpus = "\n".join(d.text for d in golden_docs).lower()
    for phrase in ("electric scooter", "movie theaters", "model 2", "tonnes of coffee"):
        assert phrase not in corpus, phrase
    assert all(not q.gold for q in load_golden() if q.absent)


def test_xbrl_numbers_match_companyfacts(corpus_dir: Path) -> None:
    for q in [q for q in load_golden() if q.xbrl]:
        x = q.xbrl
        assert x is not None
        facts = json.loads((corpus_dir / "sec" / "companyfacts" / f"CIK{x['cik']}.json").read_text())
        rows = facts["facts"]["us-gaap"][x["concept"]]["units"]["USD"]
        assert any(r["end"] == x["end"] and r["val"] == x["value"] and r.get("start") for r in rows), q.id
        assert any(x["quote_value"] in g.quote for g in q.gold), f"{q.id}: the quote does not show the XBRL value"
        assert int(x["quote_value"].replace(",", "")) * 1_000_000 == x["value"]


def test_build_queries_judges_at_span_level(golden_docs: list[Document]) -> None:
    queries = build_queries(load_golden(), golden_docs, "single")
    assert len(queries) == sum(1 for q in load_golden() if not q.absent)
    by_id = {q.id: q for q in load_golden()}
    first = queries[0]
    assert first.flt is not None and first.flt.tickers == by_id[first.id].tickers


def test_judge_hits_counts_each_gold_item_once() -> None:
    items = [[ResolvedSpan("d", 10, 20), ResolvedSpan("d", 100, 110)], [ResolvedSpan("e", 0, 5)]]
    j = judge_hits([("d", 0, 9), ("d", 105, 200), ("d", 15, 16), ("e", 4, 9)], items)
    assert [set(m) for m in j.matches] == [set(), {0}, {0}, {1}]
    assert j.n_relevant == 2


def test_find_all_overlapping() -> None:
    assert find_all("aaa", "aa") == [0, 1]
    assert find_all("abc", "x") == []


def test_filing_key_needs_ticker_and_date() -> None:
    from equimind.core.documents import Origin, Source

    doc = Document(id="x", source_key="x", ticker="AAPL", cik=None, company=None, source=Source.SEC_EDGAR,
                   origin=Origin.SNAPSHOT, form="10-K", filed_at=date(2024, 11, 1), period_end=None, url=None,
                   title="t", text="t")
    assert filing_key(doc) == ("AAPL", "10-K", date(2024, 11, 1))
