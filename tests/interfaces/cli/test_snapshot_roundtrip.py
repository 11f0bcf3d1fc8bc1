"""Record → replay round trip: ``equimind snapshot record`` against the loopback SEC + Yahoo + FRED server
(tests/snapshot_replay.py, serving ../shared/corpus at the real URL paths), then ``--snapshot TMPDIR`` gives the same
``market NVDA --json`` and the same research JSON as ``--snapshot ../shared/corpus``.

What is set aside in the comparison, and why:
- timings (``timings_ms``, ``timings``, a fetch step's ``ms``): run-specific;
- the snapshot folder's own path, which figures and fetch logs name (``location``, ``local_path``): the recorded
  folder's path is replaced by the shipped corpus's path before comparing; every other byte must match.
- News: the shipped corpus holds FMP stock-news (``news/fmp/NVDA_news.csv``), which no live client of EquiMind
  fetches; the recorder writes the live Yahoo stream to ``news/yahoo/NVDA_news.csv``. The fake server serves the
  FMP items reshaped as Yahoo's stream, and the test records all of them (``--news-limit 1000``) so the recorded file
  holds the same headlines, times and summaries. At the as-of date used here (2025-09-30) the recorded headlines
  (May–June 2025) are older than the reader's 30-day window in both folders, so news does not enter either replay;
  tests/sources/test_recorder.py checks the news file's content.
- The research replay runs through the engine with the fast hash embedder on both folders (the same code path as
  ``equimind research`` but for the embedding model, which has nothing to do with what was recorded); ``market``
  runs through the CLI.
The recording itself reports three failures — NVDA filings listed in SEC's submissions whose documents the corpus
does not hold (the server answers 404) — and the shipped corpus lacks them too, so both replays see the same two.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from snapshot_replay import SnapshotReplayServer
from typer.testing import CliRunner

from equimind.interfaces.cli.main import app

pytestmark = [pytest.mark.slow, pytest.mark.integration]

runner = CliRunner()
QUESTION = "Should I invest in NVIDIA?"
RUN_SPECIFIC = frozenset({"timings_ms", "timings", "ms", "request_id"})  # "ms": a fetch step's duration


def _normalise(obj: Any, folder: str, corpus: str) -> Any:
    if isinstance(obj, dict):
        return {k: _normalise(v, folder, corpus) for k, v in obj.items() if k not in RUN_SPECIFIC}
    if isinstance(obj, list):
        return [_normalise(v, folder, corpus) for v in obj]
    if isinstance(obj, str):
        return obj.replace(folder, corpus)
    return obj


def _json(args: list[str], home: Path, env: dict[str, str | None]) -> Any:
    res = runner.invoke(app, [*args, "--home", str(home), "--json"], env=env)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def _research(corpus: Path, shared: Path, home: Path) -> Any:
    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    settings = Settings(home=home, snapshot=corpus.resolve(), shared=shared, provider="offline")
    services = open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                             reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"))
    rec = EquiMindEngine(services).research("NVDA", QUESTION, date(2025, 9, 30))
    return json.loads(rec.model_dump_json())


def test_record_then_replay_matches_the_shipped_corpus(corpus_dir: Path, shared_dir: Path, tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    with SnapshotReplayServer(corpus_dir) as server:
        env: dict[str, str | None] = {
            "EQUIMIND_HOME": str(tmp_path / "record-home"), "EQUIMIND_SHARED": str(shared_dir),
            "EQUIMIND_SEC_IDENTITY": "EquiMind Tests tests@example.com", "EQUIMIND_SEC_BASE_URL": server.url,
            "EQUIMIND_SEC_DATA_URL": server.url, "EQUIMIND_YAHOO_ENDPOINT": server.url,
            "EQUIMIND_FRED_GRAPH_URL": server.url, "EQUIMIND_LBMA_BASE_URL": server.url,
            "EQUIMIND_WORLDBANK_BASE_URL": server.url, "EQUIMIND_SNAPSHOT": None}
        res = runner.invoke(app, ["snapshot", "record", "--tickers", "NVDA", "--out", str(snap), "--since",
                                  "2025-01-01", "--prices-since", "2022-11-01", "--news-limit", "1000"], env=env)
    # the three filings the corpus does not hold, and gold and the two World Bank indicators it never recorded
    assert res.exit_code == 1, res.stderr
    assert res.stderr.count("HTTP 404") == 6 and "6 failure(s)" in res.stdout, res.stderr
    assert "LBMA gold PM" in res.stderr and res.stderr.count("World Bank") >= 2, res.stderr
    replay_env: dict[str, str | None] = {"EQUIMIND_SHARED": str(shared_dir), "EQUIMIND_SNAPSHOT": None,
                                         "EQUIMIND_PROVIDER": "offline"}
    args = ["market", "NVDA", "--as-of", "2025-09-30"]
    replays = {"market": (_json([*args, "--snapshot", str(corpus_dir)], tmp_path / "market-shipped", replay_env),
                          _json([*args, "--snapshot", str(snap)], tmp_path / "market-recorded", replay_env)),
               "research": (_research(corpus_dir, shared_dir, tmp_path / "research-shipped"),
                            _research(snap, shared_dir, tmp_path / "research-recorded"))}
    for name, (shipped, mine) in replays.items():
        assert _normalise(mine, str(snap.resolve()), str(corpus_dir.resolve())) == _normalise(
            shipped, str(snap.resolve()), str(corpus_dir.resolve())), name
        assert str(snap.resolve()) in json.dumps(mine)  # the replay really read the recorded folder
    assert replays["research"][1]["rating"] is not None and replays["research"][1]["bull_case"]
