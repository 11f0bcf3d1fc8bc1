"""Point-in-time views of a recorded corpus: what the data looked like on a past day, for walk-forward backtests.

The research engine already applies the as-of rule (nothing dated after as-of enters retrieval, figures or the
debate), but a recorded corpus is a snapshot taken *later*: the price CSV is dividend- and split-adjusted as of its
last bar, companyfacts lists facts filed after the day, and the DB-first store keeps whatever a run fetched (future
documents included) where index-wide statistics (BM25 document frequencies) can see them. A backtest decision must not
depend on any of that, so each decision reads a view of the corpus that contains only what existed on its day:

* ``prices/TICKER.csv``: the bars dated <= day, restated as Yahoo would have served them that day: the as-traded
  closes are recovered from the full series (``unadjust_dividends``: the CRSP factors, Yahoo's method), splits after
  the day are undone (prices x ratio, volume / ratio), and the dividend adjustment is re-applied with only the
  dividends paid by the day. Research's "as traded" last close on the view is then the real traded price that day.
* ``sec/companyfacts``: only facts filed <= day (a fact without a filing date is dropped: it cannot be proven earlier).
* ``sec/submissions``: only filings (and older pages) filed <= day; the company metadata (name, tickers) is kept.
* ``sec/filings/manifest.csv`` and ``sec/8k``: only filings filed <= day (files are symlinked, not copied).
* ``macro/*.csv``: only observations dated <= day (each series then counts from its publication lag; the values are
  the recorded vintage's, revisions included). ``news/{yahoo,fmp,finnhub}/``: only headlines published <= day (UTC).
* ``sec/company_tickers.json`` and ``sentiment/``: static reference data, symlinked. Anything else is left out and
  listed in ``PointInTimeView.omitted``.

Views are derived data: they live under ``EQUIMIND_HOME`` and are rebuilt when the source corpus changes.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from equimind.analytics.indicators import unadjust_dividends
from equimind.core.errors import ConfigError, ParseError
from equimind.sources.snapshot import read_8k_header, ticker_by_cik
from equimind.sources.snapshot_news import Layout, published_at

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: macro and news views
STAMP = ".pit.json"
_STATIC = ("sec/company_tickers.json", "sentiment")
_PRICE_FIELDS = ("Open", "High", "Low", "Close")


@dataclass(frozen=True)
class PointInTimeView:
    as_of: date
    path: Path
    omitted: tuple[str, ...]  # corpus entries the view leaves out because their dates cannot be checked


# ----------------------------------------------------------------------------------------------------------------
# Pure transformations


def _num(value: str | None) -> float:
    return float(value) if value not in (None, "") else 0.0


def pit_price_rows(rows: Sequence[Mapping[str, str]], as_of: date) -> list[dict[str, str]]:
    """yfinance history rows (adjusted as of the last row) -> the rows dated <= ``as_of``, adjusted as of ``as_of``.

    Rows without a close (holidays) are dropped. Raises ParseError on a non-positive close."""
    valid = [dict(r) for r in rows if not math.isnan(_num(r.get("Close")))]
    days = [date.fromisoformat(r["Date"][:10]) for r in valid]
    closes = [_num(r["Close"]) for r in valid]
    if any(c <= 0 for c in closes):
        raise ParseError("a price row has a non-positive close; fix the CSV")
    raw_final = unadjust_dividends(closes, [_num(r.get("Dividends")) for r in valid])
    later = math.prod(s for d, r in zip(days, valid, strict=True)
                      if d > as_of and (s := _num(r.get("Stock Splits"))) > 0)
    keep = [i for i, d in enumerate(days) if d <= as_of]
    raw = [raw_final[i] * later for i in keep]
    divs = [_num(valid[i].get("Dividends")) * later for i in keep]
    mult = [1.0] * len(keep)
    m = 1.0
    for t in range(len(keep) - 1, -1, -1):  # CRSP: bars before an ex-date x (1 - D / close of the bar before it)
        if t + 1 < len(keep) and divs[t + 1] > 0:
            m *= 1.0 - divs[t + 1] / raw[t]
        mult[t] = m
    out: list[dict[str, str]] = []
    for j, i in enumerate(keep):
        row = valid[i]
        scale = mult[j] * later * raw_final[i] / closes[i]  # adjusted-today -> adjusted-as-of-day
        for col in _PRICE_FIELDS:
            row[col] = repr(_num(row[col]) * scale)
        row["Close"] = repr(raw[j] * mult[j])
        row["Volume"] = repr(round(_num(row.get("Volume")) / later))
        if "Dividends" in row:
            row["Dividends"] = repr(divs[j])
        out.append(row)
    return out


def filter_companyfacts(obj: Mapping[str, Any], as_of: date) -> dict[str, Any]:
    """A companyfacts response with only the facts filed on or before ``as_of`` (empty concepts dropped)."""
    day = as_of.isoformat()
    facts: dict[str, Any] = {}
    for taxonomy, concepts in (obj.get("facts") or {}).items():
        kept: dict[str, Any] = {}
        for concept, body in concepts.items():
            units = {u: rows for u, entries in (body.get("units") or {}).items()
                     if (rows := [e for e in entries if str(e.get("filed") or "9999") <= day])}
            if units:
                kept[concept] = {**body, "units": units}
        if kept:
            facts[taxonomy] = kept
    return {**obj, "facts": facts}


def _filter_columns(block: Mapping[str, Any], day: str) -> dict[str, Any]:
    """A column-oriented filings block (``accessionNumber: [...]``, ``filingDate: [...]``, ...) cut at ``day``."""
    dates = list(block.get("filingDate") or [])
    keep = [i for i, d in enumerate(dates) if str(d) <= day]
    return {k: [v[i] for i in keep] if isinstance(v, list) and len(v) == len(dates) else v for k, v in block.items()}


def filter_submissions(obj: Mapping[str, Any], as_of: date) -> dict[str, Any]:
    """A submissions response (or an older page) with only the filings filed on or before ``as_of``."""
    day = as_of.isoformat()
    if "filings" not in obj:  # an older page: the columns are at the top level
        return _filter_columns(obj, day)
    filings = obj["filings"]
    pages = [p for p in filings.get("files", []) if str(p.get("filingFrom") or "9999") <= day]
    return {**obj, "filings": {**filings, "recent": _filter_columns(filings.get("recent") or {}, day),
                               "files": pages}}


# ----------------------------------------------------------------------------------------------------------------
# The view builder


def corpus_fingerprint(source: Path) -> str:
    """Hash of every file's relative path, size and mtime: a changed corpus gets fresh views."""
    h = hashlib.sha256(f"pit-v{FORMAT_VERSION}".encode())
    for p in sorted(source.rglob("*")):
        if p.is_file():
            st = p.stat()
            h.update(f"{p.relative_to(source)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


class PointInTimeCorpus:
    """Builds (and reuses) point-in-time views of the recorded corpus ``source`` under ``root``."""

    def __init__(self, source: Path, root: Path) -> None:
        source = Path(source).resolve()
        if not (source / "prices").is_dir() and not (source / "sec").is_dir():
            raise ConfigError(f"{source} is not a recorded corpus (no prices/ or sec/ folder); pass --snapshot "
                              "pointing at the recorded corpus (e.g. ../shared/corpus)")
        self.source = source
        self.fingerprint = corpus_fingerprint(source)
        self.root = Path(root) / self.fingerprint[:16]
        self._eight_k: dict[Path, date] | None = None

    def view(self, as_of: date) -> PointInTimeView:
        """The view as of ``as_of``, built once (concurrent builders each write a private folder; the first to
        finish wins and the others use its view)."""
        dest = self.root / as_of.isoformat()
        stamp = {"format": FORMAT_VERSION, "source": str(self.source), "fingerprint": self.fingerprint,
                 "as_of": as_of.isoformat()}
        existing = _current(dest, stamp)
        if existing is not None:
            return existing
        tmp = dest.with_name(f"{dest.name}.tmp-{uuid.uuid4().hex}")
        try:
            omitted = self._build(tmp, as_of)
            (tmp / STAMP).write_text(json.dumps({**stamp, "omitted": omitted}, indent=1), encoding="utf-8")
            try:
                tmp.rename(dest)
            except OSError:  # another builder finished first, or a stale view (older corpus) is in the way
                existing = _current(dest, stamp)
                if existing is not None:
                    return existing
                shutil.rmtree(dest, ignore_errors=True)
                tmp.rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log.info("point-in-time corpus view as of %s at %s", as_of, dest)
        return PointInTimeView(as_of, dest, tuple(omitted))

    def _build(self, dest: Path, as_of: date) -> list[str]:
        handled: set[Path] = set()
        for rel in _STATIC:
            if (self.source / rel).exists():
                _link(self.source / rel, dest / rel)
                handled.add(self.source / rel)
        handled |= self._prices(dest, as_of)
        sec = self.source / "sec"
        handled |= self._json_folder(sec / "companyfacts", dest / "sec" / "companyfacts", as_of, filter_companyfacts)
        handled |= self._json_folder(sec / "submissions", dest / "sec" / "submissions", as_of, filter_submissions)
        handled |= self._manifest(dest, as_of)
        handled |= self._eight_ks(dest, as_of)
        handled |= self._macro(dest, as_of)
        handled |= self._news(dest, as_of)
        return self._omitted(handled)

    def _omitted(self, handled: set[Path]) -> list[str]:
        out = []
        for p in sorted(self.source.rglob("*")):
            if p.is_file() and not any(p == h or h in p.parents for h in handled) and not _is_doc(p):
                out.append(str(p.relative_to(self.source)))
        return out

    def _prices(self, dest: Path, as_of: date) -> set[Path]:
        folder = self.source / "prices"
        done: set[Path] = set()
        for src in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
            fields, rows = _read_csv(src)
            try:
                out = pit_price_rows(rows, as_of)
            except (KeyError, ValueError) as exc:
                raise ParseError(f"{src}: malformed price row ({exc}); expected yfinance history() columns") from exc
            _write_csv(dest / "prices" / src.name, fields, out)
            done.add(src)
        return done

    @staticmethod
    def _json_folder(src: Path, dest: Path, as_of: date, fn: Any) -> set[Path]:
        done: set[Path] = set()
        for p in sorted(src.glob("*.json")) if src.is_dir() else []:
            dest.mkdir(parents=True, exist_ok=True)
            obj = json.loads(p.read_text(encoding="utf-8"))
            (dest / p.name).write_text(json.dumps(fn(obj, as_of)), encoding="utf-8")
            done.add(p)
        return done

    def _manifest(self, dest: Path, as_of: date) -> set[Path]:
        folder = self.source / "sec" / "filings"
        manifest = folder / "manifest.csv"
        if not manifest.is_file():
            return set()
        fields, rows = _read_csv(manifest)
        kept = [r for r in rows if (r.get("filing_date") or "9999").strip() <= as_of.isoformat()]
        out = dest / "sec" / "filings"
        _write_csv(out / "manifest.csv", fields, kept)
        for r in kept:
            if (folder / r["path"]).is_file():
                _link(folder / r["path"], out / r["path"])
        return {manifest} | {folder / r["path"] for r in rows}

    def _eight_ks(self, dest: Path, as_of: date) -> set[Path]:
        if self._eight_k is None:
            tickers = ticker_by_cik(self.source / "sec" / "company_tickers.json")
            folder = self.source / "sec" / "8k"
            paths = sorted(folder.glob("*.txt")) if folder.is_dir() else []
            self._eight_k = {p: read_8k_header(p, tickers).filed_at for p in paths}
        for p, filed in self._eight_k.items():
            if filed <= as_of:
                _link(p, dest / "sec" / "8k" / p.name)
        return set(self._eight_k)


    def _macro(self, dest: Path, as_of: date) -> set[Path]:
        """FRED files: only observations dated <= day (the reader then applies each series' publication lag)."""
        done: set[Path] = set()
        folder = self.source / "macro"
        for src in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
            lines = src.read_text(encoding="utf-8-sig").splitlines()
            kept = [ln for ln in lines[1:] if ln.strip() and ln.split(",", 1)[0].strip() <= as_of.isoformat()]
            _write_lines(dest / "macro" / src.name, [lines[0], *kept] if lines else [])
            done.add(src)
        return done

    def _news(self, dest: Path, as_of: date) -> set[Path]:
        """News CSVs of every layout: only rows published on or before the day (UTC), as the reader counts them."""
        done: set[Path] = set()
        for layout in Layout:
            folder = self.source / "news" / layout.value
            for src in sorted(folder.glob("*_news.csv")) if folder.is_dir() else []:
                fields, rows = _read_csv(src)
                kept = [r for r in rows if (at := published_at(r, layout)) is not None and at.date() <= as_of]
                _write_csv(dest / "news" / layout.value / src.name, fields, kept)
                done.add(src)
        return done


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _write_csv(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _current(dest: Path, stamp: dict[str, Any]) -> PointInTimeView | None:
    """The view at ``dest`` when it was built from the same corpus with this format, else None."""
    try:
        saved = json.loads((dest / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if {k: saved.get(k) for k in stamp} != stamp:
        return None
    return PointInTimeView(date.fromisoformat(stamp["as_of"]), dest, tuple(saved.get("omitted", [])))


def _link(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(src.resolve(), dest)


def _is_doc(p: Path) -> bool:
    """README and licence files carry no dated data."""
    return p.name.upper().startswith(("README", "LICENSE"))
