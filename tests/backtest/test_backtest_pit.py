"""Point-in-time corpus views: prices restated as of the day, facts and filings cut at the day."""

from __future__ import annotations

import csv
import json
import math
from datetime import date, timedelta
from pathlib import Path

import pytest

from equimind.analytics.indicators import unadjust_dividends
from equimind.backtest.pit import PointInTimeCorpus, filter_companyfacts, filter_submissions, pit_price_rows
from equimind.core.errors import ConfigError

DAYS = [date(2024, 1, 1) + timedelta(days=i) for i in range(10)]
RAW = [100.0, 102.0, 101.0, 103.0, 104.0, 52.5, 53.0, 52.0, 54.0, 55.0]  # as traded; 2-for-1 split on day 5
DIVS = {3: 1.0, 8: 0.5}  # ex-dates (index) -> cash dividend per share as paid then (day 8 is post-split)
SPLIT_AT = 5


def yahoo_rows(n: int) -> list[dict[str, str]]:
    """What Yahoo serves after the first ``n`` days: split-adjusted, then CRSP dividend-adjusted, as of day n-1."""
    raw = [RAW[i] / (2.0 if i < SPLIT_AT <= n - 1 else 1.0) for i in range(n)]
    div = [DIVS.get(i, 0.0) / (2.0 if i < SPLIT_AT <= n - 1 else 1.0) for i in range(n)]
    mult, m = [1.0] * n, 1.0
    for t in range(n - 1, -1, -1):
        if t + 1 < n and div[t + 1] > 0:
            m *= 1 - div[t + 1] / raw[t]
        mult[t] = m
    return [{"Date": f"{DAYS[i]} 00:00:00-05:00", "Open": repr(raw[i] * mult[i] * 0.99),
             "High": repr(raw[i] * mult[i] * 1.01), "Low": repr(raw[i] * mult[i] * 0.98),
             "Close": repr(raw[i] * mult[i]), "Volume": str(1000 * (2 if i < SPLIT_AT <= n - 1 else 1)),
             "Dividends": repr(div[i]), "Stock Splits": "2.0" if i == SPLIT_AT else "0.0"} for i in range(n)]


@pytest.mark.parametrize("cut", [2, 4, 6, 9])
def test_view_equals_what_was_served_that_day(cut: int) -> None:
    """The full series cut at day ``cut`` and restated matches the series Yahoo served on that day."""
    view = pit_price_rows(yahoo_rows(len(RAW)), DAYS[cut])
    served = yahoo_rows(cut + 1)
    assert [r["Date"] for r in view] == [r["Date"] for r in served]
    for got, want in zip(view, served, strict=True):
        for col in ("Open", "High", "Low", "Close", "Dividends"):
            assert float(got[col]) == pytest.approx(float(want[col]), rel=1e-12), (cut, col)
        assert int(got["Volume"]) == int(want["Volume"])


def test_view_close_unadjusts_to_the_traded_price() -> None:
    view = pit_price_rows(yahoo_rows(len(RAW)), DAYS[4])  # before the split: pre-split traded prices
    closes = [float(r["Close"]) for r in view]
    traded = unadjust_dividends(closes, [float(r["Dividends"]) for r in view])
    assert traded == pytest.approx(RAW[:5], rel=1e-12)


def test_future_rows_do_not_change_the_view() -> None:
    """An absurd later bar changes nothing. (Not on the bar before a later ex-date: Yahoo's factor for that
    dividend is computed from that close, so changing it without re-adjusting the history is an inconsistent series;
    ``test_view_equals_what_was_served_that_day`` covers consistent later dividends and splits.)"""
    rows = yahoo_rows(len(RAW))
    absurd = [*rows[:9], {**rows[9], "Close": "99999.0", "Open": "99999.0"}, {**rows[9], "Date": "2024-01-11"}]
    assert pit_price_rows(absurd, DAYS[6]) == pit_price_rows(rows, DAYS[6])
    assert pit_price_rows(rows, DAYS[0] - timedelta(days=1)) == []


def test_holiday_rows_are_dropped() -> None:
    rows = yahoo_rows(3)
    rows.insert(1, {**rows[1], "Date": "2024-01-01 12:00:00-05:00", "Close": "nan"})
    assert len(pit_price_rows(rows, DAYS[2])) == 3


def test_companyfacts_keep_only_facts_filed_by_the_day() -> None:
    obj = {"cik": 1, "entityName": "X", "facts": {"us-gaap": {
        "Revenues": {"label": "Revenues", "units": {"USD": [
            {"end": "2024-03-31", "val": 1, "accn": "a", "filed": "2024-05-01"},
            {"end": "2024-06-30", "val": 2, "accn": "b", "filed": "2024-08-01"},
            {"end": "2024-06-30", "val": 3, "accn": "c"}]}},
        "Late": {"label": "Late", "units": {"USD": [{"end": "2024-06-30", "val": 9, "accn": "d",
                                                     "filed": "2024-09-01"}]}}}}}
    out = filter_companyfacts(obj, date(2024, 8, 1))
    assert [e["val"] for e in out["facts"]["us-gaap"]["Revenues"]["units"]["USD"]] == [1, 2]
    assert "Late" not in out["facts"]["us-gaap"]  # no fact left: the concept is dropped
    assert out["entityName"] == "X" and len(obj["facts"]["us-gaap"]["Revenues"]["units"]["USD"]) == 3


