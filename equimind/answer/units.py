"""Answer units of retrieved passages: sentences, and Markdown table rows with the header row that names their
columns' periods, the caption line above the table and, when neither states the table's unit, the nearest unit line
above it ("(In millions)", ``scale_note``).

Every unit is a [start, end) span of the document's canonical text (so a quote of it passes ``verify_citation``
exactly); a row's header is found in the full canonical text (the first line of the row's table block), even when
the passage starts below it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from equimind.answer.record import PassageRead, Quote
from equimind.answer.values import TABLE_SCALE, table_scale

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$(\d\"“])")
# A period that ends an initialism ("U.S.", "U.K.") or a name's abbreviation ("Inc.", "Corp.", "No.") ends no
# sentence: splitting there cuts a quote in the middle ("Tariffs”), including additional tariffs ..."). Two sentences
# joined after "U.S." are still whole.
_ABBREVIATION_END = re.compile(r"(?:(?<![\w.])(?:[A-Z]\.){2,}|"
                               r"\b(?:Inc|Corp|Co|Ltd|No|Nos|Mr|Mrs|Ms|Dr|St|vs|approx)\.)$")
_SEPARATOR = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")
MAX_SENTENCE = 700


class UnitKind(StrEnum):
    SENTENCE = "sentence"
    ROW = "row"


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Unit:
    doc_id: str
    kind: UnitKind
    span: Span
    passage: PassageRead
    rank: int  # the passage's rank among the retrieved ones (0 = first)
    header: Span | None = None
    caption: Span | None = None
    scale: Span | None = None  # the line above a table that states its unit ("(In millions)"), when it is not
    # the caption or the header (a statement's unit line sits at the top of the page, above column and section lines)
    section: Span | None = None  # a row's sub-heading: the nearest label-only row above it in its table
    # ("| Operating income (loss): | | |" over "| Google Cloud | 6,112 |")

    @property
    def context(self) -> str:
        """The text used for term matching: a row with its header and caption."""
        parts = [self.caption.text if self.caption else "", self.header.text if self.header else "", self.span.text]
        return "\n".join(p for p in parts if p)

    @property
    def scale_context(self) -> str:
        """The text whose unit words scale a row's numbers: its context and the unit line above its table."""
        return f"{self.scale.text}\n{self.context}" if self.scale is not None else self.context


def cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, len(text) if b < 0 else b


def table_header(text: str, row_start: int) -> tuple[Span | None, Span | None]:
    """(header row, caption line) of the table holding the row starting at ``row_start``."""
    a = row_start
    header: Span | None = None
    while a > 0:
        pa, pb = _line_bounds(text, a - 1)
        line = text[pa:pb]
        if not line.startswith("|"):
            break
        if not _SEPARATOR.match(line):
            header = Span(pa, pb, line)
        a = pa
    caption: Span | None = None
    back = a - 1
    while back > 0:
        pa, pb = _line_bounds(text, back - 1)
        line = text[pa:pb].strip()
        if line:
            if not line.startswith("|"):
                caption = Span(pa, pb, text[pa:pb])
            break
        back = pa - 1 if pa > 0 else 0
        if pa == 0:
            break
    return header, caption


SECTION_LOOKBACK = 60  # table lines searched above a row for its sub-heading


def table_section(text: str, row_start: int, top: int) -> Span | None:
    """The nearest row above ``row_start`` (not above ``top``, the table's header) whose cells after the label hold
    no number: the sub-heading the row sits under ("Revenues:", "Operating income (loss):"), or None."""
    a = row_start
    for _ in range(SECTION_LOOKBACK):
        if a <= top or a <= 0:
            return None
        pa, pb = _line_bounds(text, a - 1)
        line = text[pa:pb]
        if not line.startswith("|"):
            return None
        row = cells(line)
        if not _SEPARATOR.match(line) and row[0] and not any(ch.isdigit() for c in row[1:] for ch in c):
            return Span(pa, pb, line)
        a = pa
    return None


SCALE_LOOKBACK = 1500  # characters above a table searched for its unit line (a statement page's top lines)


def scale_note(text: str, top: int) -> Span | None:
    """The nearest text line at most ``SCALE_LOOKBACK`` characters above ``top`` (a table's first line) that states
    a unit ("(In millions, except per share amounts)"): a statement states its unit once, at the top of its page,
    above the tables of its sections."""
    window = text[max(0, top - SCALE_LOOKBACK):top]
    base = top - len(window)
    for m in reversed(list(TABLE_SCALE.finditer(window))):
        a = _line_bounds(text, base + m.start())[0]
        b = _line_bounds(text, base + max(m.start(), m.end() - 1))[1]  # a PDF may break the note's words apart
        if not text.startswith("|", a):
            return Span(a, b, text[a:b])
    return None


def _table_scale_note(text: str, header: Span | None, caption: Span | None) -> Span | None:
    own = " ".join(x.text for x in (header, caption) if x is not None)
    if header is None or table_scale(own) != 1.0:
        return None
    return scale_note(text, (caption or header).start)


