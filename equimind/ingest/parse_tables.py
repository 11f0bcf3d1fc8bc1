"""HTML tables (as parsed by edgartools) → Markdown pipe tables, one table row per line.

SEC filings lay financial tables out on a grid of physical columns: a ``$`` sign, the number and a ``%`` or ``)`` each
sit in their own cell, with empty spacer columns between periods, and rows disagree on colspans. The rendering here:

1. expands every row to physical columns ``[start, end)`` using colspans;
2. glues symbol-only cells to their neighbour (``$`` + ``130,497`` → ``$130,497``; ``75.0`` + ``%`` → ``75.0%``);
3. merges adjacent physical columns unless some row has two *different* non-empty cells in them, so a logical
   column that different rows place at different physical offsets collapses into one, and spacer columns vanish;
4. writes a header line (header rows combined per column, e.g. ``Year Ended Jan 26, 2025``), a ``---`` line and
   one line per non-empty body row. Cell text has its whitespace collapsed and ``|`` escaped, so a row stays one line.

Layout tables (every row has at most one non-empty cell, or there is a single row) are returned as plain paragraphs:
filers use them for headings such as ``Item 1A. | Risk Factors`` and for footnotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_PREFIXES = frozenset({"$", "€", "£", "¥", "(", "$(", "($", "US$"})
_SUFFIXES = frozenset({"%", ")", ")%", "%)", "pts", "bps"})


@dataclass(frozen=True)
class GridCell:
    """A non-empty cell placed on physical columns [start, end)."""

    text: str
    start: int
    end: int


def clean_cell(text: str) -> str:
    """Collapse whitespace (a Markdown row must stay on one line) and escape pipes."""
    return " ".join(text.split()).replace("|", "\\|")


def place_row(cells: list[tuple[str, int]]) -> list[GridCell]:
    """(text, colspan) cells → non-empty GridCells on physical columns."""
    out: list[GridCell] = []
    col = 0
    for text, span in cells:
        width = max(1, span)
        cleaned = clean_cell(text)
        if cleaned:
            out.append(GridCell(cleaned, col, col + width))
        col += width
    return out


def glue_symbols(row: list[GridCell]) -> list[GridCell]:
    """Attach currency signs to the next cell and %/) to the previous one."""
    out: list[GridCell] = []
    pending: GridCell | None = None
    for cell in row:
        if pending is not None:
            cell = GridCell(pending.text + cell.text, pending.start, cell.end)
            pending = None
        if cell.text in _PREFIXES:
            pending = cell
        elif cell.text in _SUFFIXES and out:
            prev = out[-1]
            out[-1] = GridCell(prev.text + cell.text, prev.start, cell.end)
        else:
            out.append(cell)
    if pending is not None:
        out.append(pending)
    return out


def column_groups(rows: list[list[GridCell]], width: int) -> list[tuple[int, int]]:
    """Merge adjacent physical columns that no row fills with two different cells; drop empty groups."""
    owner: list[list[int]] = []  # owner[r][c] = index of the cell of row r covering column c, or -1
    for row in rows:
        cols = [-1] * width
        for i, cell in enumerate(row):
            for c in range(cell.start, min(cell.end, width)):
                cols[c] = i
        owner.append(cols)
    groups: list[tuple[int, int]] = []
    start = 0
    current = [cols[0] if width else -1 for cols in owner]
    for c in range(1, width):
        clash = any(cur != -1 and cols[c] != -1 and cols[c] != cur for cur, cols in zip(current, owner, strict=True))
        if clash:
            groups.append((start, c))
            start = c
            current = [cols[c] for cols in owner]
        else:
            current = [cur if cur != -1 else cols[c] for cur, cols in zip(current, owner, strict=True)]
    if width:
        groups.append((start, width))
    return [g for g in groups if any(_cells_in(row, g) for row in rows)]


def _cells_in(row: list[GridCell], group: tuple[int, int]) -> list[GridCell]:
    return [c for c in row if c.start < group[1] and group[0] < c.end]


def _body_line(row: list[GridCell], groups: list[tuple[int, int]]) -> str:
    """A body cell is printed once, in the group holding its first column."""
    texts = []
    for g in groups:
        texts.append(" ".join(c.text for c in row if g[0] <= c.start < g[1]))
    return "| " + " | ".join(texts) + " |"


def _header_line(header_rows: list[list[GridCell]], groups: list[tuple[int, int]]) -> str:
    """Header levels joined top to bottom; an upper-level cell ("Year Ended") labels every group it spans, a
    bottom-level cell only the group where it starts (so a one-row header is not repeated across columns)."""
    texts = []
    last = len(header_rows) - 1
    for g in groups:
        parts: list[str] = []
        for level, row in enumerate(header_rows):
            cells = _cells_in(row, g) if level < last else [c for c in row if g[0] <= c.start < g[1]]
            for c in cells:
                if not parts or parts[-1] != c.text:
                    parts.append(c.text)
        texts.append(" ".join(parts))
    return "| " + " | ".join(texts) + " |"


def render_grid(rows: list[list[tuple[str, int]]], n_header: int) -> str:
    """Rows of (text, colspan) with the first ``n_header`` being header rows → Markdown (or paragraphs)."""
    placed = [glue_symbols(place_row(r)) for r in rows]
    keep = [(i < n_header, r) for i, r in enumerate(placed) if r]
    if not keep:
        return ""
    if len(keep) == 1 or all(len(r) <= 1 for _, r in keep):
        return "\n\n".join(" ".join(c.text for c in r) for _, r in keep)
    width = max(c.end for _, r in keep for c in r)
    groups = column_groups([r for _, r in keep], width)
    header_rows = [r for is_header, r in keep if is_header]
    body_rows = [r for is_header, r in keep if not is_header]
    if not header_rows or not body_rows:  # one header line is needed; an all-"header" table keeps only its first
        rows_all = header_rows + body_rows
        header_rows, body_rows = rows_all[:1], rows_all[1:]
    lines = [_header_line(header_rows, groups), "| " + " | ".join("---" for _ in groups) + " |"]
    lines.extend(_body_line(r, groups) for r in body_rows)
    return "\n".join(lines)


def table_node_markdown(node: Any) -> str:
    """Render an ``edgar.documents.table_nodes.TableNode``."""
    rows: list[list[tuple[str, int]]] = [[(c.text(), int(c.colspan or 1)) for c in h] for h in node.headers]
    n_header = len(rows)
    for row in [*node.rows, *node.footer]:
        rows.append([(c.text(), int(c.colspan or 1)) for c in row.cells])
    return render_grid(rows, n_header)
