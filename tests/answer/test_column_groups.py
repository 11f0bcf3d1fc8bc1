"""Column-grouped tables (``answer.column_groups``): a segment results table whose columns come in one group per
segment, as a PDF's text prints it, and the group choice read from it (``answer.choice.choose_columns``). The filing
is made up: a bank with four segments, one table in Markdown and its continuation in plain lines."""

from __future__ import annotations

import Stemmer

from equimind.answer.choice import choose_columns
from equimind.answer.column_groups import group_tables, result_sets, split_names
from equimind.query.analysis import Subject, name_words
from equimind.query.question import analyse_question

STEM = Stemmer.Stemmer("english")
HARBOR = Subject("HRBR", name_words("HRBR", "Harbor Trust Corp."))

FILING = """BUSINESS SEGMENT RESULTS
The Firm has four reportable business segments: Retail & Small Business Banking, Markets & Advisory, Wealth
Management and Treasury. Retail & Small Business Banking serves households. Markets & Advisory serves institutions.
Wealth Management serves private clients. Treasury holds the Firm's liquidity.

Segment results
The following tables summarize the Firm's results by segment.

Three months ended June 30, Retail & Small Business Banking Markets & Advisory Wealth Management
(in millions, except ratios) 2024 2023 Change 2024 2023 Change 2024 2023 Change
|  |  |  |  |  |  |  |  |  |  |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| Total net revenue | $5,210 | $4,980 | 5% | $3,400 | $3,650 | (7)% | $1,120 | $1,010 | 11% |
| Total noninterest expense | 2,900 | 2,850 | 2 | 2,100 | 2,050 | 2 | 700 | 690 | 1 |
Net income/(loss) 1,650 1,480 (a) 11 880 1,020 (a) (14) 300 240 (a) 25

Three months ended June 30, Treasury Total
(in millions, except ratios) 2024 2023 Change 2024 2023 Change
Total net revenue $ (310) $ 120 NM $ 9,420 $ 9,760 (3) %
Total noninterest expense 90 80 13 5,790 5,670 2
Net income/(loss) (260) 30 NM 2,570 2,770 (7)

Three months ended June 30, Six months ended June 30,
(in millions) 2024 2023 Change 2024 2023 Change
| Net interest income | 6,000 | 5,800 | 3% | 11,900 | 11,500 | 3% |
"""


def test_a_segment_table_printed_in_column_groups_is_read_with_its_continuation() -> None:
    tables = group_tables(FILING)
    # the third table groups periods, not segments: no table of groups
    assert [t.names for t in tables] == [
        ("Retail & Small Business Banking", "Markets & Advisory", "Wealth Management"), ("Treasury", "Total")]
    first, second = tables
    assert first.periods == ("2024", "2023", "Change") and first.scale == 1e6 and first.column(2024) == 0
    assert [r.label for r in first.rows] == ["Total net revenue", "Total noninterest expense", "Net income/(loss)"]
    assert first.rows[2].values[1] == (880.0, 1020.0, -14.0)  # the footnote mark "(a)" is no column
    assert second.rows[0].values == ((-310.0, 120.0, None), (9420.0, 9760.0, None))
    assert [len(s) for s in result_sets(tables)] == [2]


def test_group_names_are_cut_where_the_filing_names_them() -> None:
    words = ["Retail", "&", "Small", "Business", "Banking", "Markets", "&", "Advisory", "Wealth", "Management"]
    assert split_names(words, 3, FILING) == ("Retail & Small Business Banking", "Markets & Advisory",
                                             "Wealth Management")
    assert split_names(words, 9, FILING) is None  # a name never starts or ends with "&"


def _choose(ask: str, year: int = 2024) -> str | None:
    q = analyse_question(ask, HARBOR, (), STEM)
    assert q.choice is not None and q.choice.group
    found = choose_columns(q.choice, year, "Q2 of fiscal 2024", [("d", FILING)], "Harbor Trust", "HRBR")
    if found is None:
        return None
    for quote in found[0].quotes:
        assert FILING[quote.start:quote.end] == quote.text
    return found[0].text