def _sentences(text: str, a: int, b: int) -> list[Span]:
    out: list[Span] = []
    pos = a
    for m in _SENT_END.finditer(text, a, b):
        if _ABBREVIATION_END.search(text, max(pos, m.start() - 12), m.start()):
            continue  # "imports to the U.S. (“U.S. Tariffs”), including ...": one sentence
        out.append(Span(pos, m.start(), text[pos:m.start()]))
        pos = m.end()
    if pos < b:
        out.append(Span(pos, b, text[pos:b]))
    return [s for s in out if s.text.strip() and len(s.text) <= MAX_SENTENCE]


def passage_units(text: str, passage: PassageRead, rank: int) -> list[Unit]:
    """The sentences and table rows of ``text[passage.start:passage.end]``."""
    units: list[Unit] = []
    pos = passage.start
    above: tuple[int, Span | None, Span | None, Span | None] = (-2, None, None, None)  # (end, header, caption,
    # unit line) of the last row read
    while pos < passage.end:
        a, b = _line_bounds(text, pos)
        a, b = max(a, passage.start), min(b, passage.end)
        line = text[a:b]
        if line.startswith("|"):
            if not _SEPARATOR.match(line) and b > a:
                # The row right below a row that has a header shares its header and caption (both are fixed by the
                # table's top lines): no walk up the table for every row.
                if above[0] + 1 == a and above[1] is not None:
                    header, caption, scale = above[1:]
                else:
                    header, caption = table_header(text, a)
                    scale = _table_scale_note(text, header, caption)
                above = (b, header, caption, scale)
                if header is not None:  # None: this line is the table's header row, not an answer
                    units.append(Unit(passage.doc_id, UnitKind.ROW, Span(a, b, line), passage, rank, header,
                                      caption, scale, table_section(text, a, header.end)))
        else:
            units.extend(Unit(passage.doc_id, UnitKind.SENTENCE, s, passage, rank) for s in _sentences(text, a, b))
        pos = b + 1
    return units


def all_units(texts: dict[str, str], passages: Sequence[PassageRead]) -> list[Unit]:
    """Units of every passage, each span once (overlapping passages share units), in passage order."""
    seen: set[tuple[str, int, int]] = set()
    out: list[Unit] = []
    for rank, p in enumerate(passages):
        for u in passage_units(texts[p.doc_id], p, rank):
            key = (u.doc_id, u.span.start, u.span.end)
            if key not in seen:
                seen.add(key)
                out.append(u)
    return out


def document_rows(text: str, doc_id: str, rank: int, ticker: str | None = None) -> list[Unit]:
    """Every Markdown table row of a whole document (with header and caption), each as its own one-row passage:
    the table lookup a numeric ask falls back to when the retrieved passages name the metric but state no value."""
    out: list[Unit] = []
    notes: dict[int, Span | None] = {}  # per table header: its unit line
    for pos, b in _text_lines(text):
        if text.startswith("|", pos) and not _SEPARATOR.match(text[pos:b]):
            header, caption = table_header(text, pos)
            if header is not None:
                p = PassageRead(doc_id=doc_id, start=pos, end=b, score=0.0, ticker=ticker)
                if header.start not in notes:
                    notes[header.start] = _table_scale_note(text, header, caption)
                out.append(Unit(doc_id, UnitKind.ROW, Span(pos, b, text[pos:b]), p, rank, header, caption,
                                notes[header.start], table_section(text, pos, header.end)))
    return out


def _text_lines(text: str) -> Iterator[tuple[int, int]]:
    """[start, end) of every line of ``text``, without its newline."""
    pos, n = 0, len(text)
    while pos < n:
        b = text.find("\n", pos)
        b = n if b < 0 else b
        yield pos, b
        pos = b + 1


def document_sentences(text: str, doc_id: str, rank: int, ticker: str | None = None) -> list[Unit]:
    """Every prose sentence of a whole document, each with a one-sentence passage: the sentence lookup a
    value ask falls back to when no retrieved passage of the filing answers it."""
    out: list[Unit] = []
    for pos, b in _text_lines(text):
        if not text.startswith("|", pos):
            for span in _sentences(text, pos, b):
                p = PassageRead(doc_id=doc_id, start=span.start, end=span.end, score=0.0, ticker=ticker)
                out.append(Unit(doc_id, UnitKind.SENTENCE, span, p, rank))
    return out


def unit_quotes(u: Unit, doc_sha: str) -> list[Quote]:
    """The quotes that cite a unit: the sentence or row, a row's header row (its period) and the line that states
    the numbers' unit ("(In millions)": the unit line above the table, or a caption that states one)."""
    role = "row" if u.kind is UnitKind.ROW else "evidence"
    quotes = [Quote(doc_id=u.doc_id, start=u.span.start, end=u.span.end, text=u.span.text, doc_sha256=doc_sha,
                    role=role)]
    if u.header is not None:
        quotes.append(Quote(doc_id=u.doc_id, start=u.header.start, end=u.header.end, text=u.header.text,
                            doc_sha256=doc_sha, role="header"))
    unit = u.scale if u.scale is not None else (
        u.caption if u.caption is not None and table_scale(u.caption.text) != 1.0 else None)
    if unit is not None:
        quotes.append(Quote(doc_id=u.doc_id, start=unit.start, end=unit.end, text=unit.text, doc_sha256=doc_sha,
                            role="unit"))
    return quotes
