"""Raw filings → canonical text with sections (and pages for PDFs).

HTML (inline-XBRL 10-K/10-Q/8-K) is parsed by edgartools' HTML document parser (``edgar.documents``, lxml-based,
drops the hidden ``ix:header`` and ``display:none`` content); its node tree is walked here and rendered as:

- one block per paragraph / heading / list item, whitespace collapsed to single spaces;
- tables as Markdown pipe tables (``parse_tables``), one table row per line;
- blocks separated by a blank line; page furniture ("Table of Contents" links, bare page numbers) dropped, and a
  paragraph cut by a page break (no closing punctuation, next block starts in lower case) joined back.

Sections are then found in that text (``parse_sections``). PDFs go through pypdf page by page in layout mode, which
keeps each printed table row on one line; ``pdf_tables.layout_to_markdown`` turns the rows into Markdown tables and
collapses the spaces of prose lines, so a PDF's statements read like a filing's. Pages are joined by a blank line and
each page's span is recorded (``PageSpan``, zero-based like FinanceBench).

The fiscal year and period a filing declares in its hidden inline-XBRL header (``dei:DocumentFiscalYearFocus``,
``dei:DocumentFiscalPeriodFocus``) are kept as ``ParsedText.fiscal``: NVIDIA's 10-Q for the quarter ended
2025-07-27 is fiscal 2026 Q2, which no date arithmetic recovers.
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equimind.core.documents import PageSpan, Section
from equimind.core.errors import ParseError
from equimind.ingest.parse_sections import detect_sections
from equimind.ingest.parse_tables import table_node_markdown
from equimind.ingest.pdf_tables import layout_to_markdown

log = logging.getLogger(__name__)

PARSER_VERSION = "1"
_NOISE = re.compile(r"^(?:table of contents\b.{0,60}|index|page \d{1,3}|\d{1,3}\.?|[ivx]{1,5}\.?)$", re.IGNORECASE)
_OPEN_END = re.compile(r"[A-Za-z0-9,\-–—]$")
_TEXT_TYPES = frozenset({"HEADING", "PARAGRAPH", "TEXT", "LINK", "LIST_ITEM"})


@dataclass(frozen=True)
class ParsedText:
    """Canonical text plus its sections and (for paged sources) page spans."""

    text: str
    sections: tuple[Section, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    seconds: float = 0.0
    fiscal: tuple[tuple[str, str], ...] = ()  # ("fiscal_year", "2026"), ("fiscal_period", "Q2") when declared


@dataclass(frozen=True)
class Block:
    text: str
    is_table: bool = False


# ---------------------------------------------------------------------------------------------------------------
# HTML


def parse_filing_html(html: str | bytes, form: str | None = None, *, name: str = "<html>") -> ParsedText:
    """Inline-XBRL filing HTML → canonical text with Item sections. Raises ParseError naming ``name``."""
    t0 = time.perf_counter()
    root = _edgar_tree(html, name)
    text = assemble(iter_blocks(root))
    if not text.strip():
        raise ParseError(f"{name}: no text found in the HTML; is it a filing's primary document?")
    sections = detect_sections(text, form)
    seconds = time.perf_counter() - t0
    log.debug("parsed %s: %d chars, %d sections in %.2fs", name, len(text), len(sections), seconds)
    return ParsedText(text=text, sections=sections, seconds=seconds, fiscal=declared_fiscal(html))


_DEI = {"fiscal_year": re.compile(r'name="dei:DocumentFiscalYearFocus"[^>]*>\s*((?:19|20)\d{2})\s*<'),
        "fiscal_period": re.compile(r'name="dei:DocumentFiscalPeriodFocus"[^>]*>\s*(FY|Q[1-4]|H[12])\s*<')}


def declared_fiscal(html: str | bytes) -> tuple[tuple[str, str], ...]:
    """The fiscal year / period the filing's inline-XBRL header declares (empty for documents without one)."""
    text = html.decode("utf-8", errors="replace") if isinstance(html, bytes) else html
    out: list[tuple[str, str]] = []
    for key, pattern in _DEI.items():
        m = pattern.search(text)
        if m:
            out.append((key, m.group(1)))
    return tuple(out)


