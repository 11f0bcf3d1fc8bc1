"""REST API over real stores (NVDA's recorded 10-K, hash embedder), through FastAPI's TestClient and a live uvicorn."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from interfaces_fakes import AS_OF, fake_services, ingest, live_server

from equimind.core.config import RETRIEVAL_MODES, Settings
from equimind.core.research import Recommendation
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.interfaces.api.app import create_app
from equimind.interfaces.api.models import RetrievalModeName

PRODUCT = PRODUCT_FORMAT.value

pytestmark = pytest.mark.integration

QUERY = "export controls restrict sales of data center GPUs to China"


@pytest.fixture(scope="module")
def client(nvda_settings: Settings) -> Iterator[TestClient]:
    services = fake_services(nvda_settings)
    with TestClient(create_app(nvda_settings, services)) as c:
        yield c


@pytest.fixture(scope="module")
def hit(client: TestClient) -> dict[str, Any]:
    res = client.post("/api/v1/search", json={"query": QUERY, "tickers": ["NVDA"], "top_k": 3})
    assert res.status_code == 200, res.text
    hits: list[dict[str, Any]] = res.json()["hits"]
    assert hits
    return hits[0]


def _errors(res: Any) -> dict[str, str]:
    """422 body -> {dotted field location: message}."""
    assert res.status_code == 422, res.text
    return {".".join(str(p) for p in e["loc"]): e["msg"] for e in res.json()["detail"]}


# --------------------------------------------------------------------------------------------------------- health


def test_health_reports_real_component_status(client: TestClient) -> None:
    h = client.get("/api/v1/health").json()
    assert h["status"] == "ok"
    assert h["mode"] == "snapshot" and h["snapshot"]
    assert h["store"]["documents"] == 1 and h["store"]["indexed"] == 1 and h["store"]["chunks"] > 100
    stamp = {"embedder": "hash-384", "text_format": PRODUCT, "legacy": False}
    assert h["embedder"] == {"name": "hash-384", "dim": 384, "available": True, "text_format": PRODUCT,
                             "stored": stamp}
    assert h["reranker"]["name"] == "word-overlap" and h["reranker"]["available"] is True
    assert h["provider"] == "offline"


def test_retrieval_modes_match_settings() -> None:
    assert set(RetrievalModeName.__args__) == set(RETRIEVAL_MODES)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------------------- search


def test_search_returns_filtered_hits_whose_spans_round_trip(client: TestClient, hit: dict[str, Any]) -> None:
    res = client.post("/api/v1/search", json={"query": QUERY, "tickers": ["nvda"], "forms": ["10-k"],
                                              "mode": "hybrid+rerank", "top_k": 5}).json()
    assert res["filters"] == {"tickers": ["NVDA"], "forms": ["10-K"]}
    assert 1 <= len(res["hits"]) <= 5
    assert all(h["document"]["ticker"] == "NVDA" and h["document"]["form"] == "10-K" for h in res["hits"])
    assert all(h["scores"]["rerank_score"] is not None for h in res["hits"])
    span = client.get(f"/api/v1/documents/{hit['document']['doc_id']}",
                      params={"start": hit["start"], "end": hit["end"], "context": 50}).json()
    assert span["text"] == hit["text"]
    assert len(span["before"]) == min(50, hit["start"]) and len(span["after"]) <= 50
    assert span["document"]["ticker"] == "NVDA"


def test_search_date_filter_excludes_the_filing(client: TestClient) -> None:
    res = client.post("/api/v1/search", json={"query": QUERY, "until": "2024-12-31"}).json()
    assert res["hits"] == []


def test_search_parses_company_and_year_from_the_query_and_says_so(client: TestClient) -> None:
    q = "What did NVIDIA say about export controls in fiscal 2025?"
    auto = client.post("/api/v1/search", json={"query": q, "top_k": 3}).json()
    assert auto["auto_filter"].startswith("filter parser from the query".replace("parser", "parsed"))
    assert "NVIDIA" in auto["auto_filter"] and "fiscal 2025" in auto["auto_filter"]
    assert auto["filters"]["doc_ids"] and all(h["document"]["ticker"] == "NVDA" for h in auto["hits"])
    # a year the company has no document for does not narrow (the user may ask about a comparative year)
    other = client.post("/api/v1/search", json={"query": "NVIDIA revenue in fiscal 2011", "top_k": 3}).json()
    assert "fiscal" not in other["auto_filter"] and other["filters"]["doc_ids"] == auto["filters"]["doc_ids"]
    off = client.post("/api/v1/search", json={"query": q, "top_k": 3, "auto_filter": False}).json()
    assert off["auto_filter"] is None and off["filters"] == {}
    nobody = client.post("/api/v1/search", json={"query": "export controls", "top_k": 3}).json()
    assert nobody["filters"] == {} and "no stored company" in nobody["auto_filter"]
    # an explicit filter is the caller's: nothing is parsed
    given = client.post("/api/v1/search", json={"query": q, "tickers": ["NVDA"], "top_k": 3}).json()
    assert given["auto_filter"] is None and given["filters"] == {"tickers": ["NVDA"]}


@pytest.mark.parametrize(("body", "field", "needle"), [
    ({"query": ""}, "body.query", "at least 1 character"),
    ({"query": "   "}, "body.query", "non-space"),
    ({"query": "gpu", "top_k": 0}, "body.top_k", "greater than or equal to 1"),
    ({"query": "gpu", "mode": "semantic"}, "body.mode", "hybrid"),
    ({"query": "gpu", "tickers": ["NV DA!"]}, "body.tickers.0", "pattern"),
    ({"query": "gpu", "since": "2025-03-01", "until": "2025-01-01"}, "body", "swap"),
    ({"query": "gpu", "k": 5}, "body.k", "Extra inputs are not permitted"),
    ({"query": "gpu", "since": "yesterday"}, "body.since", "date"),
])
def test_search_validation_errors_name_the_field(client: TestClient, body: dict[str, Any], field: str,
                                                 needle: str) -> None:
    errors = _errors(client.post("/api/v1/search", json=body))
    assert field in errors, errors
    assert needle.lower() in errors[field].lower()


def test_search_unknown_ticker_is_404_with_hint(client: TestClient) -> None:
    res = client.post("/api/v1/search", json={"query": "gpu", "tickers": ["ZZZZQ"]})
    assert res.status_code == 404
    body = res.json()
    assert "ZZZZQ" in body["detail"] and "NVDA" in body["hint"]


# --------------------------------------------------------------------------------------------------------- documents


def test_document_span_errors(client: TestClient, hit: dict[str, Any]) -> None:
    doc = hit["document"]["doc_id"]
    assert "query.end" in _errors(client.get(f"/api/v1/documents/{doc}", params={"start": 10, "end": 10}))
    assert "query.end" in _errors(client.get(f"/api/v1/documents/{doc}", params={"start": 0, "end": 30000}))
    assert "path.doc_id" in _errors(client.get("/api/v1/documents/not-a-hash", params={"start": 0, "end": 5}))
    beyond = client.get(f"/api/v1/documents/{doc}", params={"start": 99_999_000, "end": 99_999_010})
    assert beyond.status_code == 422 and "outside document" in beyond.text
    missing = client.get(f"/api/v1/documents/{'0' * 64}", params={"start": 0, "end": 5})
    assert missing.status_code == 404 and "ingest" in missing.json()["detail"]


def test_document_listing(client: TestClient, hit: dict[str, Any]) -> None:
    docs = client.get("/api/v1/documents", params={"ticker": "NVDA"}).json()
    assert [d["doc_id"] for d in docs["documents"]] == [hit["document"]["doc_id"]] and docs["total"] == 1
    assert client.get("/api/v1/documents", params={"ticker": "AAPL"}).json()["documents"] == []
    assert client.get("/api/v1/documents", params={"until": "2025-01-31"}).json()["total"] == 0  # filed 2025-02-26
    assert "query.until" in _errors(client.get("/api/v1/documents", params={"since": "2025-03-01",
                                                                             "until": "2025-01-01"}))


def test_verify_citation(client: TestClient, hit: dict[str, Any]) -> None:
    doc = hit["document"]["doc_id"]
    quote = hit["text"][:120]
    ok = client.post("/api/v1/citations/verify", json={"doc_id": doc, "quote": quote}).json()
    assert ok["verified"] and ok["match"] == "exact" and ok["start"] == hit["start"]
    bad = client.post("/api/v1/citations/verify",
                      json={"doc_id": doc, "quote": "NVIDIA sells refrigerators and garden furniture."}).json()
    assert not bad["verified"] and bad["match"] in ("closest", "none")


# --------------------------------------------------------------------------------------------------------- market


def test_market_report_respects_as_of(client: TestClient) -> None:
    rep = client.get("/api/v1/market/nvda", params={"as_of": AS_OF}).json()
    assert rep["ticker"] == "NVDA" and rep["mode"] == "snapshot"
    assert rep["last_close"]["as_of"] <= AS_OF and rep["last_close"]["value"] > 0
    assert {f["id"] for f in rep["indicators"]} >= {"sma_20", "rsi_14", "macd_12_26"}


def test_market_series_matches_report_and_formulas(client: TestClient) -> None:
    s = client.get("/api/v1/market/NVDA/series", params={"as_of": AS_OF, "lookback_days": 180}).json()
    rep = client.get("/api/v1/market/NVDA", params={"as_of": AS_OF}).json()
    dates = s["dates"]
    assert dates == sorted(dates) and dates[-1] <= AS_OF
    assert date.fromisoformat(dates[0]) >= date.fromisoformat(AS_OF) - timedelta(days=180)
    n = len(dates)
    keys = ("open", "high", "low", "close", "volume", "sma_20", "sma_50", "sma_200", "bb_upper", "bb_middle",
            "bb_lower", "rsi_14", "macd", "macd_signal", "macd_hist")
    assert all(len(s[k]) == n for k in keys)
    assert s["sma_20"][-1] == pytest.approx(float(np.mean(s["close"][-20:])), rel=1e-6)
    std = float(np.std(s["close"][-20:]))
    assert s["bb_upper"][-1] == pytest.approx(s["sma_20"][-1] + 2 * std, rel=1e-5)
    assert all(0 <= v <= 100 for v in s["rsi_14"] if v is not None)
    assert s["macd_hist"][-1] == pytest.approx(s["macd"][-1] - s["macd_signal"][-1], abs=1e-5)
    figures = {f["id"]: f["value"] for f in rep["indicators"]}
    for fid, key in (("sma_200", "sma_200"), ("rsi_14", "rsi_14"), ("macd_12_26", "macd"),
                     ("macd_signal_9", "macd_signal"), ("bb_lower_20_2", "bb_lower")):
        assert s[key][-1] == pytest.approx(figures[fid], rel=1e-5), fid


def test_market_errors(client: TestClient) -> None:
    unknown = client.get("/api/v1/market/ZZZZQ")
    assert unknown.status_code == 404 and "NVDA" in unknown.json()["hint"]
    future = (date.today() + timedelta(days=3)).isoformat()
    assert "query.as_of" in _errors(client.get("/api/v1/market/NVDA", params={"as_of": future}))
    assert "path.ticker" in _errors(client.get("/api/v1/market/%24%24%24"))
    early = client.get("/api/v1/market/NVDA/series", params={"as_of": "2020-01-02"})
    assert early.status_code == 404 and "no price bars" in early.json()["detail"]


def test_memory_of_a_fresh_ticker_is_empty(client: TestClient) -> None:
    mem = client.get("/api/v1/memory/NVDA", params={"as_of": AS_OF}).json()
    assert mem["ticker"] == "NVDA" and mem["evidence_count"] == len(mem["evidence"])
    assert client.get("/api/v1/memory/ZZZZQ").status_code == 404


# --------------------------------------------------------------------------------------------------------- pages


def test_openapi_docs_and_dashboard_are_served_locally(client: TestClient) -> None:
    spec = client.get("/api/v1/openapi.json").json()
    assert {"/api/v1/health", "/api/v1/search", "/api/v1/research", "/api/v1/research/stream",
            "/api/v1/memory/{ticker}", "/api/v1/market/{ticker}", "/api/v1/market/{ticker}/series",
            "/api/v1/documents/{doc_id}"} <= set(spec["paths"])
    for page in ("/", "/api/v1/docs"):
        res = client.get(page)
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in res.headers["content-security-policy"]
        text = res.text.replace('<a href="https://www.tradingview.com/"', "")  # the chart's attribution link
        assert "http://" not in text and "https://" not in text  # no CDN
    for asset in ("app.js", "ask.js", "chart.js", "style.css", "docs.js"):
        res = client.get(f"/static/{asset}")
        assert res.status_code == 200 and "https://" not in res.text.replace("http://www.w3.org/2000/svg", "")
    lib = client.get("/static/vendor/lightweight-charts/lightweight-charts.standalone.production.js")
    assert lib.status_code == 200 and "javascript" in lib.headers["content-type"]
    assert "Lightweight Charts™ v5.2.1" in lib.text[:300]  # the vendored library is served with the page


# --------------------------------------------------------------------------------------------------------- research


def _citations(rec: Recommendation) -> list[Any]:
    return [c for claim in rec.bull_case + rec.bear_case for c in claim.citations]


def test_research_returns_a_recommendation_with_verifiable_citations(client: TestClient) -> None:
    res = client.post("/api/v1/research", json={"ticker": "nvda", "question": "Should I invest in NVIDIA?",
                                                "as_of": AS_OF, "provider": "offline"})
    assert res.status_code == 200, res.text
    rec = Recommendation.model_validate(res.json())
    assert rec.ticker == "NVDA" and rec.as_of.isoformat() == AS_OF and rec.provider == "offline"
    for c in _citations(rec):
        span = client.get(f"/api/v1/documents/{c.doc_id}", params={"start": c.start, "end": c.end}).json()
        assert span["text"] == c.quote and span["doc_sha256"] == c.doc_sha256
        assert span["document"]["filed_at"] <= AS_OF


def test_research_validation(client: TestClient) -> None:
    errors = _errors(client.post("/api/v1/research", json={"ticker": "NVDA", "question": "x", "provider": "gpt"}))
    assert "offline" in errors["body.provider"]
    future = (date.today() + timedelta(days=1)).isoformat()
    errors = _errors(client.post("/api/v1/research", json={"ticker": "NVDA", "question": "x", "as_of": future}))
    assert "future" in errors["body.as_of"]
    assert "body.question" in _errors(client.post("/api/v1/research", json={"ticker": "NVDA"}))
    unknown = client.post("/api/v1/research", json={"ticker": "ZZZZQ", "question": "buy?"})
    assert unknown.status_code == 404 and "NVDA" in unknown.json()["hint"]


def test_research_provider_override_reaches_the_debate(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request's provider replaces the server's (offline) one for this run: without a key it is refused."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = client.post("/api/v1/research", json={"ticker": "NVDA", "question": "Buy?", "as_of": AS_OF,
                                                "provider": "OpenAI"})
    assert res.status_code == 422 and "OPENAI_API_KEY" in res.text


def _sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith(":")]
        name = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), "message")
        data = "\n".join(ln[5:].removeprefix(" ") for ln in lines if ln.startswith("data:"))
        if data:
            events.append((name, json.loads(data)))
    return events


def test_research_stream_sends_stages_then_the_recommendation(client: TestClient) -> None:
    with client.stream("POST", "/api/v1/research/stream",
                       json={"ticker": "NVDA", "question": "What are the main risks?", "as_of": AS_OF}) as res:
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/event-stream")
        events = _sse(res.read().decode())
    names = [n for n, _ in events]
    assert names[-1] == "recommendation" and names.count("recommendation") == 1
    stages = [d for n, d in events if n == "stage"]
    assert len(stages) >= 3 and all({"stage", "message"} <= set(d) for d in stages)
    assert any(d["iteration"] == 1 for d in stages)
    assert Recommendation.model_validate(events[-1][1]).ticker == "NVDA"
    assert events[-1][1]["trace"]["request_id"] == res.headers["x-request-id"]  # the final event carries the trace
    unknown = client.post("/api/v1/research/stream", json={"ticker": "ZZZZQ", "question": "buy?"})
    assert unknown.status_code == 404


# --------------------------------------------------------------------------------------------------------- concurrency


def test_concurrent_requests_while_an_ingest_writes(tmp_path: Path, nvda_template: Path, corpus_dir: Path) -> None:
    """16 parallel searches and health checks on a live server while another filing is ingested into the store."""
    from interfaces_fakes import copy_home

    home = copy_home(nvda_template, tmp_path / "home")
    settings = Settings(home=home, snapshot=corpus_dir)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            ingest(settings, corpus_dir, ("NVDA",), ("10-Q",))
        except BaseException as exc:  # reported below
            errors.append(exc)

    with live_server(create_app(settings, fake_services(settings))) as base, httpx.Client(base_url=base) as http:
        thread = threading.Thread(target=writer)
        thread.start()

        def one(i: int) -> tuple[int, int]:
            if i % 4 == 0:
                return http.get("/api/v1/health").status_code, 0
            r = http.post("/api/v1/search", json={"query": QUERY, "tickers": ["NVDA"], "top_k": 5}, timeout=120)
            return r.status_code, len(r.json()["hits"])

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(one, range(48)))
        thread.join(timeout=300)
        final = http.get("/api/v1/health").json()
    assert not errors, errors
    assert all(code == 200 for code, _ in results), results
    assert all(n > 0 for i, (_, n) in enumerate(results) if i % 4)
    assert final["store"]["documents"] == 2 and final["store"]["pending"] == 0


def test_research_stream_is_live(tmp_path: Path, nvda_template: Path, corpus_dir: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage events reach the client while the run is still going, not in one burst at the end (a fresh store, so
    the run does its fetches instead of reusing an earlier run's figures). No clock: the run is held after its
    first stage event until the client has read that event off the wire; a stream that buffered until the end
    would deliver nothing while the run waits, and the wait would time out."""
    from interfaces_fakes import copy_home

    settings = Settings(home=copy_home(nvda_template, tmp_path / "home"), snapshot=corpus_dir,
                        shared=corpus_dir.parent)
    client_saw_stage = threading.Event()
    held: list[bool] = []  # per hold: did the client read the stage event while the run waited?
    names: list[str] = []
    app = create_app(settings, fake_services(settings))
    with live_server(app) as base, httpx.Client(base_url=base, timeout=300) as http:
        engine = app.state.engine
        research = engine.research

        def held_after_first_stage(*args: Any, on_event: Any = None, **kwargs: Any) -> Any:
            def relay(event: Any) -> None:
                on_event(event)
                if not held:
                    held.append(client_saw_stage.wait(timeout=120))
            return research(*args, on_event=relay, **kwargs)

        monkeypatch.setattr(engine, "research", held_after_first_stage)
        with http.stream("POST", "/api/v1/research/stream",
                         json={"ticker": "NVDA", "question": "Is the valuation stretched?", "as_of": AS_OF}) as res:
            for line in res.iter_lines():
                if line.startswith("event:"):
                    names.append(line[6:].strip())
                    if names[-1] == "stage":
                        client_saw_stage.set()
    assert held == [True], names  # the first stage arrived while the run was still waiting to go on
    assert names[0] == "stage" and names[-1] == "recommendation" and names.count("stage") >= 3, names


