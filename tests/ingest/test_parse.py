"""Filing parsing: canonical text, hidden XBRL dropped, Item sections, Markdown tables, PDF pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from equimind.core.errors import ParseError
from equimind.ingest.parse import Block, assemble, parse_filing_html, parse_pdf
from equimind.ingest.parse_sections import detect_sections, tidy_title
from equimind.ingest.parse_tables import render_grid

MINI_10K = """<html xmlns="http://www.w3.org/1999/xhtml"
      xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
      xmlns:xbrli="http://www.xbrl.org/2003/instance"
      xmlns:dei="http://xbrl.sec.gov/dei/2024">
<head><title>acme-20250126</title></head>
<body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:AmendmentFlag" contextRef="c1">false</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="c1">0009999999</ix:nonNumeric></ix:hidden>
<ix:resources><xbrli:context id="c1"><xbrli:entity>
<xbrli:identifier scheme="http://www.sec.gov/CIK">0009999999</xbrli:identifier></xbrli:entity><xbrli:period>
<xbrli:startDate>2024-01-29</xbrli:startDate><xbrli:endDate>2025-01-26</xbrli:endDate></xbrli:period>
</xbrli:context></ix:resources></ix:header></div>
<div><span style="font-weight:700">FORM 10-K</span></div>
<div><span>ACME CORPORATION</span></div>
<table>
<tr><td><span>Item 1.</span></td><td><span>Business</span></td><td><span>3</span></td></tr>
<tr><td><span>Item 1A.</span></td><td><span>Risk Factors</span></td><td><span>5</span></td></tr>
<tr><td><span>Item 7.</span></td><td><span>Management's Discussion and Analysis</span></td><td><span>9</span></td>
</tr>
</table>
<div><span>PART I</span></div>
<div><span>Item 1. Business</span></div>
<div><span>We design anvils and rockets for customers worldwide. Item 7 of Part II describes our results.</span>
</div>
<div><span>Item 1A. Risk Factors</span></div>
<div>
<span>Our business is subject to many risks, including new export controls on our products,
which could reduce our revenue.</span>
</div>
<div style="display:none"><span>SECRET HIDDEN TEXT</span></div>
<div><span>Table of Contents</span></div>
<div><span>Competition may intensify and our margins could</span></div>
<div><span>17</span></div>
<div><span>decline as a result.</span></div>
<div><span>PART II</span></div>
<div><span>Item 7. Management's Discussion and Analysis</span></div>
<div><span>Fiscal year summary:</span></div>
<table>
<tr><td></td><td colspan="6"><span>Year Ended</span></td></tr>
<tr><td></td><td colspan="3"><span>Jan 26, 2025</span></td><td colspan="3"><span>Jan 28, 2024</span></td></tr>
<tr><td><span>Revenue</span></td><td><span>$</span></td><td><span>
<ix:nonFraction name="us-gaap:Revenues" contextRef="c1" unitRef="usd" decimals="-6" scale="6">130,497</ix:nonFraction>
</span></td><td></td><td><span>$</span></td><td><span>60,922</span></td><td></td></tr>
<tr><td><span>Gross margin</span></td><td colspan="2"><span>75.0</span></td><td><span>%</span></td><td colspan="2">
<span>72.7</span></td><td><span>%</span></td></tr>
<tr><td><span>Net loss</span></td><td><span>$</span></td><td><span>(12</span></td><td><span>)</span></td><td>
<span>$</span></td><td><span>(5</span></td><td><span>)</span></td></tr>
</table>
<div><span>Revenue grew because demand for rockets was strong.</span></div>
</body></html>
"""


@pytest.fixture(scope="module")
def mini() -> tuple[str, dict[str, str]]:
    parsed = parse_filing_html(MINI_10K, "10-K", name="mini.html")
    return parsed.text, {s.name: parsed.text[s.start:s.end] for s in parsed.sections}


def test_hidden_xbrl_header_and_display_none_are_dropped(mini: tuple[str, dict[str, str]]) -> None:
    text, _ = mini
    assert "ACME CORPORATION" in text
    for junk in ("0009999999", "AmendmentFlag", "2024-01-29", "SECRET HIDDEN TEXT", "us-gaap"):
        assert junk not in text


def test_sections_skip_the_table_of_contents_and_cover_the_text(mini: tuple[str, dict[str, str]]) -> None:
    text, sections = mini
    assert list(sections) == ["Cover", "Item 1. Business", "Item 1A. Risk Factors",
                              "Item 7. Management's Discussion and Analysis"]
    assert "".join(sections.values()) == text, "sections tile the text: every character has one section"
    assert sections["Item 1. Business"].startswith("PART I\n\nItem 1. Business")
    assert "Item 7 of Part II" in sections["Item 1. Business"], "a cross reference is not a heading"
    assert "export controls" in sections["Item 1A. Risk Factors"]
    assert sections["Cover"].count("| Item 1A. | Risk Factors | 5 |") == 1


def test_financial_table_is_markdown_with_symbols_glued(mini: tuple[str, dict[str, str]]) -> None:
    _, sections = mini
    table = [line for line in sections["Item 7. Management's Discussion and Analysis"].split("\n")
             if line.startswith("|")]
    assert table == [
        "|  | Year Ended Jan 26, 2025 | Year Ended Jan 28, 2024 |",
        "| --- | --- | --- |",
        "| Revenue | $130,497 | $60,922 |",
        "| Gross margin | 75.0% | 72.7% |",
        "| Net loss | $(12) | $(5) |",
    ]


def test_page_furniture_dropped_and_split_paragraph_rejoined(mini: tuple[str, dict[str, str]]) -> None:
    text, _ = mini
    assert "Table of Contents" not in text and "\n17\n" not in text
    assert "our margins could decline as a result." in text


def test_empty_html_raises_parse_error() -> None:
    with pytest.raises(ParseError, match=r"empty\.html"):
        parse_filing_html("<html><body><div style='display:none'>x</div></body></html>", name="empty.html")


def test_assemble_keeps_tables_intact_and_joins_open_paragraphs() -> None:
    blocks = [Block("Revenue was"), Block("Table of Contents"), Block("42"), Block("higher than planned."),
              Block("| a | b |\n| --- | --- |\n| 1 | 2 |", is_table=True), Block("next Para.")]
    assert assemble(blocks) == "Revenue was higher than planned.\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\nnext Para."


def test_render_grid_layout_tables_become_paragraphs_and_cells_stay_on_one_line() -> None:
    assert render_grid([[("Item 1A.", 1), ("Risk Factors", 1)]], 0) == "Item 1A. Risk Factors"
    assert render_grid([[("Note one", 2)], [("", 1), ("Note two", 1)]], 0) == "Note one\n\nNote two"
    md = render_grid([[("", 1), ("A|B", 2)], [("x\ny", 1), ("$", 1), ("5", 1)], [("z", 1), ("7", 2)]], 1)
    assert md.split("\n") == ["|  | A\\|B |", "| --- | --- |", "| x y | $5 |", "| z | 7 |"]


def test_detect_sections_parts_of_a_10q_and_items_of_an_8k() -> None:
    text = ("Cover text\n\nPART I. FINANCIAL INFORMATION\n\nItem 1. Financial Statements\n\nnumbers\n\n"
            "Item 2. MANAGEMENT’S DISCUSSION AND ANALYSIS\n\nprose\n\nPART II. OTHER INFORMATION\n\n"
            "Item 1. Legal Proceedings\n\nnone\n\nItem 1A. Risk Factors\n\nrisks")
    names = [s.name for s in detect_sections(text, "10-Q")]
    assert names == ["Cover", "Part I, Item 1. Financial Statements",
                     "Part I, Item 2. Management’s Discussion and Analysis", "Part II, Item 1. Legal Proceedings",
                     "Part II, Item 1A. Risk Factors"]
    eight_k = "FORM 8-K\n\nItem 5.02 Departure of Directors\n\ntext\n\nItem 9.01 Financial Statements and Exhibits\n\nx"
    assert [s.name for s in detect_sections(eight_k, "8-K")][1:] == [
        "Item 5.02. Departure of Directors", "Item 9.01. Financial Statements and Exhibits"]
    assert detect_sections("no headings here", "10-K") == (detect_sections("no headings here")[0],)
    assert detect_sections("no headings here")[0].name == "Full text"


def test_detect_sections_prefers_body_headings_over_a_plain_text_toc() -> None:
    items = [("1", "Business"), ("1A", "Risk Factors"), ("2", "Properties"), ("7", "Results")]
    toc = "\n".join(f"Item {k}. {title} {page}" for page, (k, title) in enumerate(items, start=3))
    body = "\n\n".join(f"Item {k}. {title}\n\n" + "long text. " * 50 for k, title in items)
    text = f"Cover\n\n{toc}\n\n{body}"
    sections = detect_sections(text, "10-K")
    assert [s.name for s in sections] == ["Cover", "Item 1. Business", "Item 1A. Risk Factors",
                                          "Item 2. Properties", "Item 7. Results"]
    assert sections[1].start == text.index("Item 1. Business\n\nlong")


def test_a_pdfs_running_page_headers_do_not_move_an_item_to_a_later_page() -> None:
    """A PDF prints "PART I / Item 1A" atop every page of Item 1A; the item starts at its heading, not at the page
    header of one of its later pages (Microsoft's FY2016 and FY2023 10-Ks began Item 1A mid-way before)."""
    def pages(item: str, title: str, n: int, words: int) -> str:
        head = f"Item {item}. {title}\n\n" + f"{title} text. " * words
        rest = "".join(f"\n\n{p}\n\nPART I\nItem {item}\n\n" + f"more {title} text. " * words
                       for p in range(2, n + 1))
        return head + rest
    toc = "Item 1. Business 3\nItem 1A. Risk Factors 9\nItem 2. Properties 20"
    text = (f"Cover\n\n{toc}\n\n" + pages("1", "Business", 3, 300) + "\n\n" + pages("1A", "Risk Factors", 6, 300)
            + "\n\n" + pages("2", "Properties", 1, 100))
    sections = detect_sections(text, "10-K")
    assert [s.name for s in sections] == ["Cover", "Item 1. Business", "Item 1A. Risk Factors", "Item 2. Properties"]
    assert sections[2].start == text.index("Item 1A. Risk Factors\n\nRisk")
    assert sections[1].start == text.index("Item 1. Business\n\nBusiness")


def test_tidy_title() -> None:
    assert tidy_title("RISK FACTORS OF THE FORM 10-K") == "Risk Factors of the Form 10-K"
    assert tidy_title("Risk  Factors  12") == "Risk Factors"


# ----------------------------------------------------------------------------------------------- PDFs


def test_corrupt_pdf_raises_parse_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer garbage\n%%EOF")
    with pytest.raises(ParseError, match=r"broken\.pdf"):
        parse_pdf(bad)
    with pytest.raises(ParseError, match="unreadable PDF"):
        parse_pdf(b"not a pdf at all")


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.integration
def test_financebench_evidence_lands_on_its_page(financebench_dir: Path) -> None:
    """The first question (smallest PDFs first) whose evidence text is found must be found on its evidence page."""
    questions = [json.loads(line) for line in (financebench_dir / "questions.jsonl").read_text().splitlines()
                 if line.strip()]
    pdfs = sorted({q["doc_name"] for q in questions},
                  key=lambda n: (financebench_dir / "pdfs" / f"{n}.pdf").stat().st_size)
    for doc_name in pdfs[:6]:
        parsed = parse_pdf(financebench_dir / "pdfs" / f"{doc_name}.pdf", None)
        assert [p.number for p in parsed.pages] == list(range(len(parsed.pages)))
        assert all(a.end <= b.start for a, b in zip(parsed.pages, parsed.pages[1:], strict=False))
        for q in (q for q in questions if q["doc_name"] == doc_name):
            for ev in q["evidence"]:
                needle = _squash(ev["evidence_text"])[:150]
                pages = [p.number for p in parsed.pages if needle in _squash(parsed.text[p.start:p.end])]
                if pages:
                    assert ev["evidence_page_num"] in pages, (doc_name, q["financebench_id"])
                    return
    pytest.fail("no FinanceBench evidence text was found in the six smallest PDFs")


# ----------------------------------------------------------------------------------------------- real filing


@pytest.mark.integration
def test_nvda_10k_sections_tables_and_no_xbrl_junk(corpus_dir: Path) -> None:
    html = (corpus_dir / "sec" / "filings" / "NVDA" / "nvda-10-k-2025-02-26.html").read_bytes()
    parsed = parse_filing_html(html, "10-K", name="nvda")  # its time is measured by benchmarks/parse_chunk.py
    sections = {s.name.split(".")[0]: parsed.text[s.start:s.end] for s in parsed.sections}
    assert {"Cover", "Item 1", "Item 1A", "Item 7", "Item 7A", "Item 8", "Item 9A", "Item 15"} <= set(sections)
    assert sum(len(v) for v in sections.values()) == len(parsed.text)
    risk = sections["Item 1A"]
    assert len(risk) > 50_000 and "risk" in risk.lower()
    assert "export controls" in risk
    assert next(s.name for s in parsed.sections if s.name.startswith("Item 7.")).startswith(
        "Item 7. Management's Discussion")
    assert "| Revenue | $130,497 | $60,922 |" in sections["Item 7"]
    for junk in ("fasb.org", "xbrli", "us-gaap:", "iso4217", "Table of Contents"):
        assert junk not in parsed.text
    assert all(not line.startswith("|") or line.endswith("|") for line in parsed.text.split("\n"))
