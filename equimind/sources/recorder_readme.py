"""The README.md of a recorded snapshot folder: what the last recording asked for and got, from where, when (UTC),
with which EquiMind version, an inventory of everything the folder holds (all recordings so far) and the caveats."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from equimind import __version__
from equimind.core.config import Settings
from equimind.sources import recorder_files as files

if TYPE_CHECKING:
    from equimind.sources.recorder_records import RecordReport

CAVEATS = """## Caveats
- **Single vintages.** Submissions and XBRL companyfacts are SEC's answers on the recording day. FRED's keyless
  `fredgraph.csv` is the latest vintage: earlier observations already hold later revisions, not the values as first
  published (the snapshot's macro figures count an observation only after its publication lag, but cannot undo a
  revision).
- **Adjusted prices.** `prices/*.csv` are yfinance `history(auto_adjust=True)` bars: split- and dividend-adjusted as
  of the recording day. A later split or dividend changes every earlier bar, so each re-run rewrites a prices file
  whole rather than appending to it.
- **News is partial.** Yahoo Finance serves only its latest headlines for a ticker; each re-run adds the new ones to
  `news/yahoo/TICKER_news.csv` (deduplicated by URL). It is not a complete history of what was published.
- **Filings** are the primary documents only (no exhibits), for the forms asked, filed on or after `--since`.
- Data terms: SEC EDGAR data is public; Yahoo Finance's terms apply to prices and news; FRED series belong to their
  sources (BLS, Federal Reserve, BEA, Cboe ...).
"""


def _csv_span(path: Path, column: str) -> tuple[int, str, str]:
    """(rows, smallest, largest) of one column of a CSV (as text, by its first 10 characters)."""
    with path.open(newline="", encoding="utf-8") as f:
        values = [(row.get(column) or "")[:10] for row in csv.DictReader(f)]
    values = [v for v in values if v]
    return len(values), min(values, default="-"), max(values, default="-")


def inventory(out: Path) -> list[str]:
    """Markdown table rows describing the folder's content."""
    rows = []
    by_ticker: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in files.read_manifest_rows(out / "sec" / "filings" / "manifest.csv"):
        by_ticker[r["ticker"]].append(r)
    for ticker, entries in sorted(by_ticker.items()):
        forms = ", ".join(f"{r['form']} {r['filing_date']}" for r in entries)
        rows.append(f"| `sec/filings/{ticker}/` | {len(entries)} primary documents: {forms} |")
    for folder, what in (("submissions", "SEC submissions"), ("companyfacts", "SEC XBRL companyfacts")):
        names = sorted(p.name for p in (out / "sec" / folder).glob("CIK*.json"))
        if names:
            rows.append(f"| `sec/{folder}/` | {what}: {', '.join(names)} |")
    for path in sorted((out / "prices").glob("*.csv")):
        n, first, last = _csv_span(path, "Date")
        rows.append(f"| `prices/{path.name}` | {n} daily bars {first} → {last} |")
    for path in sorted((out / "news" / "yahoo").glob("*_news.csv")):
        n, first, last = _csv_span(path, "publishedDate")
        rows.append(f"| `news/yahoo/{path.name}` | {n} headlines published {first} → {last} |")
    for path in sorted((out / "macro").glob("*.csv")):
        n, first, last = _csv_span(path, "observation_date")
        rows.append(f"| `macro/{path.name}` | FRED {path.stem}, {n} rows {first} → {last} |")
    lists = sorted(p.name for p in (out / "sentiment").glob("LM_*.txt"))
    if lists:
        rows.append(f"| `sentiment/` | Loughran-McDonald word lists (copied from EquiMind's shared corpus, not "
                    f"recorded live): {', '.join(lists)} |")
    return rows


def render(out: Path, report: RecordReport, settings: Settings) -> str:
    req = report.request
    yahoo = settings.yahoo_endpoint or "Yahoo Finance's own hosts"
    lines = [
        "# EquiMind snapshot", "",
        f"Recorded with `equimind snapshot record` (EquiMind {__version__}). Replay it offline with "
        f"`--snapshot {out}`, e.g. `equimind market {req.tickers[0]} --snapshot {out} --json`.", "",
        "## Last recording",
        f"- when (UTC): {report.started_at.isoformat(timespec='seconds')} → "
        f"{report.finished_at.isoformat(timespec='seconds')}",
        f"- tickers: {', '.join(req.tickers)}; forms {', '.join(req.forms)} filed on or after {req.since}; daily "
        f"prices from {req.prices_since}; news: latest {req.news_limit} headlines; macro: {', '.join(req.macro)}",
        f"- from: SEC EDGAR `{settings.sec_base_url}` and `{settings.sec_data_url}` (declared identity, at most "
        f"{settings.sec_max_rps:g} requests/s); Yahoo Finance via yfinance ({yahoo}); FRED "
        f"`{settings.fred_graph_url}/graph/fredgraph.csv`",
        f"- result: {len(report.recorded)} files written, {len(report.failures)} failures",
    ]
    lines += [f"  - FAILED {f.what}: {f.error}" for f in report.failures]
    lines += [f"  - note: {' '.join(filter(None, (n.ticker, n.text)))}" for n in report.notes]
    lines += ["", "## What the folder holds (every recording so far)", "", "| path | what |", "|---|---|",
              "| `sec/company_tickers.json` | SEC's ticker → CIK map |", *inventory(out), "", CAVEATS]
    return "\n".join(lines)


def write_readme(out: Path, report: RecordReport, settings: Settings) -> Path:
    return files.write_atomic(out / "README.md", render(out, report, settings).encode("utf-8"))
