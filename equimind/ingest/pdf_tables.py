"""Tables of a PDF page as Markdown rows, from pypdf's layout-mode text.

pypdf's default extraction emits a statement page one cell per line ("Purchases of property, plant and equipment
(PP&E)", blank, "(1,577)", blank, "(1,373)" ...), so nothing downstream can tell which number belongs to which line
item or year. Layout mode (``extract_text(extraction_mode="layout")``) keeps each printed row on one line, with its
columns separated by runs of spaces. This module turns such a page into the canonical text the HTML path already
produces: prose lines with their spaces collapsed, and every block of table rows as a Markdown table, one printed row
per table row, the column header (the years) first when the block has one. The answerer quotes a row with the header
that names its period, and the chunker never cuts inside a row, as for filings parsed from HTML.

A *value row* is a line of at least two cells (split on two or more spaces) whose cells after the first are numbers
("1,577", "(370)", "$ 5,363", "12.5 %", "—"); a *header row* is one whose value cells are all years. A table is a run
of at least ``MIN_ROWS`` value rows, with the label-only lines between them (sub-headings, a label wrapped onto two
lines) kept as rows with empty cells. Everything else is prose.
"""

from __future__ import annotations

import re

MIN_ROWS = 2
_GAP = re.compile(r" {2,}|\t+")
_SPACES = re.compile(r"[ \t]+")
_NUMBER = re.compile(r"^[$€£]?\s?\(?[-−]?[$€£]?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?\s?%?\)?$")
_DASH = re.compile(r"^[—–−-]{1,3}$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_CURRENCY = frozenset("$€£")


def _is_value(cell: str) -> bool:
    return bool(_NUMBER.match(cell) or _DASH.match(cell))


def _cells(line: str) -> list[str]:
    """The line's cells: split on runs of spaces, a lone currency sign joined to the number after it and a lone
    per-cent sign to the number before it."""
    raw = [c.strip() for c in _GAP.split(line.strip()) if c.strip()]
    out: list[str] = []
    for cell in raw:
        if out and (out[-1] in _CURRENCY or cell in ("%", ")%", "%)")):
            out[-1] = out[-1] + cell
        else:
            out.append(cell)
    return out


def _peel(cell: str) -> tuple[str, list[str]]:
    """Split the numbers printed one space apart off the end of a cell ("Industrial $ 2,952 37.2 %" -> label
    "Industrial", values ["$2,952", "37.2%"]): a currency sign joins the number after it, a % sign the one before."""
    tokens = cell.split(" ")
    values: list[str] = []
    k = len(tokens)
    while k > 0:
        tok = tokens[k - 1]
        if tok == "%" and k > 1 and _is_value(tokens[k - 2]):
            values.insert(0, tokens[k - 2] + "%")
            k -= 2
        elif _is_value(tok):
            if k > 1 and tokens[k - 2] in _CURRENCY:
                tok, k = tokens[k - 2] + tok, k - 1
            values.insert(0, tok)
            k -= 1
        else:
            break
    return " ".join(tokens[:k]), values


def _row(line: str) -> tuple[str, list[str]] | None:
    """(label, values) for a value row, else None. The label may be empty (a row of years or numbers only)."""
    cells = [_SPACES.sub(" ", c) for c in _cells(line)]
    if not cells:
        return None
    label, peeled = _peel(cells[0])
    if label and len(peeled) < 2:  # one number at the end of a label is part of it ("Notes due 2025")
        label, peeled = cells[0], []
    values = peeled
    for cell in cells[1:]:
        rest, more = _peel(cell)
        if rest:
            return None
        values.extend(more)
    if not values or (not label and len(values) < 2):
        return None
    return label, values


def _table(rows: list[tuple[str, list[str]] | str]) -> str:
    """A block of rows (value rows, and label-only lines as str) as a Markdown table."""
    width = max(len(r[1]) for r in rows if not isinstance(r, str))
    body: list[list[str]] = []
    for r in rows:
        label, values = (r, []) if isinstance(r, str) else r
        body.append([label, *([""] * (width - len(values))), *values])
    first = rows[0]
    if not isinstance(first, str) and all(_YEAR.match(v) for v in first[1]):
        header, body = body[0], body[1:]
    else:
        header = [""] * (width + 1)
    lines = [header, ["---"] * (width + 1), *body]
    return "\n".join("| " + " | ".join(c.replace("|", "/") for c in cells) + " |" for cells in lines)


def layout_to_markdown(text: str) -> str:
    """Layout-mode page text -> prose lines (spaces collapsed) and Markdown tables (see the module docstring)."""
    lines = text.split("\n")
    parsed = [_row(line) for line in lines]
    out: list[str] = []
    i = 0
    while i < len(lines):
        if parsed[i] is None:
            out.append(_SPACES.sub(" ", lines[i]).strip())
            i += 1
            continue
        block: list[tuple[str, list[str]] | str] = []
        pending: list[str] = []  # label-only lines seen since the last value row
        j, end = i, i + 1
        while j < len(lines):
            row, stripped = parsed[j], lines[j].strip()
            if row is not None:
                block.extend(pending)
                pending = []
                block.append(row)
                end = j + 1
            elif stripped and (len(stripped) > 200 or _ends_sentence(stripped)):
                break
            elif stripped:
                pending.append(_SPACES.sub(" ", stripped))
            j += 1
        j = end
        if sum(1 for r in block if not isinstance(r, str)) >= MIN_ROWS:
            out.append(_table(block))
        else:
            out.extend(_SPACES.sub(" ", line).strip() for line in lines[i:j])
        i = j
    return "\n".join(out)


def _ends_sentence(line: str) -> bool:
    s = line.rstrip()
    return s.endswith((".", ":", ";")) and len(s.split()) > 6
