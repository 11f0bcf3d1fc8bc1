"""A live 10-K that puts its substance in Exhibit 13: the live SEC source reads the filing index, downloads the EX-13
with the 10-K (through the polite client: identity header, cache) and ingest appends it to the 10-K's Document, so
the answer path finds a sentence that only the exhibit holds. A failed exhibit (404, 500) or index is one visible
failure row and the 10-K is still stored. Everything is served by a loopback server at SEC's URL paths."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from market_replay import ReplayServer, SleepRecorder

from equimind.core.config import Settings
from equimind.core.documents import Document, FilterSpec
from equimind.ingest.documents import documents
from equimind.ingest.exhibits import EXHIBITS_KEY, MISSING_KEY
from equimind.sources.base import SourceFailure
from equimind.sources.http import HttpPolicy, PoliteHttpClient
from equimind.sources.live_filings import live_filing_records
from equimind.sources.sec_edgar import SecEdgarClient
from equimind.sources.sec_exhibits import IndexedDocument, parse_filing_index, wanted_exhibits

IDENTITY = "EquiMind Tests tests@example.com"
CIK, ACC = "72971", "0000072971-25-000065"
FOLDER = f"/Archives/edgar/data/{CIK}/{ACC.replace('-', '')}"
INDEX = f"{FOLDER}/{ACC}-index.html"
PRIMARY = f"{FOLDER}/wfc-20241231.htm"
EX13 = f"{FOLDER}/wfc-1231x2024xex13.htm"
CAP_SENTENCE = ("The asset cap restricts the Company from growing its total consolidated assets beyond their level "
                "at the end of 2017 until the conditions of the consent order are met.")

PRIMARY_HTML = """<html><body>
<div><span>WELLS FARGO &amp; COMPANY</span></div>
<div><span>(Exact name of registrant as specified in its charter)</span></div>
<div><span>Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations</span></div>
<div><span>Information in response to this Item 7 can be found in the 2024 Annual Report to Shareholders under
"Financial Review." That information is incorporated into this item by reference.</span></div>
<div><span>Item 8. Financial Statements and Supplementary Data</span></div>
<div><span>Information in response to this Item 8 can be found in the 2024 Annual Report to Shareholders under
"Financial Statements." That information is incorporated into this item by reference.</span></div>
<div><span>Item 15. Exhibits, Financial Statement Schedules</span></div>
<div><span>Exhibit 13. 2024 Annual Report to Shareholders. Filed herewith.</span></div>
</body></html>"""

EX13_HTML = f"""<html><body>
<div><span>2024 Annual Report to Shareholders</span></div>
<div><span>Financial Review: Overview</span></div>
<div><span>{CAP_SENTENCE}</span></div>
<div><span>Net interest income decreased in 2024 compared with 2023, driven by higher deposit costs.</span></div>
</body></html>"""


def _index_html(*rows: tuple[str, str, str, str]) -> str:
    cells = "".join(
        f'<tr><td scope="row">{seq}</td><td scope="row">{desc}</td><td scope="row"><a href="{FOLDER}/{doc}">{doc}</a>'
        f'</td><td scope="row">{kind}</td><td scope="row">1000</td></tr>' for seq, desc, doc, kind in rows)
    return ('<html><body><table class="tableFile" summary="Document Format Files"><tr><th scope="col">Seq</th>'
            '<th scope="col">Description</th><th scope="col">Document</th><th scope="col">Type</th>'
            f'<th scope="col">Size</th></tr>{cells}</table></body></html>')


INDEX_HTML = _index_html(("1", "10-K", "wfc-20241231.htm", "10-K"),
                         ("2", "2024 ANNUAL REPORT TO SHAREHOLDERS", "wfc-1231x2024xex13.htm", "EX-13"),
                         ("3", "SUBSIDIARIES", "wfc-1231x2024xex21.htm", "EX-21"))


def _fake_sec(server: ReplayServer, index_html: str = INDEX_HTML) -> ReplayServer:
    tickers = {"0": {"cik_str": int(CIK), "ticker": "WFC", "title": "WELLS FARGO & COMPANY/MN"}}
    submissions = {"cik": CIK, "name": "WELLS FARGO & COMPANY/MN", "filings": {"files": [], "recent": {
        "accessionNumber": [ACC], "filingDate": ["2025-02-25"], "reportDate": ["2024-12-31"], "form": ["10-K"],
        "primaryDocument": ["wfc-20241231.htm"]}}}
    server.extra.update({
        "/files/company_tickers.json": ("application/json", json.dumps(tickers).encode()),
        f"/submissions/CIK{CIK.zfill(10)}.json": ("application/json", json.dumps(submissions).encode()),
        PRIMARY: ("text/html", PRIMARY_HTML.encode()),
        INDEX: ("text/html", index_html.encode()),
        EX13: ("text/html", EX13_HTML.encode()),
    })
    return server


@pytest.fixture()
def server():  # type: ignore[no-untyped-def]
    with ReplayServer() as s:
        yield _fake_sec(s)


def _settings(tmp_path: Path, url: str) -> Settings:
    return Settings(home=tmp_path / "home", sec_identity=IDENTITY, sec_base_url=url, sec_data_url=url)


def _client(tmp_path: Path, server: ReplayServer) -> SecEdgarClient:
    s = _settings(tmp_path, server.url)
    http = PoliteHttpClient(source_name="sec_edgar", user_agent=IDENTITY, cache_dir=s.http_cache_path,
                            policy=HttpPolicy(max_rps=10.0, timeout_s=5.0, retries=2), sleep=SleepRecorder())
    return SecEdgarClient(s, http=http)


def _items(tmp_path: Path, server: ReplayServer, forms: tuple[str, ...] = ("10-K",)) -> list[Document | SourceFailure]:
    return list(documents(live_filing_records(_client(tmp_path, server), ["WFC"], forms)))


def test_the_filing_index_is_parsed_and_only_the_annual_report_exhibits_are_wanted() -> None:
    rows = parse_filing_index(INDEX_HTML)
    assert [(r.document, r.document_type) for r in rows] == [
        ("wfc-20241231.htm", "10-K"), ("wfc-1231x2024xex13.htm", "EX-13"), ("wfc-1231x2024xex21.htm", "EX-21")]
    more = [*rows, IndexedDocument("4", "Financial statements of the Bank", "bank.htm", "EX-99.1"),
            IndexedDocument("5", "Press release", "pr.htm", "EX-99.2"),
            IndexedDocument("6", "Quarterly report", "q.htm", "EX-13.1"),
            IndexedDocument("7", "Annual report (scanned)", "ar.pdf", "EX-13")]
    assert [r.document for r in wanted_exhibits(more)] == ["wfc-1231x2024xex13.htm", "bank.htm", "q.htm"]
    assert parse_filing_index("<html><body>no table here</body></html>") == []


def test_the_exhibit_is_fetched_with_the_10k_and_appended_as_a_labelled_section(
        tmp_path: Path, server: ReplayServer) -> None:
    out = _items(tmp_path, server)
    assert [type(o).__name__ for o in out] == ["Document"]
    doc = out[0]
    assert isinstance(doc, Document) and doc.form == "10-K" and doc.ticker == "WFC"
    at = doc.text.index(CAP_SENTENCE)  # the sentence is in the 10-K's one Document, at an exact span
    assert "Exhibit 13 (EX-13)" in (doc.section_at(at) or "")
    meta = doc.meta_dict()
    start, end = (int(x) for x in meta["exhibit_EX-13_span"].split(":"))
    assert start < at < end == len(doc.text)
    assert doc.text[start:].startswith("Exhibit 13 (EX-13): 2024 ANNUAL REPORT TO SHAREHOLDERS")
    assert meta["exhibit_EX-13_url"] == f"{server.url}{EX13}" and meta[EXHIBITS_KEY] == "EX-13"
    assert MISSING_KEY not in meta  # incorporated by reference, and here
    assert doc.text.index("incorporated into this item by reference") < start  # the 10-K's own text comes first
    assert server.count("/Archives/edgar/data/72971/000007297125000065/wfc-1231x2024xex21.htm") == 0
    exhibit_requests = [h for _, p, h in server.requests if p == EX13]
    assert len(exhibit_requests) == 1 and exhibit_requests[0]["User-Agent"] == IDENTITY
    _items(tmp_path, server)  # archives are immutable: the index and the exhibit come from the cache the 2nd time
    assert server.count(EX13) == 1 and server.count(INDEX) == 1


def test_a_10k_whose_index_has_no_annual_report_exhibit_is_stored_as_before(tmp_path: Path) -> None:
    with ReplayServer() as s:
        _fake_sec(s, _index_html(("1", "10-K", "wfc-20241231.htm", "10-K")))
        out = _items(tmp_path, s)
    assert [type(o).__name__ for o in out] == ["Document"]
    meta = out[0].meta_dict()  # type: ignore[union-attr]
    assert EXHIBITS_KEY not in meta and meta[MISSING_KEY] == "EX-13"  # its text says it is incorporated by ref.


@pytest.mark.parametrize("fault", ["404", "500"])
def test_a_failed_exhibit_is_a_failure_row_and_the_10k_is_still_stored(tmp_path: Path, server: ReplayServer,
                                                                      fault: str) -> None:
    server.fault(EX13, *[fault] * 3)  # every attempt (1 + 2 retries) fails
    out = _items(tmp_path, server)
    assert [type(o).__name__ for o in out] == ["SourceFailure", "Document"]
    failure, doc = out
    assert isinstance(failure, SourceFailure) and failure.source == f"{server.url}{EX13}"
    assert "WFC 10-K filed 2025-02-25" in failure.error and "exhibit EX-13" in failure.error
    assert "stored without it" in failure.error and (f"HTTP {fault}" in failure.error or "does not exist" in
                                                     failure.error)
    assert isinstance(doc, Document) and CAP_SENTENCE not in doc.text
    assert doc.meta_dict()[MISSING_KEY] == "EX-13"  # the refusal path can say what is missing


def test_a_failed_filing_index_is_a_failure_row_and_the_10k_is_still_stored(tmp_path: Path,
                                                                           server: ReplayServer) -> None:
    server.fault(INDEX, "404")
    out = _items(tmp_path, server)
    assert [type(o).__name__ for o in out] == ["SourceFailure", "Document"]
    assert "filing index could not be read" in out[0].error and server.count(EX13) == 0  # type: ignore[union-attr]


def _hash_services(settings: Settings) -> Any:
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    return open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                         reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"))


@pytest.mark.integration
def test_live_ingest_lets_the_answer_path_find_the_exhibit_sentence(tmp_path: Path, server: ReplayServer) -> None:
    from equimind.answer.answerer import Answerer
    from equimind.app.engine import EquiMindEngine
    from equimind.query.parsed import QuestionParser

    services = _hash_services(_settings(tmp_path, server.url))
    try:
        items, _, _ = services.sources.filings.for_ingest(("WFC",), ("10-K",))
        report = services.pipeline().run(documents(items))
        assert report.documents_added == 1 and not report.documents_failed
        question = "What restriction does the asset cap place on Wells Fargo?"
        hits = EquiMindEngine(services).search(question, FilterSpec(tickers=("WFC",)), top_k=10).hits
        assert any(CAP_SENTENCE in h.parent_text for h in hits)
        answerer = Answerer(services.docstore)
        pq = QuestionParser(services.docstore, shaping=False).parse(question, date(2025, 9, 30), "WFC")
        verdict = answerer.check.verdict(pq.ask, pq.subject, pq.others)
        assert verdict.answerable, verdict.reason  # 'cap' and 'place' are now in the visible document
        answer = answerer.answer(pq, hits)
        assert not answer.refused, answer.refusal
        assert any("asset cap" in s.text for s in answer.sentences)
        doc = services.docstore.get_document(answer.sentences[0].quotes[0].doc_id)
        start, end = (int(x) for x in doc.meta_dict()["exhibit_EX-13_span"].split(":"))
        for q in (q for s in answer.sentences for q in s.quotes):  # cited at exact spans inside the exhibit
            assert doc.text[q.start:q.end] == q.text and start <= q.start < q.end <= end
    finally:
        services.close()
