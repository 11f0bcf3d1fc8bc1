"""Answer units: the sentences and table rows of a passage, each row with its table's header and caption."""

from __future__ import annotations

import random

from equimind.answer.record import PassageRead
from equimind.answer.units import _SEPARATOR, UnitKind, passage_units, table_header


def _random_text(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(3, 12)):
        kind = rng.random()
        if kind < 0.3:
            lines.append(rng.choice(["Revenue by segment (in millions)", "", "Table 4.", "We sold more chips."]))
        else:  # a table block: maybe a separator anywhere, including first
            for r in range(rng.randint(1, 8)):
                sep = rng.random() < 0.2
                lines.append("|---|---|" if sep else f"| item {r} | {rng.randint(1, 999)} |")
    return "\n".join(lines)


def test_rows_get_the_header_and_caption_a_walk_up_the_table_gives() -> None:
    """passage_units reuses the row above's header instead of walking up the table for each row; every row's header
    and caption must equal ``table_header`` run for it, for passages starting and ending anywhere."""
    rng = random.Random(11)
    checked = 0
    for _ in range(300):
        text = _random_text(rng)
        start = rng.randint(0, max(0, len(text) - 1))
        end = rng.randint(start, len(text))
        passage = PassageRead(doc_id="d", start=start, end=end, score=1.0)
        for u in passage_units(text, passage, 0):
            if u.kind is UnitKind.ROW:
                assert (u.header, u.caption) == table_header(text, u.span.start)
                checked += 1
        expected = []  # the rows a walk up the table finds a header for: each is a unit, and no other row is
        pos = start
        while pos < end:
            a = max(text.rfind("\n", 0, pos) + 1, start)
            b = min(len(text) if text.find("\n", pos) < 0 else text.find("\n", pos), end)
            line = text[a:b]
            if line.startswith("|") and not _SEPARATOR.match(line) and b > a and table_header(text, a)[0] is not None:
                expected.append(a)
            pos = b + 1
        assert [u.span.start for u in passage_units(text, passage, 0) if u.kind is UnitKind.ROW] == expected
    assert checked > 300


STATEMENT = """BEST WIDGETS, INC.
CONSOLIDATED BALANCE SHEETS
($ in millions, except per share amounts)
February 2, 2019 February 3, 2018
Assets
Current assets
|  |  |  |
| --- | --- | --- |
| Cash and cash equivalents | $ 1,980 | $ 1,101 |
| Merchandise inventories | 5,409 | 5,209 |
| Total current assets | 9,505 | 9,829 |
Note 4 - Leases (in thousands)
| Lease | 2019 |
| --- | --- |
| Rent | 12 |
"""


def test_a_table_without_its_own_unit_takes_the_unit_line_above_it() -> None:
    from equimind.answer.units import scale_note

    passage = PassageRead(doc_id="d", start=0, end=len(STATEMENT), score=1.0)
    rows = {u.span.text.split("|")[1].strip(): u for u in passage_units(STATEMENT, passage, 0)
            if u.kind is UnitKind.ROW}
    inventories = rows["Merchandise inventories"]
    assert inventories.scale is not None and inventories.scale.text == "($ in millions, except per share amounts)"
    assert STATEMENT[inventories.scale.start:inventories.scale.end] == inventories.scale.text
    assert "in millions" in inventories.scale_context
    assert rows["Rent"].scale is None  # its caption states its own unit
    assert scale_note("| a | 1 |\nno unit here\n", 20) is None


def test_a_unit_line_whose_words_a_pdf_broke_apart_is_read_whole() -> None:
    text = "Statements of Financial Position\n(Dollars\nin\nmillions,\nexcept\nper\nshare\ndata)\n" \
           "| December 31, | 2018 |\n| --- | --- |\n| Property, plant and equipment, net | 12,645 |\n"
    passage = PassageRead(doc_id="d", start=0, end=len(text), score=1.0)
    row = next(u for u in passage_units(text, passage, 0) if u.kind is UnitKind.ROW)
    assert row.scale is not None and "millions" in row.scale.text and text[row.scale.start:row.scale.end] == \
        row.scale.text


def test_a_period_of_an_initialism_or_a_names_abbreviation_ends_no_sentence() -> None:
    text = ("New duties were announced on imports to the U.S. (\u201cU.S. Duties\u201d), including duties on panels. "
            "Orbit Power Inc. Sells inverters. Form No. 5 applies. We sold 5 units in the U.K. Sales rose 3%.")
    units = passage_units(text, PassageRead(doc_id="d", start=0, end=len(text), score=1.0, ticker="ORBT"), 0)
    assert [u.span.text for u in units if u.kind is UnitKind.SENTENCE] == [
        "New duties were announced on imports to the U.S. (\u201cU.S. Duties\u201d), including duties on panels.",
        "Orbit Power Inc. Sells inverters.", "Form No. 5 applies.",
        "We sold 5 units in the U.K. Sales rose 3%."]  # joined after an initialism: whole, if two
