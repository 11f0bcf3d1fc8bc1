"""Tables whose columns come in groups, one group per segment, as a PDF's text prints them.

A bank's "Segment results" table puts its segments side by side: a line of group names run together ("Three months
ended March 31, Consumer & Community Banking Corporate & Investment Bank Commercial Banking"), a line of periods
repeated once per group ("(in millions, except ratios) 2021 2020 Change 2021 2020 Change 2021 2020 Change"), then
rows, as Markdown ("| Total net revenue | $12,517 | $13,287 | (6)% | ... |") or as plain lines of a label and its
numbers ("Net income/(loss) 3,100 5,645 (a) (45) 3,725 ..."; footnote marks aside). The statement readers see one
label per row and a value per year; here a row holds one value per group and period.

The group names are cut where the document itself names them: of the ways to cut the name line into as many parts
as there are groups, the one whose parts the document prints most often elsewhere (its segment headings, its prose).
A row is kept only when it holds exactly one number (or "NM" / a dash) per column. Total: any text, no table found
is an empty list.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from equimind.answer.lines import cell_number
from equimind.answer.units import cells
from equimind.answer.values import table_scale

MAX_NAME_WORDS = 16  # a name line longer than this is prose, not a row of group names
MAX_ROWS_GAP = 3  # lines without a row (a wrapped label, a ratio row with fewer columns) before the table ends
NEAR = 12_000  # characters: the tables of one result set (continued on the next page) are read as one

_PERIOD_TOKEN = re.compile(r"^(?:(?:19|20)\d{2}|change|%|chg\.?)$", re.I)
_LEAD = re.compile(r"^\s*(?:\((?:in|dollars in|\$ in)[^)]*\)\s*)", re.I)
_PERIOD_PHRASE = re.compile(
    r"^(?:as of or for the |for the )?(?:(?:three|six|nine|twelve) months|quarter|(?:fiscal )?years?)"
    r"(?: ended)?\s+[A-Z][a-z]+\.?\s+\d{1,2},?\s*(?:\d{4},?\s*)?", re.I)
_FOOTNOTE = re.compile(r"\s\((?:[a-z]|[ivx]{1,3})\)(?=\s|$)")
_VALUE = re.compile(r"\$?\s?\(?-?\d[\d,]*(?:\.\d+)?\)?(?:\s?%)?|\bNM\b|\bN/M\b|[\u2014\u2013-](?=\s|$)")
_JOINERS = frozenset({"&", "and", "of", "the", "for"})
_NOT_NAMES = re.compile(r"\d|\b(?:ended|months?|quarters?|years?|weeks?)\b", re.I)


@dataclass(frozen=True)
class GroupRow:
    label: str
    start: int  # the row's line in the document text
    end: int
    values: tuple[tuple[float | None, ...], ...]  # per group, per period column (None: "NM", a dash, a percent)


@dataclass(frozen=True)
class GroupTable:
    names: tuple[str, ...]  # the groups, left to right
    periods: tuple[str, ...]  # one group's column heads ("2021", "2020", "Change")
    lead: str  # the name line's period phrase ("Three months ended March 31,")
    header_start: int  # the name line through the period line: the quote naming groups and periods
    header_end: int
    scale: float  # the period line's unit ("(in millions ...)"), 1 when none
    rows: tuple[GroupRow, ...]

    def column(self, year: int) -> int | None:
        """The index of ``year``'s column within a group (the first, when printed twice), or None."""
        return next((i for i, p in enumerate(self.periods) if p == str(year)), None)


def _lines(text: str) -> list[tuple[int, int, str]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line), line))
        pos += len(line) + 1
    return out


