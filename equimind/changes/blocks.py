"""A filing cut into what a comparison aligns: comparable sections, their paragraphs, and risk factors.

- **Sections** are the item sections the ingest layer found (``Document.sections``), keyed by what they are, so a
  10-K's "Item 1A" meets a 10-Q's "Part II, Item 1A": ``risk_factors``, ``mdna``, ``business``, ``notes``,
  ``market_risk``, ``legal``. A 10-K whose Item 8 only points elsewhere (under 5,000 characters: "set forth in
  Item 15") has its statements and notes under Item 15 or 16 (the longer), which is then ``notes``.
- **Paragraphs** are the blocks between blank lines, trimmed. Page furniture (a page number, "Table of Contents")
  is dropped, and a paragraph cut by a page break (it ends without closing punctuation and the next starts in lower
  case) is joined again, so a PDF's page breaks do not read as edits. Markdown table blocks are set aside: a
  table's year columns move every filing, so tables are counted, not diffed.
- **Risk factors**: inside ``risk_factors``, a heading is a one-sentence paragraph of at most 600 characters, not
  starting with a bullet, ending in a full stop, and followed by a longer paragraph (its body). Without the bold
  type of the HTML this also takes a body's one-sentence lead paragraph for a heading; the diff aligns paragraphs,
  not factors, so such a split only changes how a change is labelled, never whether it is found.
  A short line without closing punctuation followed by a heading is a group title ("Risks Related to
  Manufacturing"): it is skipped, as layout. Paragraphs before the first heading are the
  preamble.

Every function here is total: any text, any section list, gives a result (possibly empty).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from equimind.core.documents import Document, Section
from equimind.lexicon.forms import is_quarterly
from equimind.lexicon.text import split_prose_sentences

SECTION_KEYS = ("risk_factors", "mdna", "business", "notes", "market_risk", "legal")
NOTES_MIN_CHARS = 5_000  # an Item 8 shorter than this points to the statements elsewhere (Item 15)
HEADING_MAX_CHARS = 600
ITEM_TITLE_MAX_WORDS = 24  # the longest item title (Item 5's) is 17 words; a paragraph past that is content
GROUP_TITLE_MAX_CHARS = 150
_ITEM = re.compile(r"^(?:Part\s+(?P<part>IV|I{1,3}),\s*)?Item\s+(?P<item>\d{1,2}[A-D]?)\b", re.IGNORECASE)
_ANNUAL = {"1": "business", "1A": "risk_factors", "3": "legal", "7": "mdna", "7A": "market_risk", "8": "notes"}
_QUARTERLY = {("I", "1"): "notes", ("I", "2"): "mdna", ("I", "3"): "market_risk", ("II", "1"): "legal",
              ("II", "1A"): "risk_factors"}
_BREAK = re.compile(r"\n[ \t\u00a0]*\n")
_FURNITURE = re.compile(r"^(?:\d{1,3}|[ivxlc]{1,6}|page \d{1,3}|table of contents|index|\(?continued\)?)$",
                        re.IGNORECASE)
# A heading opens a topic, so it never starts by continuing the text before it: sentence-initial discourse
# connectives (the explicit connectives of the Penn Discourse Treebank that open a sentence), anaphoric
# demonstratives, and a date or period the sentence is set in ("On April 9, 2025", "During the third quarter").
_CONTINUES = re.compile(
    r"^(?:in addition|additionally|also|moreover|furthermore|further|however|nevertheless|nonetheless|"
    r"for example|for instance|as a result|consequently|accordingly|therefore|thus|similarly|likewise|"
    r"in particular|specifically|in contrast|by contrast|meanwhile|otherwise|instead|finally|"
    r"this|these|that|those|such|other than|unless|"
    r"on (?:or about )?[A-Z][a-z]+ \d|in (?:early |late |mid-)?(?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december|fiscal|the (?:first|second|third|fourth) quarter)|"
    r"during|over the past|since|as of|beginning)\b", re.IGNORECASE)
# ... and it states a risk, it does not point to another document
_REFERS = re.compile(r"\b(?:annual report|quarterly report|form 10-[kq]|item 1a)\b", re.IGNORECASE)
_CLOSING = tuple(".:;!?\"”’)")
_CELL_NUMBER = re.compile(r"(?<![\w.])\(?[$€£]?\s?\d[\d,]*(?:\.\d+)?\)?%?(?![\w])")
_WS = re.compile(r"[\s\u00a0]+")
_FOLDED = re.compile("[\u2018\u2019\u201c\u201d\u2013\u2014]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def norm(text: str) -> str:
    """Case, white space (incl. no-break spaces), curly quotes and dashes folded: two spans that read the same
    compare equal."""
    if _FOLDED.search(text):
        text = text.translate(_QUOTES)
    return " ".join(text.split()).lower()


@dataclass(frozen=True)
class Paragraph:
    start: int
    end: int
    text: str  # document text[start:end]
    key: str  # norm(text), page furniture inside a joined paragraph removed

    @functools.cached_property
    def sentences(self) -> list[tuple[int, int]]:
        """Absolute [start, end) of each sentence. A line break inside a paragraph is a PDF's line wrap, not a
        sentence end, so sentences are split on the paragraph with its line breaks read as spaces (same offsets)."""
        flat = self.text.replace("\n", " ")
        return [(self.start + s, self.start + e) for s, e in split_prose_sentences(flat) if e > s]


@dataclass
class RiskFactor:
    heading: Paragraph | None  # None for the preamble
    body: list[Paragraph] = field(default_factory=list)

    @property
    def paragraphs(self) -> list[Paragraph]:
        return ([self.heading] if self.heading else []) + self.body

    @property
    def start(self) -> int:
        return self.paragraphs[0].start

    @property
    def end(self) -> int:
        return self.paragraphs[-1].end


@dataclass(frozen=True)
class SectionText:
    key: str
    name: str
    start: int
    end: int
    paragraphs: tuple[Paragraph, ...]
    tables: int


def section_key(name: str, form: str | None) -> str | None:
    """The comparable key of an item section's name, or None when the item is not compared."""
    m = _ITEM.match(name.strip())
    if not m:
        return None
    item = m.group("item").upper()
    if is_quarterly(form):
        return _QUARTERLY.get(((m.group("part") or "I").upper(), item))
    return _ANNUAL.get(item)


