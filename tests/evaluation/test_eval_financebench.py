"""FinanceBench loading and query building: settings, filters from the question's words, page-level judging."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.documents import Document, Origin, PageSpan, Source
from equimind.core.search import DocumentRef, SearchHit, StageScores
from equimind.evaluation.financebench import build_queries, doc_ids_by_name, load_doc_meta, load_questions


def _doc(name: str, company: str, year: str) -> Document:
    return Document(id=f"id-{name}", source_key=name, ticker=None, cik=None, company=company, source=Source.LOCAL,
                    origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None, url=None, title=name,
                    text="x" * 30, pages=(PageSpan(0, 0, 10), PageSpan(1, 10, 30)),
                    meta=(("doc_name", name), ("fiscal_year", year)))


def _hit(doc_id: str, page: int) -> SearchHit:
    ref = DocumentRef(doc_id=doc_id, ticker=None, company=None, form="10-K", filed_at=None, period_end=None,
                      source=Source.LOCAL, origin=Origin.LOCAL_FILE, title="t", url=None)
    return SearchHit(rank=1, chunk_id="c", text="t", start=0, end=1, parent_id="p", parent_text="t", parent_start=0,
                     parent_end=1, section=None, page_start=page, page_end=page, document=ref, scores=StageScores())


def test_dev_split_loads_with_zero_based_evidence_pages(financebench_dir: Path) -> None:
    qs = load_questions(financebench_dir)
    meta = load_doc_meta(financebench_dir)
    assert len(qs) == 46
    assert all(q.doc_name in meta for q in qs)
    assert {q.question_type for q in qs} == {"metrics-generated", "domain-relevant", "novel-generated"}
    assert all(page >= 0 for q in qs for _, page in q.evidence)


def test_settings_choose_filters_without_gold_data(financebench_dir: Path) -> None:
    qs = [q for q in load_questions(financebench_dir) if q.doc_name == "3M_2018_10K"][:1]
    docs = [_doc("3M_2018_10K", "3M", "2018"), _doc("3M_2022_10K", "3M", "2022"),
            _doc("BOEING_2018_10K", "Boeing", "2018")]
    shared, parsed, single = (build_queries(qs, docs, s)[0] for s in ("shared", "shared_parsed", "single"))
    assert shared.flt is None
    assert parsed.flt is not None and parsed.flt.doc_ids == ("id-3M_2018_10K",)  # "3M" + "FY2018" in the question
    assert single.flt is not None and single.flt.doc_ids == ("id-3M_2018_10K",)
    page = qs[0].evidence[0][1]
    assert single.judge([_hit("id-3M_2018_10K", page)]).matches[0]
    assert not single.judge([_hit("id-3M_2022_10K", page)]).matches[0]


def test_missing_documents_and_bad_settings_are_explained(financebench_dir: Path) -> None:
    qs = load_questions(financebench_dir)
    with pytest.raises(Exception, match="not in the store"):
        build_queries(qs, [_doc("3M_2018_10K", "3M", "2018")], "shared")
    with pytest.raises(ValueError, match="valid"):
        build_queries(qs[:0], [], "nope")


def test_doc_ids_by_name() -> None:
    assert doc_ids_by_name([_doc("A_2020_10K", "A", "2020")]) == {"A_2020_10K": "id-A_2020_10K"}