def _period_pattern(line: str) -> tuple[tuple[str, ...], int] | None:
    """(one group's period heads, the number of groups) of a repeated period line, or None."""
    tokens = _LEAD.sub("", line).split()
    if len(tokens) < 4 or not all(_PERIOD_TOKEN.match(t) for t in tokens):
        return None
    for width in range(1, len(tokens) // 2 + 1):
        k, rest = divmod(len(tokens), width)
        head = tuple(tokens[:width])
        if rest == 0 and k >= 2 and tuple(tokens) == head * k and any(t[:1].isdigit() for t in head):
            return head, k
    return None


def _frequency(text: str, phrase: str, seen: dict[str, int]) -> int:
    if phrase not in seen:
        seen[phrase] = len(re.findall(r"(?<![\w&])" + re.escape(phrase) + r"(?![\w&])", text, re.I))
    return seen[phrase]


def split_names(words: list[str], k: int, text: str) -> tuple[str, ...] | None:
    """``words`` cut into ``k`` names, the cut whose names ``text`` prints most often (the rarest name's count first,
    then all of them); a name never starts or ends with a joining word ("&", "and", "of")."""
    n = len(words)
    if n < k or n > MAX_NAME_WORDS:
        return None
    best: tuple[tuple[int, float], tuple[str, ...]] | None = None
    seen: dict[str, int] = {}
    for cuts in itertools.combinations(range(1, n), k - 1):
        bounds = (0, *cuts, n)
        parts = [words[a:b] for a, b in itertools.pairwise(bounds)]
        if any(p[0].lower() in _JOINERS or p[-1].lower() in _JOINERS for p in parts):
            continue
        names = tuple(" ".join(p) for p in parts)
        counts = [_frequency(text, x, seen) for x in names]
        key = (min(counts), sum(math.log1p(c) for c in counts))
        if best is None or key > best[0]:
            best = (key, names)
    return best[1] if best is not None else None


def _row(line: str, width: int) -> tuple[str, list[float | None]] | None:
    """(label, values) of a Markdown or plain row with exactly ``width`` value columns, or None."""
    if line.lstrip().startswith("|"):
        body = cells(line)
        if len(body) != width + 1 or not body[0]:
            return None
        return body[0], [cell_number(c) for c in body[1:]]
    bare = _FOOTNOTE.sub(" ", line)
    found = list(_VALUE.finditer(bare))
    if len(found) < width:
        return None
    first = found[-width]
    label, tail = bare[:first.start()].strip(), bare[first.start():]
    if not label or not re.search(r"[A-Za-z]", label) or _VALUE.sub("", tail).strip():
        return None
    return label, [cell_number(m.group(0)) for m in found[-width:]]


def group_tables(text: str) -> list[GroupTable]:
    """Every column-grouped table of ``text`` (module docstring), in reading order."""
    lines = _lines(text)
    out: list[GroupTable] = []
    for i, (_, p_end, line) in enumerate(lines):
        pattern = _period_pattern(line)
        if pattern is None or i == 0:
            continue
        head, k = pattern
        j = i - 1
        while j > 0 and not lines[j][2].strip():
            j -= 1
        n_start, _, name_line = lines[j]
        lead = _PERIOD_PHRASE.match(name_line.strip())
        names_text = name_line.strip()[lead.end():] if lead else name_line.strip()
        if _NOT_NAMES.search(names_text):
            continue  # groups of periods ("Three months ended June 30, Six months ended June 30,"), not of names
        names = split_names(names_text.split(), k, text)
        if names is None:
            continue
        rows: list[GroupRow] = []
        gap = 0
        for r_start, r_end, r_line in lines[i + 1:]:
            if not r_line.strip() or set(r_line.replace("|", "").strip()) <= set("-: "):
                if rows and not r_line.strip():
                    gap += 1
                if gap > MAX_ROWS_GAP:
                    break
                continue
            got = _row(r_line, k * len(head))
            if got is None:
                gap += 1
                if gap > MAX_ROWS_GAP or _period_pattern(r_line):
                    break
                continue
            gap = 0
            label, values = got
            groups = tuple(tuple(values[g * len(head):(g + 1) * len(head)]) for g in range(k))
            rows.append(GroupRow(label, r_start, r_end, groups))
        if rows:
            out.append(GroupTable(names, head, lead.group(0).strip() if lead else "", n_start, p_end,
                                  table_scale(line), tuple(rows)))
    return out


def result_sets(tables: list[GroupTable]) -> list[list[GroupTable]]:
    """The tables of one result set together: consecutive tables with the same period heads and period phrase within
    ``NEAR`` characters (a segment table continued below or on the next page)."""
    sets: list[list[GroupTable]] = []
    for t in tables:
        last = sets[-1][-1] if sets else None
        if last is not None and last.periods == t.periods and last.lead == t.lead and \
                t.header_start - last.header_end <= NEAR:
            sets[-1].append(t)
        else:
            sets.append([t])
    return sets
