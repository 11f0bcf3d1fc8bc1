"""Question words -> FilterSpec, from stored documents' company names, tickers and fiscal years."""

from __future__ import annotations

from datetime import date

from equimind.core.documents import Document, Origin, Source
from equimind.query.filters import QueryFilterParser, company_aliases, mentioned_years


def _doc(name: str, company: str, ticker: str | None = None, fiscal_year: str | None = None,
         period_end: date | None = None) -> Document:
    meta = (("fiscal_year", fiscal_year),) if fiscal_year else ()
    return Document(id=name, source_key=name, ticker=ticker, cik=None, company=company, source=Source.LOCAL,
                    origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=period_end, url=None,
                    title=name, text="x", meta=meta)


DOCS = [
    _doc("3m18", "3M", fiscal_year="2018"), _doc("3m22", "3M", fiscal_year="2022"),
    _doc("blk16", "Block", fiscal_year="2016"), _doc("bby19", "Best Buy", fiscal_year="2019"),
    _doc("nvda", "NVIDIA CORP", ticker="NVDA", period_end=date(2025, 1, 26)),
    _doc("wfc", "WELLS FARGO & COMPANY/MN", ticker="WFC", period_end=date(2024, 12, 31)),
]


def test_company_aliases_drop_legal_suffixes() -> None:
    assert "NVIDIA" in company_aliases("NVIDIA CORP")
    assert "Wells Fargo" in company_aliases("WELLS FARGO & COMPANY/MN")
    assert "Amazon" in company_aliases("AMAZON.COM, INC.")
    assert company_aliases(None) == ()


def test_mentioned_years_reads_fy_forms_not_amounts() -> None:
    assert mentioned_years("What is the FY2018 capex for 3M?") == {2018}
    assert mentioned_years("in fiscal 2022 and FY21", today=date(2026, 1, 1)) == {2022, 2021}
    assert mentioned_years("revenue of $2,018 million") == set()


def test_company_and_year_narrow_to_one_document() -> None:
    parser = QueryFilterParser.from_documents(DOCS)
    assert parser.parse("What is the FY2018 capital expenditure for 3M?").doc_ids == ("3m18",)
    assert set(parser.parse("How did 3M's margins change?").doc_ids) == {"3m18", "3m22"}


def test_year_matching_no_document_keeps_the_company() -> None:
    parser = QueryFilterParser.from_documents(DOCS)
    assert set(parser.parse("3M revenue in FY2015").doc_ids) == {"3m18", "3m22"}


def test_common_word_company_needs_a_proper_noun() -> None:
    parser = QueryFilterParser.from_documents(DOCS)
    assert parser.parse("Did Block grow its Cash App in FY2016?").doc_ids == ("blk16",)
    assert parser.parse("a block of shares was sold in 2016").is_empty()


def test_tickers_and_short_names_match() -> None:
    parser = QueryFilterParser.from_documents(DOCS)
    assert parser.parse("How many employees does NVIDIA have?").doc_ids == ("nvda",)
    assert parser.parse("Is NVDA or Wells Fargo bigger?").doc_ids == ("nvda", "wfc")


def test_no_company_gives_an_empty_filter() -> None:
    parser = QueryFilterParser.from_documents(DOCS)
    assert parser.parse("What was the FY2019 revenue?").is_empty()


def test_hyphens_and_spaces_are_interchangeable_in_names() -> None:
    parser = QueryFilterParser.from_documents([_doc("ko", "Coca-Cola", fiscal_year="2017")])
    assert parser.parse("What is the FY2017 ROA for Coca Cola?").doc_ids == ("ko",)


def test_years_followed_by_punctuation_are_read() -> None:
    assert mentioned_years("in FY2023, FY2022 and FY2021.") == {2021, 2022, 2023}
    assert mentioned_years("2,018.5 and 2018.5") == set()


def test_store_parser_follows_the_store_as_documents_are_indexed(fresh_stores) -> None:  # type: ignore[no-untyped-def]
    from datetime import date

    from retrieval_corpus import build_doc

    from equimind.query.filters import StoreFilterParser

    store = StoreFilterParser(fresh_stores.docstore)
    assert store.explain("What did ZZTOP say about cash?").spec.is_empty()
    nvda = store.explain("NVDA supply constraints in fiscal 2024")
    assert nvda.spec.doc_ids and nvda.years == (2024,)
    assert all(fresh_stores.docstore.get_document(d).ticker == "NVDA" for d in nvda.spec.doc_ids)
    assert "NVDA" in nvda.describe() and "fiscal 2024" in nvda.describe()
    fresh_stores.ingest(*build_doc("ZZTOP", "10-K", date(2025, 2, 1), ["cash", "debt"]))
    found = store.explain("What did ZZTOP say about cash?")  # the parser was rebuilt for the new document
    assert len(found.spec.doc_ids) == 1 and found.companies == ("ZZTOP Corp",)


def test_facts_read_without_text_equal_the_facts_of_the_full_documents(stores) -> None:  # type: ignore[no-untyped-def]
    from equimind.query.filters import DocFacts

    rows = stores.docstore.list_documents_with_meta(status="indexed")
    assert len(rows) == len(stores.docs)
    by_id = {d.id: d for d in stores.docs}
    assert all(DocFacts.of_ref(ref, meta) == DocFacts.of(by_id[ref.doc_id]) for ref, meta in rows)
    assert all(meta == dict(by_id[ref.doc_id].meta) for ref, meta in rows)


def test_a_year_inside_a_calendar_date_is_not_a_fiscal_year() -> None:
    assert mentioned_years("Did NVIDIA sell H20 chips in the July 2025 quarter?") == set()
    assert mentioned_years("the buyback announced on May 1, 2024 and the Sept. 30, 2024 balance") == set()
    assert mentioned_years("Mayor 2024 and August 2025 versus fiscal 2026") == {2024, 2026}


def test_a_clipped_compound_of_a_two_word_name_names_the_company() -> None:
    docs = [*DOCS, _doc("axp22", "American Express", fiscal_year="2022"),
            _doc("fdx", "Federal Express Corp", fiscal_year="2022")]
    parser = QueryFilterParser.from_documents(docs)
    assert parser.parse("Does AMEX have an improving operating margin profile as of 2022?").doc_ids == ("axp22",)
    assert parser.parse("How did AmEx and FedEx do?").doc_ids == ("axp22", "fdx")
    # written in lower case it is an ordinary word; a one-word name ("NVIDIA") has no clipped form; every word of the
    # name gives two letters or more, in order
    assert parser.parse("the amex index rose").is_empty()
    assert parser.parse("What is NVID's revenue?").is_empty()
    assert parser.parse("What did AMX report?").is_empty() and parser.parse("What did EXAM report?").is_empty()
    assert parser.parse("Is BEBU a ticker?").doc_ids == ("bby19",)  # Best Buy's words, two letters each
