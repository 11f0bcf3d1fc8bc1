"""Turns the ingest command's options into a stream of Documents (or per-item failures) and a mode label.

Filings and market data come from the one ``SourceSet`` of the run's mode (chosen by ``Services``); local files are
the same in every mode. The filing sources yield raw records, parsed here through ``ingest.documents`` (a filing that
cannot be read or parsed is one failed row; the rest of the batch goes on)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from equimind.analytics.market import market_report
from equimind.core.config import Settings
from equimind.core.documents import Document, Origin
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError
from equimind.ingest.documents import documents
from equimind.sources.base import SourceFailure
from equimind.sources.local import LocalFileSource
from equimind.sources.sourceset import SourceSet

Item = Document | SourceFailure


def collect(settings: Settings, sources: SourceSet, tickers: tuple[str, ...], forms: tuple[str, ...],
            pdf_dir: Path | None, paths: list[Path], *, market: bool) -> tuple[Iterator[Item], int | None, str]:
    """Return (items, expected total or None, human-readable mode)."""
    if pdf_dir is not None or paths:
        return _local(pdf_dir, paths)
    if not tickers and sources.mode is not Origin.SNAPSHOT:
        raise ConfigError("nothing to ingest: give --tickers (live SEC), --snapshot DIR, --pdf-dir DIR or --path FILE")
    filings, total, chosen = sources.filings.for_ingest(tickers, forms)

    def gen() -> Iterator[Item]:
        yield from _guard(documents(filings))
        if market:
            yield from _market_documents(settings, sources, chosen)

    extra = len(chosen) * 2 if market else 0
    return gen(), None if total is None else total + extra, sources.filings.label


def _local(pdf_dir: Path | None, paths: list[Path]) -> tuple[Iterator[Item], int | None, str]:
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
    return _guard(documents(source.iter_results())), len(files), f"local files ({len(files)})"


def _financebench_metadata(pdf_dir: Path | None) -> dict[str, dict[str, str]] | None:
    """If the folder sits beside a FinanceBench documents.jsonl, use its company/type/period metadata."""
    if pdf_dir is None:
        return None
    meta_file = pdf_dir.parent / "documents.jsonl"
    if not meta_file.is_file():
        return None
    rows = [json.loads(line) for line in meta_file.read_text().splitlines() if line.strip()]
    return {r["doc_name"]: {k: str(v) for k, v in r.items()} for r in rows}


def _market_documents(settings: Settings, sources: SourceSet, tickers: tuple[str, ...]) -> Iterator[Item]:
    """Prices, fundamentals (and news, live) as documents dated by their own data; a failure is reported for that
    ticker, never replaced by a placeholder."""
    for ticker in tickers:
        docs: list[Document] = []
        try:
            market_report(settings, ticker, date.today(), sources.market, on_documents=docs.extend)
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