def test_the_lowest_segment_is_read_across_both_tables_and_the_total_is_no_segment() -> None:
    text = _choose("Which of Harbor's business segments had the lowest net revenue in Q2 2024?")
    assert text is not None and text.startswith("Treasury (-$310 million) is the lowest of the 4 segments")
    assert "Total" not in text.split(":", 1)[1]
    text = _choose("Which of Harbor's segments had the highest net income in Q2 2024?")
    assert text is not None and text.startswith("Retail & Small Business Banking ($1,650 million) is the highest")


def test_a_growth_choice_reads_the_year_before_and_a_missing_year_finds_nothing() -> None:
    text = _choose("Which segment grew the fastest in Q2 2024?")
    assert text is not None and text.startswith("Wealth Management (+10.9% from a year before)")
    assert _choose("Which of Harbor's segments had the highest net income in Q2 2024?", year=2022) is None


def test_a_table_without_the_groups_word_nearby_answers_no_group_choice() -> None:
    q = analyse_question("Which region had the highest net revenue in Q2 2024?", HARBOR, (), STEM)
    assert q.choice is not None and q.choice.group
    assert choose_columns(q.choice, 2024, "Q2 of fiscal 2024", [("d", FILING)], "Harbor Trust", "HRBR") is None


# A made-up retailer's 10-Q note: product categories as rows, in two sections, the quarter's columns first.
RETAIL = """11. Segments

Reportable segment and product category revenue information was as follows ($ in millions):

Three Months Ended Six Months Ended
July 27, 2024 July 29, 2023 July 27, 2024 July 29, 2023
Revenue by reportable segment
|  |  |  |  |  |
| --- | --- | --- | --- | --- |
| Stores | $4,100 | $4,300 | $8,000 | $8,500 |
| Online | 900 | 800 | 1,700 | 1,600 |
| Total revenue | $5,000 | $5,100 | $9,700 | $10,100 |
| Revenue by product category |  |  |  |  |
| Stores: |  |  |  |  |
| Garden | $1,900 | $2,100 | $3,700 | $4,000 |
| Kitchen | 1,400 | 1,500 | 2,700 | 2,900 |
| Toys | 800 | 700 | 1,600 | 1,600 |
| Total Stores revenue | $4,100 | $4,300 | $8,000 | $8,500 |
| Online: |  |  |  |  |
| Garden | $300 | $200 | $500 | $400 |
| Kitchen | 400 | 420 | 800 | 820 |
| Toys | 200 | 180 | 400 | 380 |
| Total Online revenue | $900 | $800 | $1,700 | $1,600 |
"""


def _quarter_choice(ask: str) -> str | None:
    from equimind.answer.choice import choose_quarter_rows
    from equimind.answer.lines import StatementLines

    lark = Subject("LARK", name_words("LARK", "Best Lark, Inc."))
    q = analyse_question(ask, lark, (), STEM)
    assert q.choice is not None and q.choice.group
    sl = StatementLines({"d": (2025, "10-Q")}, {"d": RETAIL}.__getitem__)
    found = choose_quarter_rows(q.choice, set(q.terms), 2025, 2, ["d"], sl, "Best Lark", "LARK")
    if found is None:
        return None
    assert all(RETAIL[x.start:x.end] == x.text for x in found[0].quotes)
    return found[0].text


def test_a_quarterly_group_choice_reads_the_quarter_column_in_the_section_the_ask_names() -> None:
    text = _quarter_choice("Which Best Lark product category grew the fastest in online sales during Q2 of FY2025?")
    assert text is not None and text.startswith("Garden (+50.0% from a year before) is the highest of the 3")
    text = _quarter_choice("Which product category had the highest revenue in stores during Q2 of FY2025?")
    assert text is not None and text.startswith("Garden ($1,900 million) is the highest of the 3")
    # the ask names no section: which section's categories would be compared?
    assert _quarter_choice("Which product category had the highest revenue during Q2 of FY2025?") is None


def test_a_superlative_in_the_company_name_is_not_the_choice_and_a_later_metric_is_its_measure() -> None:
    from equimind.query.choice import find_choice

    got = find_choice("Which Best Lark product category performed the best by top line in Q2?", frozenset())
    assert got is not None and got.word == "best" and got.group == "category" and got.measure == ("top", "line")
    got = find_choice("which best lark category had the lowest sales in Q2?", frozenset({"best", "lark"}))
    assert got is not None and got.word == "lowest"
