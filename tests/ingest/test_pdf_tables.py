"""Layout-mode PDF text -> prose lines and Markdown tables (equimind.ingest.pdf_tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.ingest.pdf_tables import layout_to_markdown

STATEMENT = """Table of Contents
3M Company and Subsidiaries
                                Consolidated Statement of Cash Flow s
Years ended December 31

(Millions)                                                     2018              2017             2016
Cash Flows from Operating Activities
Net income including noncontrolling interest         $        5,363      $      4,869       $     5,058
   Depreciation and amortization                                1,488             1,544            1,474
   Company pension and postretirement contributions              (370)             (967)            (383)
Cash Flows from Investing Activities
   Purchases of property, plant and equipment (PP&E)           (1,577)           (1,373)          (1,420)
   Other — net                                                      9               (6)               —

The accompanying Notes to Consolidated Financial Statements are an integral part of this statement.
                                                   60"""


def test_a_statement_becomes_a_markdown_table_with_its_years_as_header() -> None:
    out = layout_to_markdown(STATEMENT).split("\n")
    assert "Consolidated Statement of Cash Flow s" in out  # prose: spaces collapsed, kept as printed
    table = [line for line in out if line.startswith("|")]
    assert table[0] == "| (Millions) | 2018 | 2017 | 2016 |"
    assert table[1] == "| --- | --- | --- | --- |"
    assert "| Purchases of property, plant and equipment (PP&E) | (1,577) | (1,373) | (1,420) |" in table
    assert "| Net income including noncontrolling interest | $5,363 | $4,869 | $5,058 |" in table
    assert "| Cash Flows from Investing Activities |  |  |  |" in table  # a sub-heading inside the table
    assert "| Other — net | 9 | (6) | — |" in table
    assert out[-2:] == ["The accompanying Notes to Consolidated Financial Statements are an integral part of this "
                        "statement.", "60"]


def test_numbers_printed_one_space_apart_and_split_percent_signs_are_cells() -> None:
    text = ("Industrial     $    2,952     37.2   %    $  627     (0.3)%\n"
            "Total Company  $ 7,945 100.0 % $ 1,783 (0.6)%")
    table = layout_to_markdown(text).split("\n")
    assert table[2] == "| Industrial | $2,952 | 37.2% | $627 | (0.3)% |"
    assert table[3] == "| Total Company | $7,945 | 100.0% | $1,783 | (0.6)% |"
    assert table[0] == "|  |  |  |  |  |"  # no row of years above: an empty header


@pytest.mark.parametrize("text", [
    "Revenue grew 12% in 2018 compared with 2017, as described in Note 12",
    "See Note 12\nSee Note 14",  # one trailing number per line is prose, not a table
    "Senior notes due 2025       500",  # a single row is not a table
    "",
])
def test_prose_stays_prose(text: str) -> None:
    out = layout_to_markdown(text)
    assert "|" not in out
    assert out.split() == text.split()


def test_a_label_that_ends_in_a_year_keeps_it() -> None:
    table = layout_to_markdown("Notes due 2025       500     500\nNotes due 2030       750     750")
    assert "| Notes due 2025 | 500 | 500 |" in table.split("\n")


def test_a_pipe_inside_a_label_cannot_break_the_row() -> None:
    table = layout_to_markdown("A | B      1     2\nC      3     4")
    assert "| A / B | 1 | 2 |" in table.split("\n")


@pytest.mark.integration
def test_a_real_cash_flow_statement_reads_row_by_row(financebench_dir: Path) -> None:
    """The cash-flow page of a real 10-K (cut out of the PDF), through parse_pdf."""
    import io

    from pypdf import PdfReader, PdfWriter

    from equimind.ingest.parse import parse_pdf

    pdf = financebench_dir / "pdfs" / "3M_2018_10K.pdf"
    if not pdf.is_file():
        pytest.skip(f"{pdf} is absent; it is part of shared/ (EQUIMIND_SHARED)")
    writer = PdfWriter()
    writer.add_page(PdfReader(pdf).pages[59])  # FinanceBench's evidence page for 3M's FY2018 capex
    buf = io.BytesIO()
    writer.write(buf)
    text = parse_pdf(buf.getvalue()).text
    assert "| Purchases of property, plant and equipment (PP&E) | (1,577) | (1,373) | (1,420) |" in text
    assert "| (Millions) | 2018 | 2017 | 2016 |" in text
    assert "Consolidated Statement of Cash Flow" in text