def keyed_sections(doc: Document) -> dict[str, Section]:
    """The compared sections of ``doc`` by key (the first section of each key; the longest when a key repeats)."""
    out: dict[str, Section] = {}
    for s in doc.sections:
        key = section_key(s.name, doc.form)
        if key and (key not in out or s.end - s.start > out[key].end - out[key].start):
            out[key] = s
    notes = out.get("notes")
    if not is_quarterly(doc.form) and (notes is None or notes.end - notes.start < NOTES_MIN_CHARS):
        later = [s for s in doc.sections if (m := _ITEM.match(s.name.strip())) and m.group("item") in ("15", "16")]
        best = max(later, key=lambda s: s.end - s.start, default=None)
        if best is not None and best.end - best.start >= NOTES_MIN_CHARS:
            out["notes"] = best
    if not out and doc.sections and len(doc.sections) == 1:
        out["full_text"] = doc.sections[0]
    return out


def _is_table(block: str) -> bool:
    """A Markdown table, or a table a PDF printed as text: most lines carry two numbers and no full stop."""
    lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
    if not lines:
        return False
    if sum(ln.startswith("|") for ln in lines) * 2 >= len(lines):
        return True
    rows = sum(1 for ln in lines if len(_CELL_NUMBER.findall(ln)) >= 2 and not ln.endswith("."))
    return len(lines) >= 2 and rows * 2 > len(lines)


def paragraphs(text: str, start: int, end: int) -> tuple[list[Paragraph], int]:
    """The paragraphs of ``text[start:end]`` (absolute spans) and how many table blocks were set aside."""
    raw: list[tuple[int, int]] = []
    pos = start
    body = text[start:end]
    for m in _BREAK.finditer(body):
        raw.append((pos, start + m.start()))
        pos = start + m.end()
    raw.append((pos, end))
    blocks: list[tuple[int, int]] = []
    tables = 0
    for s, e in raw:
        seg = text[s:e]
        stripped = seg.strip()
        if not stripped or _FURNITURE.match(_WS.sub(" ", stripped)):
            continue
        if _is_table(stripped):
            tables += 1
            continue
        lead = len(seg) - len(seg.lstrip())
        blocks.append((s + lead, s + lead + len(stripped)))
    merged: list[list[tuple[int, int]]] = []
    for s, e in blocks:
        if merged:
            prev = text[merged[-1][-1][0]:merged[-1][-1][1]]
            first = text[s:e].lstrip("\u00a0 ")[:1]
            if not prev.rstrip().endswith(_CLOSING) and first.islower():
                merged[-1].append((s, e))
                continue
        merged.append([(s, e)])
    out = []
    for parts in merged:
        s, e = parts[0][0], parts[-1][1]
        out.append(Paragraph(s, e, text[s:e], " ".join(norm(text[a:b]) for a, b in parts)))
    return out, tables


