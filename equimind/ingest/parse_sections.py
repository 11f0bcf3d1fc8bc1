"""Item sections of SEC filings, found in the canonical TEXT (never in HTML).

A heading candidate is a short line that starts with ``Item 1A.`` (optionally ``Part II, Item 1A``); Markdown table
rows (``| ... |``, where tables of contents live) are ignored. A filing mentions each item several times (table of
contents, cross references, running page headers), so the headings used are the chain of candidates whose item
numbers strictly increase and whose sum of ``log(1 + characters until the next candidate of another item)`` is
largest: a table of contents packs its entries a few characters apart and loses to the real headings, each of which
opens pages of text, and of a run of page headers repeating one item the first weighs most.
Text before the first heading is the ``Cover`` section; a document with no headings is one ``Full text`` section, so
every character belongs to exactly one section.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from equimind.core.documents import Section

_ITEM = re.compile(
    r"^(?:PART\s+(?P<part>IV|I{1,3})\b\s*[.,:;—–-]*\s*)?ITEM\s*(?P<num>\d{1,2})(?P<letter>[A-D])?(?P<sub>\.\d{2})?"
    r"(?![\d.]\d)\s*[.:—–-]?\s*(?P<title>.*)$",
    re.IGNORECASE,
)
_PART = re.compile(r"^PART\s+(?P<part>IV|I{1,3})\b(?P<rest>.*)$", re.IGNORECASE)
_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4}
MAX_HEADING_CHARS = 250
MAX_TITLE_CHARS = 150
_SMALL_WORDS = frozenset({"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"})


@dataclass(frozen=True)
class Heading:
    """An item heading candidate at line offset ``start``; ``order`` sorts items within the form."""

    start: int
    order: tuple[int, int, int, int]
    name: str


def iter_lines(text: str) -> list[tuple[int, str]]:
    """(offset, stripped line) for each non-blank line."""
    out: list[tuple[int, str]] = []
    pos = 0
    for raw in text.split("\n"):
        stripped = raw.strip()
        if stripped:
            out.append((pos + raw.index(stripped[0]), stripped))
        pos += len(raw) + 1
    return out


def tidy_title(title: str) -> str:
    """Collapse whitespace, drop a trailing page number, and soften ALL-CAPS titles."""
    t = " ".join(title.split())
    t = re.sub(r"\s+\d{1,3}$", "", t)[:MAX_TITLE_CHARS].rstrip(" .:")
    if t.isupper():
        words = [w if any(ch.isdigit() for ch in w) else w.lower() for w in t.split()]
        t = " ".join(w if (i and w in _SMALL_WORDS) else w[:1].upper() + w[1:] for i, w in enumerate(words))
    return t


def _title_ok(title: str) -> bool:
    """A heading's title starts with a capital, a bracket or a quote ('Item 7 of Part II' is a reference)."""
    return not title or title[0].isupper() or title[0] in "[(\"“'‘" or title[0].isdigit()


def find_candidates(text: str, form: str | None) -> list[Heading]:
    """Every line that looks like an item heading, with the part it falls under."""
    quarterly = (form or "").upper().startswith("10-Q")
    lines = iter_lines(text)
    part = "I"
    out: list[Heading] = []
    for idx, (off, line) in enumerate(lines):
        if line.startswith("|") or len(line) > MAX_HEADING_CHARS:
            continue
        pm = _PART.match(line)
        m = _ITEM.match(line)
        if pm and not m:
            part = pm.group("part").upper()
            continue
        if not m or not _title_ok(m.group("title")):
            continue
        if m.group("part"):
            part = m.group("part").upper()
        title = m.group("title")
        if not title and idx + 1 < len(lines):
            nxt = lines[idx + 1][1]
            if len(nxt) <= MAX_TITLE_CHARS and not nxt.startswith("|") and not _ITEM.match(nxt):
                title = nxt
        out.append(_heading(off, m, part if quarterly else "", tidy_title(title)))
    return out


def _heading(off: int, m: re.Match[str], part: str, title: str) -> Heading:
    num = int(m.group("num"))
    letter = (m.group("letter") or "").upper()
    sub = m.group("sub") or ""
    order = (_ROMAN.get(part, 0), num, ord(letter) - 64 if letter else 0, int(sub[1:]) if sub else 0)
    label = f"Item {num}{letter}{sub}"
    name = f"{label}. {title}" if title else label
    if part:
        name = f"Part {part}, {name}"
    return Heading(off, order, name)


def best_chain(cands: list[Heading], text_len: int) -> list[Heading]:
    """The increasing-order subsequence maximising the sum of each heading's weight (dynamic programming).

    A heading weighs ``log(1 + characters until the next candidate of another item)``: table-of-contents lines sit a
    few characters apart and weigh little, real headings open pages of text. A PDF's running page header repeats
    its item on every page ("PART I Item 1A"); measured to the next candidate of another item, the first of such a
    run (the heading, or the header of the item's first page) weighs most, so the item starts where it starts, not
    at one of its later pages."""
    n = len(cands)
    if not n:
        return []
    weight = []
    for i in range(n):
        j = i + 1
        while j < n and cands[j].order == cands[i].order:
            j += 1
        weight.append(math.log1p((cands[j].start if j < n else text_len) - cands[i].start))
    score = weight[:]
    nxt = [-1] * n
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if cands[j].order > cands[i].order and weight[i] + score[j] > score[i]:
                score[i], nxt[i] = weight[i] + score[j], j
    i = max(range(n), key=lambda k: score[k])
    chain = []
    while i != -1:
        chain.append(cands[i])
        i = nxt[i]
    return chain


def _pull_back_to_part_line(text: str, start: int, floor: int) -> int:
    """Start an item at the 'PART II' line just above it, so the part marker belongs to its first item."""
    head = text[floor:start].rstrip()
    nl = head.rfind("\n")
    line = head[nl + 1:]
    stripped = line.strip()
    if stripped and len(stripped) <= 80 and _PART.match(stripped) and not _ITEM.match(stripped):
        return floor + nl + 1 + (len(line) - len(line.lstrip()))
    return start


def detect_sections(text: str, form: str | None = None) -> tuple[Section, ...]:
    """Sections covering ``text`` exactly: Cover (if any) then one per item heading."""
    if not text:
        return ()
    chain = best_chain(find_candidates(text, form), len(text))
    if not chain:
        return (Section("Full text", 0, len(text)),)
    starts: list[int] = []
    floor = 0
    for h in chain:
        starts.append(max(floor, _pull_back_to_part_line(text, h.start, floor)))
        floor = h.start + 1
    out: list[Section] = []
    if starts[0] > 0:
        out.append(Section("Cover", 0, starts[0]))
    for k, h in enumerate(chain):
        end = starts[k + 1] if k + 1 < len(chain) else len(text)
        out.append(Section(h.name, starts[k], end))
    return tuple(out)
