"""POST /api/v1/backtest and the stored-report routes, on a real app with fake models over the recorded corpus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from equimind.app.services import open_services
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.embedding.rerank import FixedScoreReranker
from equimind.ingest.tokens import WhitespaceTokenizer
from equimind.interfaces.api.app import create_app
from equimind.interfaces.api.backtest import router

_WORD = re.compile(r"[a-z0-9]+")


def _overlap(query: str, text: str) -> float:
    q = set(_WORD.findall(query.lower()))
    return len(q & set(_WORD.findall(text.lower()))) / max(1, len(q))


def _app(settings: Settings) -> FastAPI:
    services = open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                             reranker=FixedScoreReranker(_overlap, name="word-overlap"))
    app = create_app(settings, services=services)
    if not any(getattr(r, "path", "") == "/api/v1/backtest" for r in app.routes):
        app.include_router(router)  # until create_app includes it
    return app


@pytest.mark.integration
def test_backtest_routes(tmp_path: Path, corpus_dir: Path) -> None:
    settings = Settings(home=tmp_path / "home", snapshot=corpus_dir, shared=corpus_dir.parent)
    body = {"tickers": ["NVDA"], "start": "2025-03-03", "end": "2025-03-03", "n_resamples": 200}
    with TestClient(_app(settings)) as client:
        res = client.post("/api/v1/backtest", json=body)
        assert res.status_code == 200, res.text
        report = res.json()
        assert report["n_decisions"] == 1 and report["schedule"] == ["2025-03-03"]
        decision = report["decisions"][0]
        assert decision["close"] == pytest.approx(114.06, abs=0.005)
        assert decision["forward_returns"]["1"] is not None and report["table"][0]["horizon_months"] == 1
        stored = client.get(f"/api/v1/backtest/{report['run_id']}")
        assert stored.status_code == 200 and stored.json()["decisions"] == report["decisions"]
        png = client.get(f"/api/v1/backtest/{report['run_id']}/equity.png")
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content[:4] == b"\x89PNG"
        cal = stored.json()["calibration"]["1"]  # calibration per horizon (issue 31)
        assert cal["horizon_months"] == 1 and "verdict" in cal and len(cal["buckets"]) == 4
        rel = client.get(f"/api/v1/backtest/{report['run_id']}/reliability.png")
        assert rel.status_code == 200 and rel.content[:4] == b"\x89PNG"
        listed = client.get("/api/v1/backtest").json()
        assert listed["runs"][0]["run_id"] == report["run_id"] and listed["runs"][0]["tickers"] == ["NVDA"]
        assert listed["trace"]["request_id"]
        assert client.get("/api/v1/backtest/bt-20990101-000000-abcdef").status_code == 404
        assert client.get("/api/v1/backtest/not-a-run-id").status_code == 422
        bad = client.post("/api/v1/backtest", json={**body, "start": "2025-09-01"})
        assert bad.status_code == 422 and "after end" in bad.text
        late = client.post("/api/v1/backtest", json={**body, "start": "2025-11-03", "end": "2025-12-01"})
        assert late.status_code == 422 and "end on or before 2025-11-07" in late.text
        unknown = client.post("/api/v1/backtest", json={**body, "tickers": ["ZZZZQ"]})
        assert unknown.status_code == 404 and "ZZZZQ" in unknown.text
        early = client.post("/api/v1/backtest", json={**body, "start": "2020-01-02", "end": "2020-01-02"})
        assert early.status_code == 404 and "data starts" in early.text


def test_backtest_needs_a_snapshot(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    body = {"tickers": ["NVDA"], "start": "2025-03-03", "end": "2025-03-03"}
    with TestClient(_app(settings)) as client:
        res = client.post("/api/v1/backtest", json=body)
    assert res.status_code == 422 and "--snapshot" in res.text
