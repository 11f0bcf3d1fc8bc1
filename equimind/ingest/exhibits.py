"""A periodic report's exhibits in its Document: appended when fetched, recorded as missing when only referred to.

**Appended, not stored apart.** An exhibit fetched with a 10-K (``RawFiling.exhibits``: the annual report to
shareholders, EX-13, that the 10-K incorporates by reference: ``sources/sec_exhibits.py``) is parsed with the same
HTML parser and appended to the 10-K's canonical text after a label line, as one more section named by that label
("Exhibit 13 (EX-13): 2024 Annual Report to Shareholders, wfc-1231x2024xex13.htm"). The exhibit is legally part of
the filing (Items 7 and 8 point into it), so it is kept as part of the one Document: it shares the 10-K's ticker,
form, filing date, period and declared fiscal year, so every filter by form or period, the statement lookups and
``ask --ticker`` find it with no other change, while a Document of its own (form "10-K EX-13", no inline-XBRL fiscal
period) would be skipped by each of them. Citations stay exact: a citation is a span of the Document's canonical
text, and the exhibit's text is in it; meta records where each exhibit starts and ends and its own URL
(``exhibit_EX-13_span`` = "start:end", ``exhibit_EX-13_url``), so a span inside it can be traced to the file.

**Missing, recorded.** A 10-K stored without its exhibit (the recorded corpus has Wells Fargo's primary document
only) says so in prose: "Information in response to this Item 8 can be found in the 2024 Annual Report to
Shareholders ... That information is incorporated into this item by reference." ``incorporated_exhibits`` finds
such paragraphs; an exhibit type it names that was not appended is recorded as ``exhibit_missing`` ("EX-13"), which
the answer path reads to say why a question about the company cannot be answered and how to fetch the exhibit.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace

from equimind.core.documents import Section
from equimind.core.errors import ParseError
from equimind.ingest.parse import ParsedText, parse_filing_html
from equimind.sources.base import RawExhibit, RawFiling
from equimind.sources.sec_exhibits import carries_exhibits

log = logging.getLogger(__name__)

EXHIBITS_KEY = "exhibits"  # the exhibit types appended, comma-separated ("EX-13")
MISSING_KEY = "exhibit_missing"  # the exhibit types the text incorporates by reference but were not appended
SEPARATOR = "\n\n"

_INCORPORATED = re.compile(r"\bincorporated\b[^.;|]{0,60}?\bby\s+reference\b", re.IGNORECASE)
_ANNUAL_REPORT = re.compile(r"\bannual\s+report\s+to\s+(?:share|stock|security\s+)holders\b", re.IGNORECASE)
_EXHIBIT = re.compile(r"\bexhibit\s+(?:no\.?\s*)?(13|99)(?:\.\d+|\([a-z0-9]\))?(?!\d|\.\d)", re.IGNORECASE)
_OTHER_FILING = re.compile(r"^\W{0,3}(?:to|of|in)\b[^.|]{0,60}?\b(?:form\s+(?:10|8|s)-|report\s+on\s+form|"
                           r"registration\s+statement)", re.IGNORECASE)
_STATEMENTS = re.compile(r"\bfinancial\s+statements\b", re.IGNORECASE)


def incorporated_exhibits(text: str) -> tuple[str, ...]:
    """The exhibit types ("EX-13", "EX-99") a filing's text says its annual report or financial statements are
    incorporated by reference from. Read paragraph by paragraph: a paragraph that says "incorporated ... by reference"
    and names the annual report to shareholders (stockholders, security holders) or "Exhibit 13" gives EX-13; one
    that names "Exhibit 99" and financial statements gives EX-99. An exhibit of another filing ("Exhibit 13 to the
    Company's Annual Report on Form 10-K for 2019") does not count. Total: any text, empty tuple when none."""
    found: set[str] = set()
    for para in text.split("\n"):
        if not _INCORPORATED.search(para):
            continue
        if _ANNUAL_REPORT.search(para):
            found.add("EX-13")
        for m in _EXHIBIT.finditer(para):
            if _OTHER_FILING.search(para[m.end():]):
                continue
            if m.group(1) == "13":
                found.add("EX-13")
            elif _STATEMENTS.search(para):
                found.add("EX-99")
    return tuple(sorted(found))


def base_type(document_type: str) -> str:
    """"EX-13.1" → "EX-13" (the type an incorporation names)."""
    return document_type.strip().upper().split(".", 1)[0]


def exhibit_label(ex: RawExhibit) -> str:
    number = base_type(ex.document_type).removeprefix("EX-")
    what = f": {ex.description}" if ex.description else ""
    return f"Exhibit {number} ({ex.document_type}){what}, {ex.document}"


def append_exhibits(parsed: ParsedText, exhibits: Sequence[RawExhibit]) -> tuple[ParsedText, list[tuple[str, str]],
                                                                               list[str]]:
    """(the text with each readable exhibit appended as a labelled section, meta pairs saying where each lies, the
    types appended). An exhibit whose HTML holds no text is skipped with a warning (and so counts as missing)."""
    text, sections = parsed.text, list(parsed.sections)
    pairs: list[tuple[str, str]] = []
    appended: list[str] = []
    for ex in exhibits:
        try:
            body = parse_filing_html(ex.body, None, name=ex.url).text
        except ParseError as exc:
            log.warning("exhibit %s not appended: %s", ex.url, exc)
            continue
        start = len(text) + len(SEPARATOR)
        text = f"{text}{SEPARATOR}{exhibit_label(ex)}{SEPARATOR}{body}"
        sections.append(Section(exhibit_label(ex), start, len(text)))
        pairs += [(f"exhibit_{ex.document_type}_span", f"{start}:{len(text)}"), (f"exhibit_{ex.document_type}_url",
                                                                                 ex.url)]
        appended.append(ex.document_type)
    if appended:
        pairs.append((EXHIBITS_KEY, ",".join(appended)))
    return replace(parsed, text=text, sections=tuple(sections)), pairs, appended


def with_exhibits(parsed: ParsedText, raw: RawFiling) -> tuple[ParsedText, list[tuple[str, str]]]:
    """A periodic report's parsed text with its fetched exhibits appended, and the meta pairs: where each exhibit
    lies, and ``exhibit_missing`` for what the text incorporates by reference but the record did not bring. Other
    forms pass through unchanged."""
    if not carries_exhibits(raw.form):
        return parsed, []
    out, pairs, appended = append_exhibits(parsed, raw.exhibits)
    have = {base_type(t) for t in appended}
    missing = [t for t in incorporated_exhibits(parsed.text) if t not in have]
    if missing:
        pairs.append((MISSING_KEY, ",".join(missing)))
    return out, pairs
