"""Parent-child chunking of a Document's canonical text.

Each section is tokenised once (token spans with character offsets), then cut twice: into parents of at most
``parent_tokens`` tokens, and each parent into children of at most ``child_tokens`` tokens. Rules:

- a chunk never crosses a section boundary, and every child lies inside exactly one parent;
- a cut falls only at the end of a word (whitespace follows), never inside a Markdown table row (a line that starts
  with ``|``); among the allowed cuts that fill a chunk to between ``min_fill`` and 100 % of its budget, the cut at a
  paragraph break wins, then a sentence end, then a line break, then any word boundary (furthest first). When the
  rest of a span fits in two chunks, the cut is placed nearest the middle so no tiny tail is left;
- a single word or table row longer than the budget is kept whole as its own chunk (the only way a chunk exceeds its
  budget), so the embedder may truncate such an outlier, but no text is ever split mid-row or mid-word;
- spans are ``[start, end)`` into ``doc.text`` with ``doc.text[start:end] == chunk.text``; chunks start and end on
  non-whitespace, so every non-whitespace character of a section lies in exactly one child.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from equimind.core.documents import Chunk, Document, PageSpan, Parent, Section, date_to_int, sha256_hex
from equimind.core.errors import ConfigError
from equimind.core.protocols import Tokenizer

PARAGRAPH, SENTENCE, LINE, WORD = 3, 2, 1, 0
_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S")
_SENTENCE_END = frozenset(".!?")
_CLOSERS = frozenset("\"'”’)]")


@dataclass(frozen=True)
class Cuts:
    """Allowed cut positions of one region (sorted), their priority and the token count before each."""

    pos: list[int]
    prio: list[int]
    tokens: list[int]


def _is_sentence_end(text: str, i: int) -> bool:
    """Does the word ending at ``i`` end a sentence ('growth.' / 'growth."')?"""
    ch = text[i - 1]
    if ch in _CLOSERS and i >= 2:
        ch = text[i - 2]
    return ch in _SENTENCE_END


def cut_points(text: str, start: int, end: int) -> tuple[list[int], list[int]]:
    """Every allowed cut in ``text[start:end]`` with its priority. The region's last word end is always a cut."""
    line_start = text.rfind("\n", 0, start) + 1
    first = _NON_WS.search(text, line_start)
    in_table = first is not None and first.start() < end and text[first.start()] == "|" \
        and "\n" not in text[line_start:first.start()]
    pos: list[int] = []
    prio: list[int] = []
    for m in _WS.finditer(text, start, end):
        ws, we = m.span()
        run = m.group()
        if "\n" in run:
            in_row, in_table = in_table, we < end and text[we] == "|"
        else:
            in_row = in_table
        if ws == start or (in_row and "\n" not in run and we != end):
            continue
        pos.append(ws)
        if we == end or "\n\n" in run:
            prio.append(PARAGRAPH)
        elif _is_sentence_end(text, ws) and not in_row:
            prio.append(SENTENCE)
        else:
            prio.append(LINE if "\n" in run else WORD)
    if end > start and not text[end - 1].isspace():
        pos.append(end)
        prio.append(PARAGRAPH)
    return pos, prio


def build_cuts(text: str, start: int, end: int, tokenizer: Tokenizer) -> Cuts:
    """Tokenise ``text[start:end]`` once and attach the number of tokens before every cut."""
    pos, prio = cut_points(text, start, end)
    tok_ends = [start + e for _, e in tokenizer.token_spans(text[start:end])]
    tok_ends.sort()
    return Cuts(pos, prio, [bisect.bisect_right(tok_ends, p) for p in pos])


def _choose(cuts: Cuts, lo: int, last: int, base: int, budget: int, fill: float) -> int:
    """Index of the cut that ends the chunk beginning after cut ``lo - 1`` (``base`` tokens before it)."""
    counts = cuts.tokens
    hi = bisect.bisect_right(counts, base + budget, lo, last + 1) - 1
    if hi < lo:  # the first word / table row alone exceeds the budget: keep it whole
        return lo
    if hi == last:
        return last
    remaining = counts[last] - base
    balanced = remaining <= 2 * budget
    # the first chunk is at least min_fill full; when the rest fits in two chunks, the second must fit too
    floor = base + (max(remaining - budget, min(fill * budget, remaining / 2)) if balanced else fill * budget)
    start = bisect.bisect_left(counts, floor, lo, hi + 1)
    window = range(min(start, hi), hi + 1)
    best = max(cuts.prio[k] for k in window)
    top = [k for k in window if cuts.prio[k] == best]
    if balanced:
        mid = base + remaining / 2
        return min(top, key=lambda k: (abs(counts[k] - mid), -k))
    return top[-1]


def plan(cuts: Cuts, first: int, last: int, base: int, budget: int, fill: float) -> list[int]:
    """Indices of the chosen cuts that split cut range [first, last] into chunks of at most ``budget`` tokens."""
    chosen: list[int] = []
    lo = first
    while lo <= last:
        k = _choose(cuts, lo, last, base, budget, fill)
        chosen.append(k)
        base = cuts.tokens[k]
        lo = k + 1
    return chosen


