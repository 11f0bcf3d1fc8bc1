"""Local PDF and HTML files → raw filing records (``RawFiling``, ``source=local``, ``origin=local_file``).

The file's bytes are read here and parsed by ``equimind.ingest.documents`` (PDFs keep their pages there:
``Document.pages`` records each page's span, zero-based as FinanceBench counts). Metadata comes from, in order: the
caller's mapping keyed by file stem (e.g. FinanceBench's documents.jsonl rows: company, doc_type, doc_period,
doc_link), then a FinanceBench-style file name (``3M_2018_10K``, ``BESTBUY_2024Q2_10Q``,
``FOOTLOCKER_2022_8K_dated-2022-05-20``). A ticker is set only when the mapping gives one; it is never guessed from a
company name.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from equimind.core.documents import Origin, Source
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError, SourceError
from equimind.sources.base import BodyKind, RawFiling, SourceFailure

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES: tuple[str, ...] = (".pdf", ".htm", ".html")
_NAME = re.compile(
    r"^(?P<company>.+?)_(?P<year>\d{4})(?:Q(?P<quarter>[1-4]))?_(?P<form>10K|10Q|8K|EARNINGS)"
    r"(?:_dated[-_](?P<dated>\d{4}-\d{2}-\d{2}))?$",
    re.IGNORECASE,
)
_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings"}


@dataclass(frozen=True)
class FileMeta:
    """What is known about a file before parsing it."""

    doc_name: str
    company: str | None = None
    ticker: str | None = None
    form: str = "unknown"
    fiscal_year: str | None = None
    fiscal_quarter: str | None = None
    dated: date | None = None
    url: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def title(self) -> str:
        parts = [self.company or self.doc_name, self.form if self.form != "unknown" else ""]
        if self.fiscal_year:
            parts.append(f"FY{self.fiscal_year}" + (f" Q{self.fiscal_quarter}" if self.fiscal_quarter else ""))
        if self.dated:
            parts.append(f"dated {self.dated.isoformat()}")
        return " ".join(p for p in parts if p)


def form_from_doc_type(doc_type: str) -> str:
    """FinanceBench doc_type (10k, 10q, 8k, earnings) → our form label."""
    key = doc_type.strip().upper().replace("-", "")
    return _FORMS.get(key, doc_type.strip() or "unknown")


def infer_meta(stem: str, given: Mapping[str, str] | None = None) -> FileMeta:
    """FileMeta from a FinanceBench-like name, overridden by the caller's metadata for that document."""
    m = _NAME.match(stem)
    fields: dict[str, str | None] = {"company": None, "form": "unknown", "year": None, "quarter": None, "dated": None}
    if m:
        fields.update(company=m.group("company"), form=_FORMS[m.group("form").upper()], year=m.group("year"),
                      quarter=m.group("quarter"), dated=m.group("dated"))
    given = given or {}
    if given.get("company"):
        fields["company"] = given["company"]
    if given.get("doc_type"):
        fields["form"] = form_from_doc_type(given["doc_type"])
    if given.get("doc_period"):
        fields["year"] = str(given["doc_period"])
    extra = tuple(sorted((k, str(v)) for k, v in given.items()
                         if k not in {"company", "doc_type", "doc_period", "doc_link", "ticker", "doc_name"}))
    return FileMeta(
        doc_name=stem, company=fields["company"], ticker=given.get("ticker") or None, form=fields["form"] or "unknown",
        fiscal_year=fields["year"], fiscal_quarter=fields["quarter"],
        dated=date.fromisoformat(fields["dated"]) if fields["dated"] else None,
        url=given.get("doc_link") or None, extra=extra,
    )


class LocalFileSource:
    """PDF / HTML files (or folders of them, not recursive) as raw filing records."""

    name = "local-files"

    def __init__(self, paths: Path | str | Sequence[Path | str],
                 metadata: Mapping[str, Mapping[str, str]] | None = None) -> None:
        items = [paths] if isinstance(paths, (str, Path)) else list(paths)
        self.paths = [Path(p) for p in items]
        for p in self.paths:
            if not p.exists():
                raise NotFoundError(f"{p} does not exist; give an existing PDF/HTML file or a folder of them")
            if p.is_file() and p.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise ConfigError(f"{p} is not a supported file; supported: {', '.join(SUPPORTED_SUFFIXES)}")
        self.metadata = {k: dict(v) for k, v in (metadata or {}).items()}

    def files(self) -> list[Path]:
        """The supported files named or contained in the given folders, sorted, without duplicates."""
        found: list[Path] = []
        for p in self.paths:
            if p.is_dir():
                found.extend(sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES))
            else:
                found.append(p)
        return list(dict.fromkeys(found))

    def load(self, path: Path) -> RawFiling:
        """Read one file (not parsed). Raises NotFoundError when it is missing."""
        if not path.is_file():
            raise NotFoundError(f"{path} does not exist; check the path")
        meta = infer_meta(path.stem, self.metadata.get(path.stem))
        kind = BodyKind.PDF if path.suffix.lower() == ".pdf" else BodyKind.HTML
        try:
            body = path.read_bytes()
        except OSError as exc:  # e.g. permissions: one bad file, reported per row
            raise SourceError(f"{path}: unreadable file ({type(exc).__name__}: {exc}); check its permissions") from exc
        return _record(path, meta, body, kind)

    def records(self) -> Iterator[RawFiling]:
        for path in self.files():
            yield self.load(path)

    def iter_results(self) -> Iterator[RawFiling | SourceFailure]:
        """Each file's raw record, or a SourceFailure naming the file and the error; a bad file never stops the
        batch (a file that cannot be parsed is reported the same way by ``equimind.ingest.documents``)."""
        for path in self.files():
            try:
                raw = self.load(path)
            except EquiMindError as exc:
                log.warning("skipping %s: %s", path, exc)
                yield SourceFailure(source=str(path), error=str(exc))
                continue
            yield raw


def _record(path: Path, meta: FileMeta, body: bytes, kind: BodyKind) -> RawFiling:
    pairs = [("doc_name", meta.doc_name), ("file", path.name), *meta.extra]
    if meta.fiscal_year:
        pairs.append(("fiscal_year", meta.fiscal_year))
    if meta.fiscal_quarter:
        pairs.append(("fiscal_quarter", meta.fiscal_quarter))
    if meta.dated:
        pairs.append(("date_basis", "document date from the file name"))
    return RawFiling(
        source_key=f"local:{path.name}", ticker=meta.ticker, cik=None, company=meta.company, source=Source.LOCAL,
        origin=Origin.LOCAL_FILE, form=meta.form, filed_at=meta.dated, period_end=None, url=meta.url,
        title=meta.title, body=body, kind=kind, name=str(path), meta=tuple(pairs),
        # what an inline-XBRL filing declares counts only when its file name and metadata give no fiscal year
        declared_fiscal=not meta.fiscal_year,
    )
