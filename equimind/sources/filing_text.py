"""Plain text from an EDGAR primary document (HTML / inline XBRL), standard library only.

Block elements become line breaks, table cells are separated by `` | ``, script/style and the hidden inline-XBRL
header (``ix:header``: thousands of machine-readable facts not shown to a reader) are dropped, whitespace is
collapsed. This is what the sentiment analysis reads; the ingest pipeline may use its own richer parser.
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

_BLOCK = frozenset({"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section",
                    "article", "ul", "ol", "title", "hr"})
_CELL = frozenset({"td", "th"})
_SKIP = frozenset({"script", "style", "ix:header", "head"})


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip_depth += 1
        elif tag in _BLOCK:
            self.parts.append("\n")
        elif tag in _CELL:
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Readable plain text of an HTML document (paragraphs on their own lines)."""
    p = _TextParser()
    p.feed(html)
    p.close()
    text = unescape("".join(p.parts)).replace("\xa0", " ")
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip(" |") for line in text.split("\n"))
    return "\n".join(line for line in lines if line)
