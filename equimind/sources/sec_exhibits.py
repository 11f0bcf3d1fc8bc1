"""The exhibits a live 10-K (or 10-Q) carries its substance in: the annual report to shareholders (EX-13) and,
where the filing index describes one as holding the financial statements or the annual report, an EX-99.

Banks commonly file a 10-K whose Items 7 and 8 (MD&A, financial statements) say only "incorporated by reference to
the Annual Report to Shareholders", filed with the 10-K as Exhibit 13 (Wells Fargo does). Without the exhibit, the
stored 10-K holds almost none of the filing's substance. So when the live source fetches a 10-K it also reads the
filing's index and downloads those exhibits; ``ingest/exhibits.py`` appends them to the 10-K's text.

Which documents a filing holds, with their types, is on the filing's index page
``{sec_base_url}/Archives/edgar/data/{cik}/{accession without dashes}/{accession}-index.html`` (the folder's
``index.json`` lists file names and sizes but no document types). The page is parsed by edgartools
(``edgar.attachments.Attachments.load``: its table of documents → sequence, description, document, type); the
requests go through the SEC client's polite HTTP client (the declared identity as User-Agent, its rate limit, retries
and its on-disk cache: archives are immutable, so they are cached for good). Nothing here reads a document's text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from equimind.core.errors import EquiMindError
from equimind.sources.base import FilingRef, RawExhibit, SourceFailure
from equimind.sources.sec_edgar import SecEdgarClient, document_url

ANNUAL_REPORT_TYPE = re.compile(r"^EX-13(?:\.\d+)?$", re.IGNORECASE)  # Reg. S-K Item 601(b)(13)
STATEMENTS_TYPE = re.compile(r"^EX-99(?:\.\d+)?$", re.IGNORECASE)
STATEMENTS_WORDS = re.compile(r"financial\s+statements|annual\s+report", re.IGNORECASE)


@dataclass(frozen=True)
class IndexedDocument:
    """One row of a filing index's table of documents."""

    sequence: str
    description: str
    document: str
    document_type: str


def carries_exhibits(form: str) -> bool:
    """Whether a filing of ``form`` is fetched with its exhibits: the periodic reports (10-K, 10-K/A, 10-KT, 10-Q),
    whose MD&A and statements a filer may put in an exhibit (Wells Fargo's 10-Qs carry them as EX-13 too)."""
    return form.strip().upper().startswith(("10-K", "10-Q"))


def index_url(base_url: str, ref: FilingRef) -> str:
    folder = f"{base_url}/Archives/edgar/data/{int(ref.cik)}/{ref.accession.replace('-', '')}"
    return f"{folder}/{ref.accession}-index.html"


def parse_filing_index(html: bytes | str) -> list[IndexedDocument]:
    """The documents an EDGAR filing index page lists (an empty list for a page without the table)."""
    from edgar.attachments import Attachments, parse_homepage_html

    found = Attachments.load(parse_homepage_html(html))
    return [IndexedDocument(sequence=str(a.sequence_number or ""), description=str(a.description or "").strip(),
                            document=str(a.document or "").strip(), document_type=str(a.document_type or "").strip())
            for a in found.documents if a.document]


def wanted_exhibits(rows: Sequence[IndexedDocument]) -> list[IndexedDocument]:
    """Every EX-13 / EX-13.x, and each EX-99 / EX-99.x whose description names financial statements or an annual
    report; HTML or text documents only (a PDF or an image is not what the parser reads)."""
    def readable(r: IndexedDocument) -> bool:
        return r.document.lower().endswith((".htm", ".html", ".txt"))

    return [r for r in rows if readable(r) and (
        ANNUAL_REPORT_TYPE.match(r.document_type)
        or (STATEMENTS_TYPE.match(r.document_type) and STATEMENTS_WORDS.search(r.description)))]


def fetch_exhibits(client: SecEdgarClient, ref: FilingRef) -> tuple[tuple[RawExhibit, ...], list[SourceFailure]]:
    """The wanted exhibits of a live filing, downloaded, and one SourceFailure per index or exhibit that could not be
    had (naming the filing, and saying the filing itself is stored without it)."""
    if not carries_exhibits(ref.form):
        return (), []
    what = f"{ref.ticker or ref.cik} {ref.form} filed {ref.filed.isoformat()}"
    url = index_url(client.base_url, ref)
    try:
        rows = parse_filing_index(client.http.get_bytes(url))
    except EquiMindError as exc:
        return (), [SourceFailure(source=url, error=f"{what}: its filing index could not be read, so the exhibits "
                                                    f"it may carry its substance in (EX-13) were not fetched; the "
                                                    f"{ref.form} is stored without them ({exc})")]
    exhibits: list[RawExhibit] = []
    failures: list[SourceFailure] = []
    for row in wanted_exhibits(rows):
        doc_url = document_url(client.base_url, ref.cik, ref.accession, row.document)
        try:
            body = client.http.get_bytes(doc_url).decode("utf-8", errors="replace")
        except EquiMindError as exc:
            failures.append(SourceFailure(source=doc_url, error=f"{what}: exhibit {row.document_type} "
                                                                f"({row.document}) could not be downloaded; the "
                                                                f"{ref.form} is stored without it ({exc})"))
            continue
        exhibits.append(RawExhibit(document_type=row.document_type.upper(), document=row.document,
                                   description=row.description, url=doc_url, body=body))
    return tuple(exhibits), failures