def test_submissions_keep_only_filings_by_the_day() -> None:
    recent = {"accessionNumber": ["c", "b", "a"], "filingDate": ["2024-09-01", "2024-05-01", "2023-01-01"],
              "form": ["10-Q", "10-Q", "10-K"]}
    obj = {"name": "X", "filings": {"recent": recent, "files": [
        {"name": "p1.json", "filingFrom": "2001-01-01"}, {"name": "p2.json", "filingFrom": "2025-01-01"}]}}
    out = filter_submissions(obj, date(2024, 6, 30))
    assert out["filings"]["recent"]["accessionNumber"] == ["b", "a"]
    assert [p["name"] for p in out["filings"]["files"]] == ["p1.json"]
    assert filter_submissions(recent, date(2023, 6, 1))["form"] == ["10-K"]  # an older page (top-level columns)


def test_corpus_view_on_the_recorded_data(tmp_path: Path, corpus_dir: Path) -> None:
    pit = PointInTimeCorpus(corpus_dir, tmp_path / "pit")
    view = pit.view(date(2024, 6, 7))  # the Friday before NVIDIA's 10-for-1 split
    assert pit.view(date(2024, 6, 7)).path == view.path  # reused, not rebuilt
    with (view.path / "prices" / "NVDA.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[-1]["Date"].startswith("2024-06-07")
    traded = unadjust_dividends([float(r["Close"]) for r in rows], [float(r["Dividends"]) for r in rows])
    assert traded[-1] == pytest.approx(1208.88, abs=0.01)  # as traded that day, before the split
    with (view.path / "sec" / "filings" / "manifest.csv").open(newline="", encoding="utf-8") as fh:
        assert all(r["filing_date"] <= "2024-06-07" for r in csv.DictReader(fh))
    facts = json.loads((view.path / "sec/companyfacts/CIK0001045810.json").read_text(encoding="utf-8"))
    filed = [e["filed"] for c in facts["facts"].values() for b in c.values() for u in b["units"].values()
             for e in u]
    assert filed and max(filed) <= "2024-06-07"
    assert not list(view.path.glob("sec/8k/*.txt"))  # both recorded 8-Ks were filed in 2026
    assert len(list(pit.view(date(2026, 6, 30)).path.glob("sec/8k/*.txt"))) == 2
    assert view.omitted == ()
    assert math.isfinite(float(rows[0]["Volume"]))


def test_not_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a recorded corpus"):
        PointInTimeCorpus(tmp_path, tmp_path / "pit")


def _tiny_corpus(root: Path) -> Path:
    (root / "prices").mkdir(parents=True)
    rows = yahoo_rows(len(RAW))
    with (root / "prices" / "X.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (root / "notes.txt").write_text("undated", encoding="utf-8")
    return root


def test_concurrent_builders_agree_and_a_changed_corpus_gets_new_views(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    corpus = _tiny_corpus(tmp_path / "corpus")
    builders = [PointInTimeCorpus(corpus, tmp_path / "pit") for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        views = list(pool.map(lambda b: b.view(DAYS[6]), builders))
    assert len({v.path for v in views}) == 1 and views[0].omitted == ("notes.txt",)  # undated: left out
    assert (views[0].path / "prices" / "X.csv").read_text(encoding="utf-8").count("\n") == 8
    assert sorted(p.name for p in views[0].path.parent.iterdir()) == [DAYS[6].isoformat()]  # no temp folders left
    (corpus / "prices" / "X.csv").write_text("Date,Open,High,Low,Close,Volume\n", encoding="utf-8")
    assert PointInTimeCorpus(corpus, tmp_path / "pit").view(DAYS[6]).path != views[0].path


def test_view_cuts_macro_and_news_at_the_day(tmp_path: Path, corpus_dir: Path) -> None:
    from equimind.sources.snapshot_macro import SnapshotMacro
    from equimind.sources.snapshot_news import SnapshotNews

    day = date(2025, 5, 20)
    pit = PointInTimeCorpus(corpus_dir, tmp_path / "pit")
    view = pit.view(day)
    cut = []
    for f in sorted((view.path / "macro").glob("*.csv")):
        lines = f.read_text(encoding="utf-8").splitlines()
        full = (corpus_dir / "macro" / f.name).read_text(encoding="utf-8-sig").splitlines()
        assert lines[0] == full[0] and all(ln.split(",")[0] <= day.isoformat() for ln in lines[1:])
        cut.append(len(lines) < len(full))
    assert len(cut) == 7 and sum(cut) == 6  # all but GDPC1 (an August 2025 vintage ending 2025-04-01) run past it
    later = SnapshotNews(corpus_dir).news("NVDA", limit=1000, until=date(2025, 6, 30))
    assert any(n.published_at.date() > day for n in later)  # the full corpus has news after the day
    seen = SnapshotNews(view.path).news("NVDA", limit=1000, until=day)
    assert seen and all(n.published_at.date() <= day for n in seen)
    assert seen == SnapshotNews(corpus_dir).news("NVDA", limit=1000, until=day)  # the same headlines as of the day
    raw = (view.path / "news" / "fmp" / "NVDA_news.csv").read_text(encoding="utf-8")
    assert "2025-05-21" not in raw and "2025-06" not in raw
    # the view's macro figures equal the full corpus's at the same as-of (the reader's lags already cut)
    def values(root: Path) -> list[tuple[str, float | None, date | None]]:
        return [(f.id, f.value, f.as_of) for f in SnapshotMacro(root).report(day).figures]

    assert values(view.path) == values(corpus_dir) and len(values(view.path)) >= 8
