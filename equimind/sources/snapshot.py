"""Recorded SEC filings (``<corpus>/sec``) → raw filing records (``RawFiling``), offline; nothing is parsed here.

- ``sec/filings/manifest.csv`` + ``sec/filings/TICKER/*.html``: primary documents of 10-K / 10-Q filings (inline XBRL).
- ``sec/8k/*.txt``: full 8-K submission files (SGML header + documents); the header gives company, CIK and dates,
  the submission's HTML primary document is extracted (edgartools' SGML reader) and becomes the record's body.
  Tickers come from ``sec/company_tickers.json`` (first listed ticker of the CIK, i.e. the common stock), never
  guessed.

Records carry ``source=sec_edgar`` and ``origin=snapshot``; the URL is the live SEC address when the accession and
primary document are known. ``equimind.ingest.documents`` parses them into Documents. By default only the manifest's
10-K/10-Q filings are listed; ask for ``forms=("8-K",)`` (or include "8-K") to get the recorded 8-Ks too.
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from equimind.core.documents import Origin, Source
from equimind.core.errors import EquiMindError, NotFoundError, ParseError
from equimind.core.lru import LRU
from equimind.sources.base import BodyKind, RawFiling, SourceFailure

log = logging.getLogger(__name__)

SEC_ARCHIVES = "https://www.sec.gov/Archives/edgar/data"
DEFAULT_FORMS: tuple[str, ...] = ("10-K", "10-Q")


@dataclass(frozen=True)
class ManifestEntry:
    """One recorded filing: a manifest row, or an 8-K submission file."""

    ticker: str | None
    cik: str
    company: str
    form: str
    filed_at: date
    period_end: date | None
    accession: str | None
    primary_document: str | None
    path: Path

    @property
    def url(self) -> str | None:
        if not (self.accession and self.primary_document):
            return None
        return f"{SEC_ARCHIVES}/{int(self.cik)}/{self.accession.replace('-', '')}/{self.primary_document}"

    @property
    def source_key(self) -> str:
        return f"sec:{self.cik}:{self.accession or self.path.name}"

    @property
    def title(self) -> str:
        period = f", period ending {self.period_end.isoformat()}" if self.period_end else ""
        return f"{self.company} {self.form} filed {self.filed_at.isoformat()}{period}"


def _day(value: str | None) -> date | None:
    value = (value or "").strip()
    if not value:
        return None
    if len(value) == 8 and value.isdigit():  # SGML headers write 20250226
        value = f"{value[:4]}-{value[4:6]}-{value[6:]}"
    return date.fromisoformat(value)


def read_manifest(path: Path) -> list[ManifestEntry]:
    """Typed rows of ``manifest.csv`` (paths resolved against its folder)."""
    out: list[ManifestEntry] = []
    with path.open(newline="", encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh), start=2):
            filed = _day(row.get("filing_date"))
            if filed is None or not row.get("path"):
                raise ParseError(f"{path}:{n}: row without filing_date or path; fix the manifest")
            out.append(ManifestEntry(
                ticker=row["ticker"].strip().upper(), cik=row["cik"].strip().zfill(10), company=row["company"].strip(),
                form=row["form"].strip().upper(), filed_at=filed, period_end=_day(row.get("period_of_report")),
                accession=(row.get("accession_number") or "").strip() or None,
                primary_document=(row.get("primary_document") or "").strip() or None,
                path=path.parent / row["path"].strip(),
            ))
    return out


def ticker_by_cik(company_tickers: Path) -> dict[str, str]:
    """CIK (10 digits) → first ticker listed for it in SEC's company_tickers.json; {} if the file is absent."""
    if not company_tickers.is_file():
        return {}
    data = json.loads(company_tickers.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for row in data.values():
        out.setdefault(str(row["cik_str"]).zfill(10), str(row["ticker"]).upper())
    return out


_ENTRIES: LRU[tuple[object, ...], list[ManifestEntry]] = LRU(1)  # one corpus per process in practice: the latest


def _stat_key(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file or folder (a folder's mtime changes when a file is added or removed)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


class SnapshotFilingsSource:
    """Recorded filings of the corpus folder (``Settings.corpus_dir``) as raw filing records."""

    name = "sec-snapshot"

    def __init__(self, corpus_dir: Path) -> None:
        self.corpus_dir = Path(corpus_dir)
        self.sec_dir = self.corpus_dir / "sec"
        self.manifest_path = self.sec_dir / "filings" / "manifest.csv"
        if not self.manifest_path.is_file():
            raise NotFoundError(
                f"no recorded filings at {self.manifest_path}; point --snapshot / EQUIMIND_SNAPSHOT at the recorded "
                "corpus folder (the one holding sec/filings/manifest.csv, e.g. ../shared/corpus)"
            )
        self._entries: list[ManifestEntry] | None = None

    def _all_entries(self) -> list[ManifestEntry]:
        """The manifest's rows and the 8-K headers, read once per process while the files are unchanged (every
        research run opens a source; parsing the 8-K headers and the ticker map costs ~60 ms)."""
        if self._entries is None:
            key = (str(self.sec_dir.resolve()), *(_stat_key(p) for p in (
                self.manifest_path, self.sec_dir / "8k", self.sec_dir / "company_tickers.json")))
            cached = _ENTRIES.get(key)
            if cached is None:
                cached = read_manifest(self.manifest_path) + self._eight_k_entries()
                _ENTRIES.put(key, cached)
            self._entries = list(cached)
        return self._entries

    def _eight_k_entries(self) -> list[ManifestEntry]:
        folder = self.sec_dir / "8k"
        if not folder.is_dir():
            return []
        tickers = ticker_by_cik(self.sec_dir / "company_tickers.json")
        return [read_8k_header(p, tickers) for p in sorted(folder.glob("*.txt"))]

    def tickers(self) -> tuple[str, ...]:
        return tuple(sorted({e.ticker for e in self._all_entries() if e.ticker}))

    def list_entries(self, tickers: Sequence[str] | None = None,
                     forms: Sequence[str] | None = None) -> list[ManifestEntry]:
        """Recorded filings, filtered. Unknown tickers or forms raise NotFoundError naming the available ones."""
        entries = self._all_entries()
        if tickers:
            wanted = {t.strip().upper() for t in tickers}
            missing = sorted(wanted - {e.ticker for e in entries if e.ticker})
            if missing:
                raise NotFoundError(f"no recorded filings for {', '.join(missing)} in {self.sec_dir}; "
                                    f"recorded tickers: {', '.join(self.tickers())}")
            entries = [e for e in entries if e.ticker in wanted]
        chosen_forms = {f.strip().upper() for f in forms} if forms else set(DEFAULT_FORMS)
        out = [e for e in entries if e.form in chosen_forms]
        if forms and not out:
            available = sorted({e.form for e in entries})
            raise NotFoundError(f"no recorded {'/'.join(sorted(chosen_forms))} filings for the chosen tickers; "
                                f"recorded forms: {', '.join(available)}")
        return sorted(out, key=lambda e: (e.ticker or "", e.filed_at, e.form))

    def load(self, entry: ManifestEntry) -> RawFiling:
        """Read one recorded filing (not parsed). Raises NotFoundError (file missing) or ParseError (an 8-K
        submission without an HTML primary document)."""
        if not entry.path.is_file():
            raise NotFoundError(f"recorded filing {entry.path} is missing; restore the corpus folder")
        if entry.path.suffix.lower() == ".txt":
            return _record(entry, _eight_k_html(entry))
        return _record(entry, entry.path.read_bytes())

    def records(self, tickers: Sequence[str] | None = None,
                forms: Sequence[str] | None = None) -> Iterator[RawFiling]:
        """Raw records of the chosen filings, read one at a time (a failure raises)."""
        for entry in self.list_entries(tickers, forms):
            yield self.load(entry)

    def iter_results(self, tickers: Sequence[str] | None = None,
                     forms: Sequence[str] | None = None) -> Iterator[RawFiling | SourceFailure]:
        """Like ``records`` but a filing that cannot be read is reported as a SourceFailure and skipped."""
        for entry in self.list_entries(tickers, forms):
            try:
                raw = self.load(entry)
            except EquiMindError as exc:
                log.warning("skipping %s: %s", entry.path, exc)
                yield SourceFailure(source=str(entry.path), error=str(exc))
                continue
            yield raw

    def eight_k_records(self, tickers: Sequence[str] | None = None) -> Iterator[RawFiling]:
        """The recorded 8-K submissions as raw records (their HTML primary document extracted)."""
        yield from self.records(tickers, forms=("8-K",))


def read_8k_header(path: Path, tickers: dict[str, str]) -> ManifestEntry:
    """Company, CIK, dates and accession from an SGML submission's header (the documents are not parsed)."""
    from edgar.sgml.sgml_common import FilingSGML

    try:
        sgml = FilingSGML.from_text(path.read_text(encoding="utf-8", errors="replace"))
        filer = sgml.header.filers[0].company_information
        primary = sgml.primary_documents[0].document if sgml.primary_documents else None
        filed = _day(str(sgml.filing_date))
    except Exception as exc:  # edgartools raises several types on a damaged submission
        raise ParseError(f"{path}: unreadable SEC submission header ({type(exc).__name__}: {exc})") from exc
    if filed is None:
        raise ParseError(f"{path}: the submission header has no FILED AS OF DATE")
    cik = str(filer.cik).zfill(10)
    return ManifestEntry(
        ticker=tickers.get(cik), cik=cik, company=str(filer.name), form=str(sgml.form).upper(), filed_at=filed,
        period_end=_day(str(sgml.period_of_report or "")), accession=str(sgml.accession_number),
        primary_document=primary, path=path,
    )


def _eight_k_html(entry: ManifestEntry) -> str:
    """The HTML primary document of an 8-K submission file (the container is unpacked here, not parsed)."""
    from edgar.sgml.sgml_common import FilingSGML

    sgml = FilingSGML.from_text(entry.path.read_text(encoding="utf-8", errors="replace"))
    html: str | None = sgml.html()  # type: ignore[no-untyped-call]
    if not html:
        raise ParseError(f"{entry.path}: the submission has no HTML primary document")
    return html


def _record(entry: ManifestEntry, body: bytes | str) -> RawFiling:
    meta = [("corpus_path", entry.path.name)]
    if entry.accession:
        meta.append(("accession", entry.accession))
    if entry.primary_document:
        meta.append(("primary_document", entry.primary_document))
    return RawFiling(
        source_key=entry.source_key, ticker=entry.ticker, cik=entry.cik, company=entry.company,
        source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form=entry.form, filed_at=entry.filed_at,
        period_end=entry.period_end, url=entry.url, title=entry.title, body=body, kind=BodyKind.HTML,
        name=str(entry.path), meta=tuple(meta),
    )
