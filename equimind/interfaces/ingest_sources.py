"""Turns the ingest command's options into a stream of Documents (or per-item failures) and a mode label."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from equimind.config import Settings
from equimind.errors import ConfigError, EquiMindError, NotFoundError
from equimind.ingest.pipeline import SourceFailure
from equimind.models import Document

Item = Document | SourceFailure


def collect(settings: Settings, tickers: tuple[str, ...], forms: tuple[str, ...], pdf_dir: Path | None,
            paths: list[Path], *, market: bool) -> tuple[Iterator[Item], int | None, str]:
    """Return (items, expected total or None, human-readable mode)."""
    if pdf_dir is not None or paths:
        return _local(pdf_dir, paths)
    if not tickers and settings.snapshot is None:
        raise ConfigError("nothing to ingest: give --tickers (live SEC), --snapshot DIR, --pdf-dir DIR or --path FILE")
    if settings.snapshot is not None:
        return _snapshot(settings, tickers, forms, market=market)
    return _live(settings, tickers, forms, market=market)


def _local(pdf_dir: Path | None, paths: list[Path]) -> tuple[Iterator[Item], int | None, str]:
    from equimind.sources.local import LocalFileSource

    targets: list[Path] = list(paths)
    if pdf_dir is not None:
        if not pdf_dir.is_dir():
            raise NotFoundError(f"--pdf-dir {pdf_dir} does not exist or is not a folder; check the path")
        targets.append(pdf_dir)
    for p in paths:
        if not p.exists():
            raise NotFoundError(f"--path {p} does not exist; check the path")
    source = LocalFileSource(targets, metadata=_financebench_metadata(pdf_dir))
    files = source.files()
    return _guard(source.iter_results()), len(files), f"local files ({len(files)})"


def _financebench_metadata(pdf_dir: Path | None) -> dict[str, dict[str, str]] | None:
    """If the folder sits beside a FinanceBench documents.jsonl, use its company/type/period metadata."""
    if pdf_dir is None:
        return None
    meta_file = pdf_dir.parent / "documents.jsonl"
    if not meta_file.is_file():
        return None
    import json

    rows = [json.loads(line) for line in meta_file.read_text().splitlines() if line.strip()]
    return {r["doc_name"]: {k: str(v) for k, v in r.items()} for r in rows}


def _snapshot(settings: Settings, tickers: tuple[str, ...], forms: tuple[str, ...], *,
              market: bool) -> tuple[Iterator[Item], int | None, str]:
    from equimind.sources.snapshot import SnapshotFilingsSource

    assert settings.snapshot is not None
    source = SnapshotFilingsSource(settings.snapshot)
    entries = source.list_entries(tickers=tickers or None, forms=forms or None)
    chosen = tuple(sorted({e.ticker for e in entries if e.ticker}))

    def gen() -> Iterator[Item]:
        yield from _guard(source.iter_results(tickers=tickers or None, forms=forms or None))
        if market:
            yield from _market_documents(settings, tickers or chosen)

    extra = len(tickers or chosen) * 2 if market else 0
    return gen(), len(entries) + extra, f"snapshot {settings.snapshot}"


def _live(settings: Settings, tickers: tuple[str, ...], forms: tuple[str, ...], *,
          market: bool) -> tuple[Iterator[Item], int | None, str]:
    from equimind.sources.live_filings import live_filing_documents

    def gen() -> Iterator[Item]:
        yield from _guard(live_filing_documents(settings, tickers, forms or ("10-K", "10-Q")))
        if market:
            yield from _market_documents(settings, tickers)

    return gen(), None, "live SEC EDGAR + Yahoo Finance"


def _market_documents(settings: Settings, tickers: tuple[str, ...]) -> Iterator[Item]:
    """Prices, fundamentals (and news, live) as documents dated by their own data; a failure is reported for that
    ticker, never replaced by a placeholder."""
    from datetime import date

    from equimind.market import market_report

    for ticker in tickers:
        docs: list[Document] = []
        try:
            market_report(settings, ticker, date.today(), on_documents=docs.extend)
        except EquiMindError as exc:
            yield SourceFailure(source=f"market data for {ticker}", error=str(exc))
            continue
        yield from docs


def _guard(items: Iterator[Item]) -> Iterator[Item]:
    """A source error on one item becomes a reported failure; the rest of the batch goes on."""
    it = iter(items)
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except EquiMindError as exc:
            yield SourceFailure(source=type(exc).__name__, error=str(exc))
            return
        yield item