def regions(doc: Document) -> list[Section | tuple[int, int]]:
    """The document's sections in order, clamped and de-overlapped, plus any uncovered gap as (start, end)."""
    n = len(doc.text)
    out: list[Section | tuple[int, int]] = []
    pos = 0
    for s in sorted(doc.sections, key=lambda s: (s.start, s.end)):
        start, end = max(s.start, pos, 0), min(s.end, n)
        if end <= start:
            continue
        if start > pos:
            out.append((pos, start))
        out.append(Section(s.name, start, end))
        pos = end
    if pos < n:
        out.append((pos, n))
    return out


def page_range(pages: Sequence[PageSpan], starts: Sequence[int], start: int, end: int) -> tuple[int | None, int | None]:
    """(first, last) page overlapped by [start, end); pages sorted by start; (None, None) when unpaged."""
    if not pages:
        return None, None
    i = max(bisect.bisect_right(starts, start) - 1, 0)
    hit = []
    while i < len(pages) and pages[i].start < end:
        if start < pages[i].end:
            hit.append(pages[i].number)
        i += 1
    return (min(hit), max(hit)) if hit else (None, None)


def parent_id(doc_id: str, start: int, end: int) -> str:
    return sha256_hex("parent", doc_id, str(start), str(end))


def embedding_text(chunk: Chunk, doc_title: str, caption: str | None = None) -> str:
    """The text to embed for a child: document title, section and (when given) the financial statement it lies in as
    a one-line header, then the exact span.

    ``Chunk.text`` stays the exact span (citations, BM25); only the dense vector sees this header, which lets a child
    that never names its company, item or statement ("Revenue increased 12%...", "Purchases of PP&E (1,577)") match
    queries that do.
    """
    header = " | ".join(p for p in (doc_title.strip(), chunk.section or "", caption or "") if p)
    return f"{header}\n{chunk.text}" if header else chunk.text


class ParentChildChunker:
    """Cuts a Document into parents (~``parent_tokens``) and children (~``child_tokens``); see the module docstring."""

    def __init__(self, tokenizer: Tokenizer, child_tokens: int = 200, parent_tokens: int = 800,
                 *, min_fill: float = 0.6) -> None:
        for label, value in (("child_tokens", child_tokens), ("parent_tokens", parent_tokens)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{label} must be a positive integer (e.g. 200 / 800), got {value!r}")
        if parent_tokens < child_tokens:
            raise ConfigError(f"parent_tokens ({parent_tokens}) must be >= child_tokens ({child_tokens}); "
                              "valid: any positive integers with parent_tokens >= child_tokens, e.g. 200 and 800")
        if not 0.0 < min_fill <= 1.0:
            raise ConfigError(f"min_fill must be in (0, 1], e.g. 0.6, got {min_fill!r}")
        self.tokenizer = tokenizer
        self.child_tokens = child_tokens
        self.parent_tokens = parent_tokens
        self.min_fill = min_fill

    def chunk(self, doc: Document) -> tuple[list[Parent], list[Chunk]]:
        parents: list[Parent] = []
        children: list[Chunk] = []
        pages = sorted(doc.pages, key=lambda p: p.start)
        page_starts = [p.start for p in pages]
        filed = date_to_int(doc.filed_at) if doc.filed_at else 0
        for region in regions(doc):
            name, start, end = (region.name, region.start, region.end) if isinstance(region, Section) \
                else (None, region[0], region[1])
            for p_start, p_end, kids in self._split_region(doc.text, start, end):
                pid = parent_id(doc.id, p_start, p_end)
                parents.append(Parent(id=pid, doc_id=doc.id, start=p_start, end=p_end, section=name))
                for c_start, c_end in kids:
                    first_page, last_page = page_range(pages, page_starts, c_start, c_end)
                    children.append(Chunk(
                        id=Chunk.make_id(doc.id, c_start, c_end), doc_id=doc.id, parent_id=pid,
                        start=c_start, end=c_end, parent_start=p_start, parent_end=p_end, section=name,
                        text=doc.text[c_start:c_end], ticker=doc.ticker, source=doc.source, form=doc.form,
                        filed_at=filed, page_start=first_page, page_end=last_page,
                    ))
        return parents, children

    def _split_region(self, text: str, start: int, end: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """[(parent_start, parent_end, [(child_start, child_end), ...]), ...] for one section."""
        cuts = build_cuts(text, start, end, self.tokenizer)
        if not cuts.pos:
            return []
        out = []
        lo, base = 0, 0
        for p_cut in plan(cuts, 0, len(cuts.pos) - 1, 0, self.parent_tokens, self.min_fill):
            kids = []
            c_lo = lo
            for c_cut in plan(cuts, lo, p_cut, base, self.child_tokens, self.min_fill):
                kids.append((_next_start(text, cuts.pos[c_lo - 1] if c_lo else start), cuts.pos[c_cut]))
                c_lo = c_cut + 1
            out.append((kids[0][0], kids[-1][1], kids))
            lo, base = p_cut + 1, cuts.tokens[p_cut]
        return out


def _next_start(text: str, pos: int) -> int:
    """First non-whitespace position at or after ``pos``."""
    m = _NON_WS.search(text, pos)
    return m.start() if m else pos
