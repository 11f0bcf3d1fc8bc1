"""Walk-forward backtests on the recorded corpus (fake embedder): no look-ahead, reproducible, real closes.

The planted-future test builds two small corpora in tmp (NVDA only): a faithful copy, and the same with planted
future items -- an absurd price on a bar after the cut day and an extra bar after the data, a 10-Q "filed" after the
cut day whose text says the company collapsed, and an absurd revenue fact filed after the cut day. Every decision
made before the cut day must be byte-identical (same digest of rating, conviction, thesis, claims with citations,
judge and figures); a decision after it must see the planted data (so the test is not vacuous).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from equimind.backtest.models import BacktestReport, BacktestRequest
from equimind.backtest.runner import Backtester
from equimind.backtest.store import BacktestStore
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.embedding.rerank import FixedScoreReranker
from equimind.ingest.tokens import WhitespaceTokenizer

pytestmark = pytest.mark.integration

NVDA_CIK = "0001045810"
CUT = date(2025, 5, 15)  # the planted items are dated on this day or later
REQUEST = BacktestRequest(tickers=["NVDA"], start=date(2025, 3, 3), end=date(2025, 6, 3), n_resamples=500)
_WORD = re.compile(r"[a-z0-9]+")


def _overlap(query: str, text: str) -> float:
    q = set(_WORD.findall(query.lower()))
    return len(q & set(_WORD.findall(text.lower()))) / max(1, len(q))


def fast_backtester(home: Path, corpus: Path) -> Backtester:
    settings = Settings(home=home, snapshot=corpus, shared=corpus.parent, provider="offline")
    return Backtester(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                      reranker=FixedScoreReranker(_overlap, name="word-overlap"))


def _copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return dest


def nvda_corpus(real: Path, dest: Path, *, plant: bool) -> Path:
    """NVDA's slice of the recorded corpus, optionally with planted future items."""
    for rel in ("sec/company_tickers.json", f"sec/submissions/CIK{NVDA_CIK}.json",
                "sec/filings/NVDA/nvda-10-k-2025-02-26.html", "sec/filings/NVDA/nvda-10-q-2025-08-27.html"):
        _copy(real / rel, dest / rel)
    shutil.copytree(real / "sentiment", dest / "sentiment")
    with (real / "sec/filings/manifest.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = list(reader.fieldnames or []), [r for r in reader if r["ticker"] == "NVDA"]
    facts = json.loads((real / f"sec/companyfacts/CIK{NVDA_CIK}.json").read_text(encoding="utf-8"))
    with (real / "prices/NVDA.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        price_fields, bars = list(reader.fieldnames or []), list(reader)
    if plant:
        rows, bars = _plant(real, dest, rows, facts, bars)
    _write_csv(dest / "sec/filings/manifest.csv", fields, rows)
    _write_csv(dest / "prices/NVDA.csv", price_fields, bars)
    (dest / "sec/companyfacts").mkdir(parents=True, exist_ok=True)
    (dest / f"sec/companyfacts/CIK{NVDA_CIK}.json").write_text(json.dumps(facts), encoding="utf-8")
    return dest


def _plant(real: Path, dest: Path, rows: list[dict[str, str]], facts: dict[str, Any],
           bars: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    html = (real / "sec/filings/NVDA/nvda-10-q-2025-08-27.html").read_text(encoding="utf-8")
    marker = ("<p>PLANTED FUTURE FILING: NVIDIA revenue collapsed ninety-nine percent and the company expects "
              "bankruptcy.</p>")
    (dest / "sec/filings/NVDA/planted-10-q.html").write_text(html.replace("<body>", "<body>" + marker, 1),
                                                               encoding="utf-8")
    rows = [*rows, {**rows[-1], "form": "10-Q", "filing_date": CUT.isoformat(), "period_of_report": "2025-04-27",
                    "accession_number": "0001045810-25-999999", "primary_document": "planted.htm",
                    "path": "NVDA/planted-10-q.html"}]
    revenue = facts["facts"]["us-gaap"]["Revenues"]["units"]["USD"]
    revenue.append({"start": "2025-01-27", "end": "2025-04-27", "val": 1, "accn": "0001045810-25-999999",
                    "fy": 2026, "fp": "Q1", "form": "10-Q", "filed": CUT.isoformat()})
    absurd = "99999.0"
    for b in bars:
        if b["Date"].startswith(CUT.isoformat()):
            b.update(Open=absurd, High=absurd, Low=absurd, Close=absurd)
    bars = [*bars, {**bars[-1], "Date": "2025-11-10 00:00:00-05:00", "Open": absurd, "High": absurd,
                    "Low": absurd, "Close": absurd}]
    return rows, bars


def _write_csv(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> dict[str, Any]:
    """Three runs of the same request: clean twice (same home), planted once (another home)."""
    root = tmp_path_factory.mktemp("backtest")
    clean = nvda_corpus(corpus_dir, root / "clean_corpus", plant=False)
    planted = nvda_corpus(corpus_dir, root / "planted_corpus", plant=True)
    tester = fast_backtester(root / "home_clean", clean)
    first, second = tester.run(REQUEST), tester.run(REQUEST)
    tester.store.close()
    other = fast_backtester(root / "home_planted", planted)
    planted_report = other.run(REQUEST)
    other.store.close()
    return {"clean": first, "again": second, "planted": planted_report, "home": root / "home_clean",
            "planted_home": root / "home_planted"}


def _decided(report: BacktestReport) -> dict[date, Any]:
    return {d.decided_at: d for d in report.decisions}


def _stored_recommendation(home: Path, run_id: str, day: date) -> dict[str, Any]:
    store = BacktestStore(home / "backtest.sqlite")
    try:
        pred = next(p for p in store.predictions(run_id) if p.decided_at == day)
    finally:
        store.close()
    rec: dict[str, Any] = json.loads(pred.recommendation_json)
    return rec


def test_schedule_and_real_closes(runs: dict[str, Any]) -> None:
    report: BacktestReport = runs["clean"]
    assert report.schedule == [date(2025, 3, 3), date(2025, 4, 3), date(2025, 5, 3), date(2025, 6, 3)]
    assert report.n_decisions == 4 and report.n_rated + report.n_refused == 4
    by_day = _decided(report)
    # NVIDIA closed at 114.06 on 2025-03-03 and 101.80 on 2025-04-03 (as traded); 2025-05-03 is a Saturday
    assert by_day[date(2025, 3, 3)].close == pytest.approx(114.06, abs=0.005)
    assert by_day[date(2025, 4, 3)].close == pytest.approx(101.80, abs=0.005)
    assert by_day[date(2025, 5, 3)].close_bar_date == date(2025, 5, 2)
    assert all(d.close_check.startswith("equals research's last_close") for d in report.decisions)
    assert all(d.n_figures > 0 for d in report.decisions)  # every decision got its figures (primed)


def test_forward_returns_stop_at_the_data(runs: dict[str, Any]) -> None:
    report: BacktestReport = runs["clean"]
    by_day = _decided(report)
    assert report.data_end == date(2025, 11, 7)
    late = by_day[date(2025, 6, 3)]
    assert late.forward_returns[1] is not None and late.forward_returns[3] is not None
    assert late.forward_returns[6] is None  # 2025-12-03 is after the last bar: never extrapolated
    early = by_day[date(2025, 3, 3)]
    assert early.forward_returns[1] == pytest.approx(101.80 / 114.06 - 1, abs=0.002)  # no dividend in between
    assert early.benchmark_returns == early.forward_returns  # a one-ticker universe is its own benchmark
    assert report.table[2].n_pending == (1 if late.rating else 0)


def test_planted_future_items_change_no_earlier_decision(runs: dict[str, Any]) -> None:
    clean, planted = _decided(runs["clean"]), _decided(runs["planted"])
    for day in (date(2025, 3, 3), date(2025, 4, 3), date(2025, 5, 3)):
        a, b = clean[day], planted[day]
        assert (a.rating, a.conviction, a.digest) == (b.rating, b.conviction, b.digest), day
        ra = _stored_recommendation(runs["home"], runs["clean"].run_id, day)
        rb = _stored_recommendation(runs["planted_home"], runs["planted"].run_id, day)
        for key in ("rating", "conviction", "thesis", "bull_case", "bear_case", "judge"):
            assert ra[key] == rb[key], (day, key)
        assert [(f["id"], f["value"], f["as_of"], f["inputs"]) for f in ra["figures"]] == \
            [(f["id"], f["value"], f["as_of"], f["inputs"]) for f in rb["figures"]]
        assert "PLANTED" not in json.dumps(rb)
    # after the cut the planted data is visible (the 2025-05-15 bar at 99999 moves the moving averages)
    assert clean[date(2025, 6, 3)].digest != planted[date(2025, 6, 3)].digest


def test_decisions_are_reproducible(runs: dict[str, Any]) -> None:
    first, again = runs["clean"], runs["again"]
    assert first.run_id != again.run_id
    assert [(d.decided_at, d.rating, d.conviction, d.digest) for d in first.decisions] == \
        [(d.decided_at, d.rating, d.conviction, d.digest) for d in again.decisions]
    assert first.statistics == again.statistics


def test_tracker_holds_predictions_outcomes_and_statistics(runs: dict[str, Any]) -> None:
    report: BacktestReport = runs["clean"]
    store = BacktestStore(runs["home"] / "backtest.sqlite")
    try:
        assert [r.status for r in store.runs()] == ["done", "done"]
        decisions = store.decisions(report.run_id)
        summary = store.summary(report.run_id, report.request.horizons, n_resamples=500, seed=0)
        stored = BacktestReport.model_validate_json(store.report_json(report.run_id))
    finally:
        store.close()
    assert len(decisions) == report.n_rated
    assert json.loads(json.dumps(summary, default=str)) == json.loads(json.dumps(report.statistics, default=str))
    assert stored.decisions == report.decisions


def test_artifacts_written(runs: dict[str, Any]) -> None:
    report: BacktestReport = runs["clean"]
    assert report.plot_path is not None and report.report_path is not None
    assert Path(report.plot_path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = Path(report.report_path).read_text(encoding="utf-8")
    assert "| horizon |" in md and "proves little" in md
    assert len(report.equity_curve) == 5  # start + 4 holding periods (the last ends 2025-07-03, inside the data)
    assert not (runs["home"] / "backtest" / "runs" / report.run_id).exists()  # research stores removed