# --------------------------------------------------------------------------------------------------------- ask


def test_ask_answers_with_verified_quotes_and_streams(client: TestClient) -> None:
    body = {"question": "What was NVIDIA's data center revenue in fiscal 2025?", "as_of": AS_OF}
    res = client.post("/api/v1/ask", json=body)
    assert res.status_code == 200, res.text
    ans = res.json()
    # the recorded 10-K's segment table answers it (Data Center: $115,186 million): an answer, not a refusal
    assert ans["ticker"] == "NVDA" and ans["support"] in ("supported", "partial"), ans.get("refusal")
    quotes = [q for s in ans["sentences"] for q in s["quotes"]]
    assert quotes, ans["sentences"]
    assert any("115,186" in q["text"] for q in quotes), [q["text"] for q in quotes]
    for q in quotes:  # every quote is a span of a stored filing, verified independently
        check = client.post("/api/v1/citations/verify", json={"doc_id": q["doc_id"], "quote": q["text"]}).json()
        assert check["verified"] and (check["start"], check["end"]) == (q["start"], q["end"]), (q, check)
    with client.stream("POST", "/api/v1/ask/stream", json={**body, "ticker": "NVDA"}) as stream:
        assert stream.status_code == 200
        events = _sse(stream.read().decode())
    assert [n for n, _ in events][-1] == "answer" and any(n == "stage" for n, _ in events)
    assert events[-1][1]["question"] == body["question"]
    assert events[-1][1]["trace"]["request_id"] == stream.headers["x-request-id"]
    assert events[-1][1]["trace"]["config_hash"] == ans["trace"]["config_hash"]


def test_ask_bad_input(client: TestClient) -> None:
    assert "body.question" in _errors(client.post("/api/v1/ask", json={"ticker": "NVDA"}))
    assert client.post("/api/v1/ask", json={"question": "What was revenue?", "ticker": "ZZZZQ"}).status_code == 404
    amb = client.post("/api/v1/ask", json={"question": "What was revenue of Apple and Microsoft?", "as_of": AS_OF})
    assert amb.status_code == 422 and "several companies" in amb.text
