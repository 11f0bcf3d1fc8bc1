"""Snapshot readers over the recorded corpus: same Protocols as the live sources, no network."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from equimind.core.documents import Origin, Source
from equimind.core.errors import NotFoundError
from equimind.sources.base import FactsSource, FilingIndexSource, PriceSource, ProfileSource
from equimind.sources.market_snapshot import SnapshotPrices, SnapshotSec


def test_protocols(corpus_dir: Path) -> None:
    assert isinstance(SnapshotPrices(corpus_dir), PriceSource)
    sec = SnapshotSec(corpus_dir)
    assert isinstance(sec, FactsSource) and isinstance(sec, FilingIndexSource) and isinstance(sec, ProfileSource)


def test_prices_read_every_recorded_bar_with_the_nvda_split(corpus_dir: Path) -> None:
    h = SnapshotPrices(corpus_dir).history("NVDA")
    assert len(h.bars) == 753 and h.first_day == date(2022, 11, 8) and h.last_day == date(2025, 11, 7)
    assert h.splits() == ((date(2024, 6, 10), 10.0),)
    assert h.source is Source.YAHOO_FINANCE and h.origin is Origin.SNAPSHOT
    bar = next(b for b in h.bars if b.day == date(2025, 6, 30))
    assert bar.close == pytest.approx(157.98109436035156)


def test_price_window_bounds_are_inclusive(corpus_dir: Path) -> None:
    h = SnapshotPrices(corpus_dir).history("AAPL", start=date(2025, 6, 2), end=date(2025, 6, 30))
    assert h.first_day == date(2025, 6, 2) and h.last_day == date(2025, 6, 30)
    assert all(date(2025, 6, 2) <= b.day <= date(2025, 6, 30) for b in h.bars)


def test_unknown_ticker_prices_name_what_is_recorded(corpus_dir: Path) -> None:
    with pytest.raises(NotFoundError, match="recorded: AAPL, AMD"):
        SnapshotPrices(corpus_dir).history("IBM")


def test_companyfacts_only_for_recorded_companies(corpus_dir: Path) -> None:
    sec = SnapshotSec(corpus_dir)
    assert sec.company_facts("GOOGL").entity_name == "ALPHABET INC."
    assert sec.recorded_facts_tickers() == ["AAPL", "GOOG", "GOOGL", "NVDA"]  # GOOG shares GOOGL's CIK
    with pytest.raises(NotFoundError, match="no XBRL companyfacts recorded for AMD"):
        sec.company_facts("AMD")


def test_filings_merge_the_submissions_list_with_recorded_documents(corpus_dir: Path) -> None:
    sec = SnapshotSec(corpus_dir)
    refs = sec.filings("NVDA", forms=["10-K", "10-Q"], until=date(2025, 9, 30))
    local = [r for r in refs if r.local_path]
    assert [(r.form, r.filed) for r in local] == [("10-Q", date(2025, 8, 27)), ("10-K", date(2025, 2, 26))]
    assert local[1].accession == "0001045810-25-000023"
    assert "<html" in sec.primary_document(local[1])[:2000].lower()
    unrecorded = next(r for r in refs if r.local_path is None)
    with pytest.raises(NotFoundError, match="not recorded"):
        sec.primary_document(unrecorded)


def test_filings_without_submissions_come_from_the_manifest(corpus_dir: Path) -> None:
    refs = SnapshotSec(corpus_dir).filings("AMZN")
    assert [(r.form, r.filed, r.url) for r in refs] == [("10-K", date(2025, 2, 7), None)]


def test_profile_and_missing_folder(corpus_dir: Path, tmp_path: Path) -> None:
    p = SnapshotSec(corpus_dir).profile("NVDA")
    assert p.name == "NVIDIA CORP" and p.fields["sicDescription"] == "Semiconductors & Related Devices"
    assert SnapshotSec(corpus_dir).profile("AMD").fields["cik"] == "0000002488"
    with pytest.raises(NotFoundError, match="--snapshot"):
        SnapshotPrices(tmp_path / "nope")
