"""Which primary financial statement a passage belongs to (the *statement caption* of a chunk).

A statement page is mostly a table of line items ("Purchases of property, plant and equipment (1,577)") that never
names its statement, while the question that needs it often does ("... capital expenditure ... in the cash flow
statement"). The statement's title is printed once, above the table; this module finds it and the span it governs, so
the embedding header (``embed_format``: ``title-section-statement-v2``) can carry it into every child of the statement.

The titles are the closed set of primary statements US GAAP requires (income statement / statement of operations /
earnings, comprehensive income, balance sheet / financial position / condition, cash flows, stockholders' equity);
nothing here is fitted to a benchmark. A title is recognised on a line of its own (or split over two lines, as PDF
extraction often does), compared letters-only so that broken words ("Balance Shee t", "Cash Flow s") and parenthetical
units ("(in millions)") do not matter; a line inside a Markdown table (a table of contents) is not a title.

Scope of a caption:
- paged documents (PDFs): the page whose first lines hold the title; a page naming three or more statement kinds at
  its top is an index page and gets none;
- unpaged documents (filings as HTML → Markdown): from the title through the end of the first table that starts
  within ``TABLE_GAP`` characters after it; a title with no table under it governs nothing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from equimind.core.documents import Chunk, Document, PageSpan
from equimind.core.lru import LRU

TOP_LINES = 10  # a paged statement's title is among the first lines of its page
TABLE_GAP = 800  # characters between an unpaged title and the table it heads
MAX_TITLE_LETTERS = 90

_OF = r"statements?of(?:consolidated)?"
KINDS: tuple[tuple[str, str], ...] = (
    ("statement of cash flows", rf"(?:{_OF}cashflows?|cashflows?statements?)"),
    ("balance sheet", rf"(?:balancesheets?|{_OF}financial(?:position|condition))"),
    ("statement of comprehensive income", rf"{_OF}comprehensive(?:income|loss|earnings)(?:loss)?"),
    ("income statement", rf"(?:{_OF}(?:operations|income|earnings)(?:loss)?"
                         r"(?:andcomprehensive(?:income|loss|earnings)(?:loss)?)?|incomestatements?)"),
    ("statement of stockholders' equity", rf"{_OF}(?:changesin)?(?:stockholders|shareholders|shareowners|"
                                          r"owners)?s?(?:equity|deficit|investment)"),
)
_PREFIX = r"(?:the)?(?:condensed|consolidated|combined|unaudited)*"
_SUFFIX = r"(?:continued|unaudited)*"
_TITLE_RES = tuple((name, re.compile(f"{_PREFIX}{pattern}{_SUFFIX}")) for name, pattern in KINDS)
_PAREN = re.compile(r"\([^)]*\)?")
_NOT_LETTER = re.compile(r"[^a-z]+")


@dataclass(frozen=True)
class Caption:
    """``name`` (one of ``KINDS``) governs the document's characters [start, end)."""

    start: int
    end: int
    name: str


def title_kind(line: str) -> str | None:
    """The statement kind whose title ``line`` is (letters only, parentheticals ignored), else None."""
    squeezed = _NOT_LETTER.sub("", _PAREN.sub(" ", line.lower()))
    if not 8 <= len(squeezed) <= MAX_TITLE_LETTERS:
        return None
    for name, rx in _TITLE_RES:
        if rx.fullmatch(squeezed):
            return name
    return None


def _lines(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """(absolute offset, line) for the non-blank lines of text[start:end]."""
    out: list[tuple[int, str]] = []
    pos = start
    for line in text[start:end].split("\n"):
        if line.strip():
            out.append((pos, line))
        pos += len(line) + 1
    return out


def _titles(lines: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """(offset, kind) of every title among ``lines``: a line alone or joined with the next one."""
    found: list[tuple[int, str]] = []
    skip_next = False
    for i, (pos, line) in enumerate(lines):
        if skip_next:
            skip_next = False
            continue
        if line.lstrip().startswith("|"):
            continue
        kind = title_kind(line)
        if kind is None and i + 1 < len(lines) and not lines[i + 1][1].lstrip().startswith("|"):
            kind = title_kind(f"{line} {lines[i + 1][1]}")
            skip_next = kind is not None
        if kind is not None:
            found.append((pos, kind))
    return found


def _paged(text: str, pages: Sequence[PageSpan]) -> list[Caption]:
    out: list[Caption] = []
    for page in sorted(pages, key=lambda p: p.start):
        top = _lines(text, page.start, page.end)[:TOP_LINES]
        found = _titles(top)
        if found and len({kind for _, kind in found}) < 3:
            out.append(Caption(page.start, page.end, found[0][1]))
    return out


_TABLE_START = re.compile(r"^\|", re.M)
_TABLE_END = re.compile(r"\n(?!\|)")


def _unpaged(text: str) -> list[Caption]:
    out: list[Caption] = []
    for pos, kind in _titles(_lines(text, 0, len(text))):
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        table = _TABLE_START.search(text, line_end, min(len(text), line_end + TABLE_GAP))
        if table is None:
            continue
        stop = _TABLE_END.search(text, table.start())
        out.append(Caption(pos, stop.start() if stop else len(text), kind))
    return out


def statement_captions(doc: Document) -> tuple[Caption, ...]:
    """The document's statement captions, sorted by start and not overlapping."""
    found = _paged(doc.text, doc.pages) if doc.pages else _unpaged(doc.text)
    out: list[Caption] = []
    for cap in sorted(found, key=lambda c: c.start):
        if out and cap.start < out[-1].end:  # a second title inside a governed span starts its own
            out[-1] = Caption(out[-1].start, cap.start, out[-1].name)
        out.append(cap)
    return tuple(c for c in out if c.end > c.start)


def caption_at(captions: Sequence[Caption], pos: int) -> str | None:
    """The statement governing character ``pos``, else None."""
    i = bisect.bisect_right([c.start for c in captions], pos) - 1
    return captions[i].name if i >= 0 and pos < captions[i].end else None


_CACHE: LRU[str, tuple[Caption, ...]] = LRU(8)


def document_captions(doc: Document) -> tuple[Caption, ...]:
    """``statement_captions(doc)``, cached by document id (an id is a hash of the text, so it never goes stale):
    the embedder asks once per child, and the children of one document come together."""
    got = _CACHE.get(doc.id)
    if got is None:
        got = statement_captions(doc)
        _CACHE.put(doc.id, got)
    return got


def caption_of(captions: Sequence[Caption], chunk: Chunk) -> str | None:
    """The statement a child lies in: the one governing its first character, else its last (a child that runs from
    the foot of one page into a statement page)."""
    return caption_at(captions, chunk.start) or caption_at(captions, max(chunk.start, chunk.end - 1))


def captioned_texts(chunks: Sequence[Chunk], get_document: Callable[[str], Document]) -> list[str]:
    """What the BM25 index reads for each child: the statement it lies in, if any, then its text ("balance sheet",
    ``\n``, "| Merchandise inventories | 5,409 | 5,209 |"), so a question that names the statement finds its rows.
    Each document is read once (the children of one document come together)."""
    out: list[str] = []
    doc_id: str | None = None
    captions: tuple[Caption, ...] = ()
    for c in chunks:
        if c.doc_id != doc_id:
            doc_id = c.doc_id
            captions = document_captions(get_document(doc_id))
        name = caption_of(captions, c) if captions else None
        out.append(f"{name}\n{c.text}" if name else c.text)
    return out
