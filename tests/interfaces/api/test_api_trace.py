"""The ``trace`` on every REST result: the X-Request-ID header's id, the version, the corpus signature of the indexed
documents and the config hash; equal for equal data and settings, changed by an ingest or a result-changing setting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from interfaces_fakes import AS_OF, copy_home, fake_services

from equimind import __version__
from equimind.core.config import Settings
from equimind.ingest.documents import documents
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.interfaces.api.app import create_app
from equimind.security.trace import config_hash, corpus_signature
from equimind.sources.local import LocalFileSource
from equimind.store.docstore import DocStore

PRODUCT = PRODUCT_FORMAT.value

pytestmark = pytest.mark.integration

QUERY = "export controls restrict sales of data center GPUs to China"
TINY = ("<html><body><p>Item 1. Business</p><p>We sell shoes to runners.</p><p>Item 7. Results</p>"
        "<p>Sales of shoes rose.</p></body></html>")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, nvda_template: Path, corpus_dir: Path) -> Settings:
    home = copy_home(nvda_template, tmp_path_factory.mktemp("trace") / "home")
    return Settings(home=home, snapshot=corpus_dir, shared=corpus_dir.parent)


@pytest.fixture(scope="module")
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, fake_services(settings))) as c:
        yield c


def _indexed(settings: Settings) -> list[str]:
    store = DocStore(settings.docstore_path)
    try:
        return store.indexed_doc_ids()[1]
    finally:
        store.close()


def _trace(res: Any) -> dict[str, Any]:
    assert res.status_code == 200, res.text
    trace: dict[str, Any] = res.json()["trace"]
    assert trace["request_id"] == res.headers["x-request-id"]  # the body's id is the response header's
    return trace


def test_every_json_route_carries_the_same_trace_with_its_own_request_id(client: TestClient,
                                                                         settings: Settings) -> None:
    found = client.post("/api/v1/search", json={"query": QUERY, "tickers": ["NVDA"], "top_k": 3})
    hit = found.json()["hits"][0]
    doc, span = hit["document"]["doc_id"], {"doc_id": hit["document"]["doc_id"], "start": hit["start"],
                                            "end": hit["end"], "quote": hit["text"]}
    responses = [
        found,
        client.get("/api/v1/health"),
        client.get("/api/v1/documents", params={"ticker": "NVDA"}),
        client.get(f"/api/v1/documents/{doc}", params={"start": hit["start"], "end": hit["end"]}),
        client.post("/api/v1/citations/verify", json={"doc_id": doc, "quote": hit["text"]}),
        client.post("/api/v1/citations/verify-batch", json={"citations": [span]}),
        client.get("/api/v1/market/NVDA", params={"as_of": AS_OF}),
        client.get("/api/v1/market/NVDA/series", params={"as_of": AS_OF, "lookback_days": 60}),
        client.get("/api/v1/memory/NVDA", params={"as_of": AS_OF}),
    ]
    traces = [_trace(r) for r in responses]
    assert len({t["request_id"] for t in traces}) == len(traces)
    assert {t["version"] for t in traces} == {__version__}
    assert {t["corpus_signature"] for t in traces} == {corpus_signature([doc])} == {corpus_signature(
        _indexed(settings))}
    assert {t["config_hash"] for t in traces} == {config_hash(settings, PRODUCT)}


def test_the_openapi_schema_declares_the_trace(client: TestClient) -> None:
    spec = client.get("/api/v1/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for name in ("TracedSearchResult", "TracedHealth", "DocumentList", "CitationBatchOut", "TracedRecommendation"):
        assert "trace" in schemas[name]["required"], name
    assert set(schemas["Trace"]["required"]) == {"request_id", "version", "corpus_signature", "config_hash"}


def test_errors_carry_the_request_id_header(client: TestClient) -> None:
    missing = client.get("/api/v1/market/ZZZZQ")
    assert missing.status_code == 404 and len(missing.headers["x-request-id"]) == 32
    bad = client.post("/api/v1/citations/verify-batch", json={"citations": []})
    assert bad.status_code == 422 and bad.headers["x-request-id"] != missing.headers["x-request-id"]


def test_batch_citation_route_reports_each_quote(client: TestClient) -> None:
    hit = client.post("/api/v1/search", json={"query": QUERY, "tickers": ["NVDA"], "top_k": 1}).json()["hits"][0]
    doc = hit["document"]["doc_id"]
    res = client.post("/api/v1/citations/verify-batch", json={"citations": [
        {"doc_id": doc, "start": hit["start"], "end": hit["end"], "quote": hit["text"]},
        {"doc_id": "0" * 64, "start": 0, "end": 5, "quote": "anything"}]}).json()
    ok, unknown = res["results"]
    assert ok["in_claimed_span"] and ok["check"]["match"] == "exact" and (res["verified"], res["total"]) == (1, 2)
    assert unknown["check"] is None and "not in the docstore" in unknown["error"]
    item = {"doc_id": doc, "start": 0, "end": 5, "quote": "x"}
    assert client.post("/api/v1/citations/verify-batch", json={"citations": [item] * 51}).status_code == 422
    assert client.post("/api/v1/citations/verify-batch",
                       json={"citations": [{**item, "start": "zero"}]}).status_code == 422


def test_ingesting_a_document_changes_the_corpus_signature(client: TestClient, settings: Settings,
                                                           tmp_path: Path) -> None:
    before = _trace(client.get("/api/v1/health"))
    page = tmp_path / "SHOE_10-K_2024-03-01.html"
    page.write_text(TINY)
    services = fake_services(settings)
    try:
        report = services.pipeline().run(documents(LocalFileSource(page).iter_results()))
    finally:
        services.docstore.close()
    assert report.documents_added == 1
    after = _trace(client.get("/api/v1/health"))
    assert after["corpus_signature"] != before["corpus_signature"]
    assert after["corpus_signature"] == corpus_signature(_indexed(settings))
    assert after["config_hash"] == before["config_hash"]


def test_a_result_changing_setting_changes_the_config_hash(client: TestClient, settings: Settings) -> None:
    base = _trace(client.get("/api/v1/health"))
    for update, changes in (({"top_k": 5}, True), ({"rrf_bm25_weight": 0.5}, True),
                            ({"audit_key": "another-key-0123456789abcdef"}, False), ({"http_timeout_s": 5.0}, False)):
        other = settings.model_copy(update=update)
        with TestClient(create_app(other, fake_services(other))) as c:
            trace = _trace(c.get("/api/v1/health"))
        assert (trace["config_hash"] != base["config_hash"]) is changes, update
        assert trace["corpus_signature"] == base["corpus_signature"]


def test_error_bodies_carry_the_trace_too(client: TestClient, settings: Settings) -> None:
    """404, 422 from a ConfigError and 422 from request validation: each body has the trace, its request id the
    X-Request-ID header's (issue 31: error bodies carried none)."""
    ok = _trace(client.get("/api/v1/health"))
    responses = [
        client.get("/api/v1/documents/" + "0" * 64),  # no such document: 404
        client.post("/api/v1/search", json={"query": "x", "top_k": 0}),  # request validation: 422
        client.post("/api/v1/search", json={"query": "x", "since": "2025-01-01", "until": "2024-01-01"}),
    ]
    for res in responses:
        assert res.status_code in (404, 422), res.text
        trace = res.json()["trace"]
        assert trace["request_id"] == res.headers["x-request-id"]
        assert trace["corpus_signature"] == ok["corpus_signature"] and trace["config_hash"] == ok["config_hash"]