def _edgar_tree(html: str | bytes, name: str) -> Any:
    try:
        from edgar.documents import HTMLParser, ParserConfig
    except ImportError as exc:  # pragma: no cover - pinned dependency
        raise ParseError("edgartools is not installed; run `pip install -e .` in the repository") from exc
    config = ParserConfig(detect_sections=False, extract_xbrl=False, fast_table_rendering=True)
    try:
        doc = HTMLParser(config).parse(html)
    except Exception as exc:  # edgartools raises several unrelated types; one actionable error for the caller
        raise ParseError(f"{name}: HTML could not be parsed ({type(exc).__name__}: {exc})") from exc
    return doc.root


def iter_blocks(root: Any) -> Iterator[Block]:
    """Depth-first walk of the edgartools node tree, one Block per paragraph-like node or table."""
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        kind = node.type.name
        if _hidden(node):
            continue
        if kind == "TABLE":
            yield from _table_blocks(node)
        elif kind == "LIST":
            for line in node.text().split("\n"):
                yield Block(" ".join(line.split()))
        elif kind in _TEXT_TYPES:
            yield Block(" ".join(node.text().split()))
        elif kind != "IMAGE":
            stack.extend(reversed(node.children))


def _hidden(node: Any) -> bool:
    """``display:none`` content (edgartools already drops the ix:header) is not part of the filing's text."""
    style = getattr(node, "style", None)
    display = getattr(style, "display", None) or ""
    return str(display).replace(" ", "").lower() == "none"


def _table_blocks(node: Any) -> Iterator[Block]:
    rendered = table_node_markdown(node)
    if not rendered:
        return
    if rendered.startswith("|"):
        yield Block(rendered, is_table=True)
    else:  # a layout table rendered as paragraphs
        for para in rendered.split("\n\n"):
            yield Block(para)


def assemble(blocks: Iterator[Block] | list[Block]) -> str:
    """Join blocks with blank lines, dropping page furniture and re-joining paragraphs split by a page break."""
    out: list[Block] = []
    for block in blocks:
        text = block.text.strip()
        if not text or (not block.is_table and _NOISE.match(text)):
            continue
        prev = out[-1] if out else None
        if (prev is not None and not prev.is_table and not block.is_table
                and _OPEN_END.search(prev.text) and text[0].islower()):
            out[-1] = Block(prev.text + " " + text)
        else:
            out.append(Block(text, block.is_table))
    return "\n\n".join(b.text for b in out)


# ---------------------------------------------------------------------------------------------------------------
# PDF


def parse_pdf(source: Path | bytes, form: str | None = None, *, name: str | None = None) -> ParsedText:
    """PDF → canonical text page by page (pypdf layout mode, tables as Markdown). Raises ParseError for an unreadable
    or text-less PDF."""
    t0 = time.perf_counter()
    label = name or (str(source) if isinstance(source, Path) else "<pdf>")
    pages = _pdf_page_texts(source, label)
    parts: list[str] = []
    spans: list[PageSpan] = []
    pos = 0
    for number, page_text in enumerate(pages):
        if parts:
            parts.append("\n\n")
            pos += 2
        parts.append(page_text)
        spans.append(PageSpan(number, pos, pos + len(page_text)))
        pos += len(page_text)
    text = "".join(parts)
    if not text.strip():
        raise ParseError(f"{label}: the PDF has no extractable text (scanned images?); OCR it first")
    return ParsedText(text=text, sections=detect_sections(text, form), pages=tuple(spans),
                      seconds=time.perf_counter() - t0)


def _pdf_page_texts(source: Path | bytes, label: str) -> list[str]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(source) if isinstance(source, bytes) else source)
        return [clean_page_text(layout_to_markdown(page.extract_text(extraction_mode="layout") or ""))
                for page in reader.pages]
    except FileNotFoundError:
        raise
    except Exception as exc:  # pypdf raises PdfReadError, ValueError, KeyError... on damaged files
        raise ParseError(f"{label}: unreadable PDF ({type(exc).__name__}: {exc}); check the file is a valid PDF")\
            from exc


def clean_page_text(text: str) -> str:
    """Normalise pypdf output: no trailing spaces on lines, at most one blank line, no NULs."""
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
