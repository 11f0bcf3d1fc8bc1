"""Files of a recorded snapshot folder, in exactly the layout ``--snapshot DIR`` reads (``sources/snapshot.py``,
``sources/market_snapshot.py``; ``../shared/corpus/README.md``), each written atomically (temp file in the same
folder, fsync, ``os.replace``), so an interrupted or failed recording never leaves a partial file and a re-run into
the same folder updates it in place.

  sec/company_tickers.json            as served by SEC
  sec/submissions/CIK##########.json  as served (older pages under SEC's own names)
  sec/companyfacts/CIK##########.json as served
  sec/filings/manifest.csv            ticker,cik,company,form,filing_date,period_of_report,accession_number,
                                      primary_document,path  (merged with the rows already there)
  sec/filings/TICKER/ticker-form-YYYY-MM-DD.html  primary documents as served
  prices/TICKER.csv                   yfinance history() CSV: Date (with UTC offset),Open,High,Low,Close,Volume,
                                      Dividends,Stock Splits
  news/yahoo/TICKER_news.csv          symbol,publishedDate (ISO-8601 with UTC offset),title,site,url,text (merged)
  macro/SERIES.csv                    FRED fredgraph.csv as served
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError
from equimind.sources.base import FilingRef, NewsItem
from equimind.sources.http import atomic_write

MANIFEST_COLUMNS = ("ticker", "cik", "company", "form", "filing_date", "period_of_report", "accession_number",
                    "primary_document", "path")
PRICE_COLUMNS = ("Open", "High", "Low", "Close", "Volume", "Dividends", "Stock Splits")
NEWS_COLUMNS = ("symbol", "publishedDate", "title", "site", "url", "text")


def write_atomic(path: Path, body: bytes) -> Path:
    """Write ``body`` to ``path`` through a temp file in the same folder and ``os.replace`` (never partial)."""
    atomic_write(path, body)
    return path


def prepare_out_dir(out: Path) -> Path:
    """The output folder, created if absent; ConfigError if the path is a file."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; give a folder to record the snapshot into "
                          "(it is created if absent, and updated in place if it holds an earlier recording)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot create the folder ({e}); choose a writable path") from e
    return out


def _csv_bytes(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def filing_file_name(ref: FilingRef) -> str:
    """``nvda-10-k-2025-02-26.html``: the shipped corpus's naming (ticker, form, filing date)."""
    form = ref.form.lower().replace("/", "-")
    return f"{(ref.ticker or ref.cik).lower()}-{form}-{ref.filed.isoformat()}.html"


def manifest_row(ref: FilingRef, rel_path: str) -> dict[str, str]:
    return {"ticker": ref.ticker or "", "cik": ref.cik, "company": ref.company or "", "form": ref.form,
            "filing_date": ref.filed.isoformat(), "period_of_report": ref.period_end.isoformat() if ref.period_end
            else "", "accession_number": ref.accession, "primary_document": ref.primary_document, "path": rel_path}


def read_manifest_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return [{c: row.get(c) or "" for c in MANIFEST_COLUMNS} for row in csv.DictReader(f)]


def merge_manifest(path: Path, new_rows: Sequence[dict[str, str]]) -> Path:
    """Rows already in the manifest, with rows of the same file (``path``) replaced by the new ones; sorted."""
    rows = {r["path"]: r for r in read_manifest_rows(path)}
    rows.update({r["path"]: r for r in new_rows})
    ordered = sorted(rows.values(), key=lambda r: (r["ticker"], r["filing_date"], r["form"], r["path"]))
    return write_atomic(path, _csv_bytes(MANIFEST_COLUMNS, ([r[c] for c in MANIFEST_COLUMNS] for r in ordered)))


def price_csv_bytes(frame: Any) -> bytes:
    """A yfinance ``history()`` DataFrame → its CSV in the recorded layout (Date with UTC offset first)."""
    missing = [c for c in PRICE_COLUMNS if c not in frame.columns]
    if missing:
        frame = frame.copy()
        for c in missing:  # yfinance omits the action columns when asked without actions
            frame[c] = 0.0
    text: str = frame[list(PRICE_COLUMNS)].to_csv(index_label="Date", lineterminator="\n")
    return text.encode("utf-8")


def _news_row(item: NewsItem) -> list[str]:
    return [item.ticker, item.published_at.isoformat(), item.title, item.publisher or "", item.url or "",
            item.summary]


def merge_news(path: Path, items: Sequence[NewsItem]) -> tuple[Path, int]:
    """News CSV with ``items`` added to the rows already there (same url, or same title and time, = same item);
    newest first. Returns the path and the number of rows in the file."""
    rows: dict[tuple[str, str], list[str]] = {}
    if path.is_file():
        with path.open(newline="", encoding="utf-8") as f:
            for old in csv.DictReader(f):
                row = [old.get(c) or "" for c in NEWS_COLUMNS]
                rows[_news_key(row)] = row
    for item in items:
        row = _news_row(item)
        rows[_news_key(row)] = row
    ordered = sorted(rows.values(), key=lambda r: r[1], reverse=True)
    return write_atomic(path, _csv_bytes(NEWS_COLUMNS, ordered)), len(ordered)


def _news_key(row: Sequence[str]) -> tuple[str, str]:
    return (row[4], "") if row[4] else (row[2], row[1])