def section_texts(doc: Document) -> dict[str, SectionText]:
    out = {}
    for key, sec in keyed_sections(doc).items():
        start, end = max(0, sec.start), min(len(doc.text), sec.end)
        paras, tables = paragraphs(doc.text, start, end) if end > start else ([], 0)
        # the item heading itself ("Item 1A. Risk Factors") is not content; a paragraph that goes on past the
        # title (a one-paragraph item: "Item 3. Legal Proceedings See Note 12 ...") is
        if paras and _ITEM.match(paras[0].text) and len(paras[0].text.split()) <= ITEM_TITLE_MAX_WORDS:
            paras = paras[1:]
        out[key] = SectionText(key, sec.name, start, end, tuple(paras), tables)
    return out


def _one_sentence(p: Paragraph) -> bool:
    return len(split_prose_sentences(p.text)) == 1


_BULLETS = "•●·-–—*"


def _bulleted(p: Paragraph | None) -> bool:
    t = p.text.lstrip() if p is not None else ""
    return bool(t) and t[0] in _BULLETS


def is_heading(p: Paragraph, nxt: Paragraph | None, prev: Paragraph | None = None) -> bool:
    """A risk factor's heading (module docstring). Some filings print every heading as a bullet ("* The Company
    faces ..."): a bulleted paragraph is a heading when neither the paragraph before nor the one after is
    bulleted (then it is not an item of a list) and, bullet stripped, it passes the same tests."""
    t = " ".join(p.text.split())  # no-break spaces and line wraps read as spaces
    if t and t[0] in _BULLETS:
        if _bulleted(prev) or _bulleted(nxt):
            return False
        t = t.lstrip(_BULLETS + " ")
    if not t or len(t) > HEADING_MAX_CHARS or t.endswith((":", ";", ",")) or t[0].islower() or t[0] in _BULLETS:
        return False
    if _CONTINUES.match(t) or _REFERS.search(t):
        return False
    if nxt is None or not _one_sentence(p) or not t.endswith((".", "!", "?", ".\"", ".”")):
        return False
    return len(nxt.text) > len(t)


def heading_text(p: Paragraph) -> str:
    """A heading as a risk factor's name: trimmed, its bullet (if any) dropped."""
    return p.text.strip().lstrip(_BULLETS + " ").strip()


def is_title(p: Paragraph) -> bool:
    """A title line (no closing punctuation, at most ``GROUP_TITLE_MAX_CHARS``): layout, not content."""
    t = p.text.strip()
    return 0 < len(t) <= GROUP_TITLE_MAX_CHARS and not t.endswith(_CLOSING)


def is_group_title(p: Paragraph) -> bool:
    t = p.text.strip()
    return 0 < len(t) <= GROUP_TITLE_MAX_CHARS and not t.endswith(_CLOSING) and t[0].isupper()


def heading_at(paras: Sequence[Paragraph], i: int) -> bool:
    """Whether ``paras[i]`` is a risk factor's heading (``is_heading``). Its body is the next paragraph, or the one
    after it when the next is a subtitle (a title line, e.g. "Advertising, professional, marketplace, and gaming
    platform abuses") and that one does not open another factor."""
    def at(k: int) -> Paragraph | None:
        return paras[k] if 0 <= k < len(paras) else None

    prev, nxt, after = at(i - 1), at(i + 1), at(i + 2)
    if is_heading(paras[i], nxt, prev):
        return True
    return (nxt is not None and after is not None and is_title(nxt) and not is_heading(after, at(i + 3), nxt)
            and is_heading(paras[i], after, prev))


def risk_factors(paras: tuple[Paragraph, ...] | list[Paragraph]) -> list[RiskFactor]:
    """The risk factors of a risk-factor section (the preamble first, heading None, when there is one)."""
    out: list[RiskFactor] = []
    for i, p in enumerate(paras):
        nxt = paras[i + 1] if i + 1 < len(paras) else None
        if is_group_title(p) and nxt is not None and heading_at(paras, i + 1):
            continue
        if heading_at(paras, i):
            out.append(RiskFactor(p))
        elif out:
            out[-1].body.append(p)
        else:
            out.append(RiskFactor(None, [p]))
    return out
