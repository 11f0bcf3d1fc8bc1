"""Company identity from data: cover-page registrant, self-defined short names, ampersand forms, distinctive leading
words, and ambiguity — one model read by the search filter, the ``ask`` resolver and the ticker join."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.documents import Document, Origin, Source
from equimind.core.errors import ConfigError
from equimind.ingest.identity import FilingIdentity, cover_registrant, filing_identity, self_defined_names
from equimind.query.company import candidates, resolve_company
from equimind.query.company_identity import registrant_tickers
from equimind.query.filters import DocFacts, QueryFilterParser, StoreFilterParser
from equimind.query.identity import ampersand_forms, leading_word
from equimind.sources.market_snapshot import SnapshotSec

COVER = ("UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nCommission File Number 001-99999\n"
         "____________\n{name}\n(Exact name of registrant as specified in its charter)\nDelaware 12-3456789\n")

# a small SEC-style map of my own: several registrants start with "American" or "Johnson"
MAP = {"LMT": "LOCKHEED MARTIN CORP", "T": "AT&T INC.", "JNJ": "JOHNSON & JOHNSON", "JCI": "Johnson Controls plc",
       "PG": "PROCTER & GAMBLE Co", "AXP": "AMERICAN EXPRESS CO", "AAL": "American Airlines Group Inc.",
       "AIG": "AMERICAN INTERNATIONAL GROUP, INC.", "ZZQ": "ZORBLEX TRIMARAN HOLDINGS INC",
       "NVDA": "NVIDIA CORP", "WFC": "WELLS FARGO & COMPANY/MN"}


def _doc(doc_id: str, company: str | None, text: str = "x", *, ticker: str | None = None,
         meta: tuple[tuple[str, str], ...] = ()) -> Document:
    return Document(id=doc_id, source_key=doc_id, ticker=ticker, cik=None, company=company, source=Source.LOCAL,
                    origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None, url=None, title=doc_id,
                    text=text, meta=meta)


def _parser(*docs: Document, ticker_map: dict[str, str] | None = MAP) -> QueryFilterParser:
    facts = [DocFacts.of(d) for d in docs]
    facts = [f if f.registrant or f.short_names else _read(f, d) for f, d in zip(facts, docs, strict=True)]
    if ticker_map is None:
        return QueryFilterParser(facts)
    return QueryFilterParser(facts, registrant_tickers(facts, ticker_map))


def _read(f: DocFacts, d: Document) -> DocFacts:
    from dataclasses import replace
    ident = filing_identity(d.text)
    return replace(f, registrant=ident.registrant, short_names=ident.short_names)


# --- the extractor -------------------------------------------------------------------------------------------------
def test_cover_registrant_is_the_line_before_the_exact_name_line() -> None:
    assert cover_registrant(COVER.format(name="Zorblex Trimaran Holdings, Inc.")) == "Zorblex Trimaran Holdings, Inc."
    # a name broken over lines, one word a line, a split legal form, a space before a period
    assert cover_registrant("FORM 10-K\nZORBLEX\nTRIMARAN,\nINC.\n(Exact name of registrant as specified in "
                            "its\ncharter)") == "ZORBLEX TRIMARAN, INC."
    assert cover_registrant("Quill Corp Oration\n(exact name of registrant as specified in charter)") == \
        "Quill Corporation"
    assert cover_registrant("Quill & Co .\n\n(Exact name of Registrant as specified in its charter)") == "Quill & Co."
    # a name printed as an image leaves only cover furniture before the line: unknown, not a wrong name
    assert cover_registrant("Commission File Number 001-02217\n\n(Exact name of Registrant as specified in its "
                            "charter)") == ""
    assert cover_registrant("no cover page here") == ""


def test_self_defined_short_names_come_from_a_parenthesis_that_names_the_filer() -> None:
    assert self_defined_names("3M Company (“3M” or the “Company”) is a diversified company") == ("3M",)
    assert self_defined_names('AT&T Inc. ("AT&T," "we" or "the Company") is a holding company') == ("AT&T",)
    assert self_defined_names("Wells Fargo & Company (the “Company”) is a bank holding company") == ()
    # a defined term for something else is not a name of the filer
    assert self_defined_names("three segments and Amazon Web Services (“AWS”)") == ()
    assert self_defined_names('Quill Corp. ("Quill", "we", "us" or "our") sells pens') == ("Quill",)


@pytest.mark.parametrize("text", [None, "", "(", "(Exact name of registrant as specified in its charter)",
                                  "\x00" * 50, 12345, "“" * 1000 + "(" * 1000])
def test_the_extractor_never_raises(text: object) -> None:
    assert isinstance(filing_identity(text), FilingIdentity)


def test_identity_meta_round_trips() -> None:
    ident = FilingIdentity("AT&T Inc.", ("AT&T", "ATT Mobility"))
    assert FilingIdentity.from_meta(dict(ident.meta_pairs())) == ident
    assert FilingIdentity().meta_pairs() == ()


def test_real_recorded_filings_state_their_registrant_and_short_name(corpus_dir: Path) -> None:
    from equimind.ingest.parse import parse_filing_html

    def ident(ticker: str, name: str) -> FilingIdentity:
        path = corpus_dir / "sec" / "filings" / ticker / name
        return filing_identity(parse_filing_html(path.read_bytes(), None, name=name).text)

    assert ident("WFC", "wfc-10-k-2025-02-25.html").registrant == "WELLS FARGO & COMPANY"
    nflx = ident("NFLX", "nflx-10-k-2025-01-27.html")
    assert nflx.registrant == "Netflix, Inc." and nflx.short_names == ("Netflix",)
    tsla = ident("TSLA", "tsla-10-q-2025-07-24.html")
    assert tsla.registrant == "Tesla, Inc." and tsla.short_names == ("Tesla",)
    assert ident("NVDA", "nvda-10-k-2025-02-26.html").registrant == "NVIDIA CORPORATION"  # "CORP ORATION" rejoined


def test_ingest_records_the_identity_in_the_document_meta() -> None:
    from datetime import date

    from equimind.ingest.documents import to_document
    from equimind.sources.base import BodyKind, RawFiling

    html = ("<html><body><p>FORM 10-K</p><p>Zorblex Trimaran Holdings, Inc.</p><p>(Exact name of registrant as "
            "specified in its charter)</p><p>Zorblex Trimaran Holdings, Inc. (“Zorblex” or the “Company”) makes "
            "boats.</p></body></html>")
    raw = RawFiling(source_key="local:z.html", ticker=None, cik=None, company="ZORBLEX", source=Source.LOCAL,
                    origin=Origin.LOCAL_FILE, form="10-K", filed_at=date(2024, 2, 1), period_end=None, url=None,
                    title="z", body=html.encode(), kind=BodyKind.HTML, name="z.html", meta=(("doc_name", "z"),))
    meta = dict(to_document(raw).meta)
    assert meta["registrant_name"] == "Zorblex Trimaran Holdings, Inc." and meta["short_names"] == "Zorblex"


# --- the identity model --------------------------------------------------------------------------------------------
def test_ampersand_forms_and_leading_words() -> None:
    assert set(ampersand_forms("AT&T")) == {"ATT", "AT and T"}
    assert set(ampersand_forms("Johnson & Johnson")) == {"Johnson and Johnson", "J&J", "JnJ"}
    assert ampersand_forms("Wells Fargo") == ()
    assert leading_word("Lockheed Martin Corporation") == "Lockheed" and leading_word("NVIDIA CORP") == ""


def test_ampersand_names_answer_to_their_short_forms() -> None:
    parser = _parser(_doc("att", "AT&T Inc."), _doc("pg", "Procter & Gamble"), _doc("jnj", "Johnson & Johnson"))
    assert parser.parse("What was ATT's free cash flow in 2022?").doc_ids == ("att",)
    assert parser.parse("What was AT and T's free cash flow?").doc_ids == ("att",)
    assert parser.parse("Did P&G raise prices?").doc_ids == ("pg",)
    assert parser.parse("Did PnG raise prices?").doc_ids == ("pg",)
    assert parser.parse("Did Procter and Gamble raise prices?").doc_ids == ("pg",)
    assert parser.parse("What is JnJ's R&D spend?").doc_ids == ("jnj",)
    assert parser.parse("What is J&J's R&D spend?").doc_ids == ("jnj",)
    assert parser.parse("the att of the png file").is_empty()  # an initials form is a proper noun


def test_a_distinctive_leading_word_names_the_company_an_ambiguous_one_does_not() -> None:
    parser = _parser(_doc("lmt", "Lockheed Martin Corporation"), _doc("axp", "American Express Company"))
    assert parser.parse("What was Lockheed's backlog at year end?").doc_ids == ("lmt",)
    assert parser.parse("what did lockheed say?").is_empty()  # a leading word is written as a proper noun
    assert parser.parse("What was American's revenue?").is_empty()  # many registrants start with "American"
    # without the SEC map the leading word cannot be judged, so it is never used
    assert _parser(_doc("lmt", "Lockheed Martin Corporation"), ticker_map=None).parse("Lockheed backlog").is_empty()
    # another stored company starting with the same word takes it away too
    two = _parser(_doc("lmt", "Lockheed Martin Corporation"), _doc("lx", "Lockheed Ventures"))
    assert two.parse("What was Lockheed's backlog?").is_empty()


def test_a_cover_page_registrant_gives_the_ticker_a_question_names() -> None:
    doc = _doc("z", None, COVER.format(name="ZORBLEX TRIMARAN HOLDINGS INC") + "Revenue rose.")
    parser = _parser(doc)
    assert parser.parse("What was ZZQ's revenue in 2023?").doc_ids == ("z",)
    assert parser.parse("What was Zorblex Trimaran's revenue?").doc_ids == ("z",)
    assert parser.explain("What was ZZQ's revenue?").companies == ("ZORBLEX TRIMARAN HOLDINGS INC",)


def test_a_self_defined_short_name_names_the_company() -> None:
    text = COVER.format(name="Quillon Pen Works Corp.") + 'Quillon Pen Works Corp. ("Penworks", "we" or "the ' \
        'Company") makes pens.'
    parser = _parser(_doc("q", "QUILLON_2023_10K", text))
    assert parser.parse("How many pens did Penworks sell in 2023?").doc_ids == ("q",)


def test_a_name_that_names_two_stored_companies_is_exposed_as_ambiguous() -> None:
    a = _doc("a", "Delta Quarry Inc.", 'Delta Quarry Inc. ("Delta" or the "Company")')
    b = _doc("b", "Delta Orchards Corp", 'Delta Orchards Corp ("Delta", "we" or "us")')
    parser = _parser(a, b)
    parsed = parser.explain("What was Delta's revenue?")
    assert set(parsed.spec.doc_ids) == {"a", "b"}  # the filter keeps every company named
    assert parsed.ambiguous == (("Delta Orchards Corp", "Delta Quarry Inc."),)
    assert "--ticker" in (parsed.ambiguity_error() or "")
    clear = parser.explain("What was Delta Quarry's revenue?")
    assert clear.spec.doc_ids == ("a",) and not clear.ambiguous and clear.ambiguity_error() is None
    both = parser.explain("Compare Delta Quarry with Delta Orchards")
    assert set(both.spec.doc_ids) == {"a", "b"} and not both.ambiguous


def test_store_parser_reads_the_identity_of_documents_stored_without_it(tmp_path: Path) -> None:
    from equimind.store.docstore import DocStore

    store = DocStore(tmp_path / "docstore.sqlite")
    old = _doc("z", "ZTH_2023_10K", COVER.format(name="ZORBLEX TRIMARAN HOLDINGS INC") + "Revenue rose. " * 50)
    store.add_document(old)
    store.set_status("z", "indexed")
    parser = StoreFilterParser(store, lambda facts: registrant_tickers(facts, MAP))
    assert parser.explain("What did ZZQ report for 2023?").spec.doc_ids == ("z",)
    assert parser.explain("What did Zorblex Trimaran report?").spec.doc_ids == ("z",)


def test_ask_sees_the_ticker_less_documents_search_finds_for_the_company(tmp_path: Path) -> None:
    """A local 10-K stored with only its registrant's name is the registrant's ticker's document for ``ask`` too:
    the question parser's subject holds it, as the search filter does (issue 28: ask sees what search sees)."""
    from datetime import date

    from equimind.query.parsed import QuestionParser
    from equimind.sources.base import TickerInfo
    from equimind.store.docstore import DocStore

    store = DocStore(tmp_path / "docstore.sqlite")
    local = _doc("z", "ZTH_2023_10K", COVER.format(name="ZORBLEX TRIMARAN HOLDINGS INC") + "Revenue rose. " * 50)
    store.add_document(local)
    store.set_status("z", "indexed")
    filters = StoreFilterParser(store, lambda facts: registrant_tickers(facts, MAP))
    infos = {t: TickerInfo(ticker=t, cik=f"{i:010d}", name=n) for i, (t, n) in enumerate(MAP.items())}
    seen = QuestionParser(store, ticker_map=lambda: infos, registered=filters.registered)
    pq = seen.parse("What did Zorblex Trimaran report for 2023?", date(2100, 1, 1))
    assert pq.ticker == "ZZQ" and pq.subject.doc_ids == ("z",)
    blind = QuestionParser(store, ticker_map=lambda: infos)  # without the join the document is nobody's
    assert blind.parse("What did Zorblex Trimaran report for 2023?", date(2100, 1, 1)).subject.doc_ids == ()


# --- the ask resolver agrees ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ticker_map(corpus_dir: Path) -> dict:
    return SnapshotSec(corpus_dir).ticker_map()


@pytest.mark.parametrize(("question", "ticker"), [
    ("What was ATT's revenue in 2022?", "T"), ("What was AT and T's capex?", "T"),
    ("How did JnJ's pharmaceutical sales grow?", "JNJ"), ("Is J&J's margin up?", "JNJ"),
    ("What were P&G's net sales?", "PG"), ("What did Procter and Gamble earn?", "PG"),
    # a period word is no company's name (Q2 Holdings' core name is "Q2")
    ("In 2022 Q2, which of JPM's business segments had the highest net income?", "JPM"),
    ("What was Q2 Holdings' revenue in fiscal 2023?", "QTWO"),
])
def test_ask_resolves_ampersand_forms_from_the_sec_map(question: str, ticker: str, ticker_map: dict) -> None:
    assert resolve_company(question, [], ticker_map).ticker == ticker


def test_ask_resolves_a_stored_leading_word_and_self_stated_names(ticker_map: dict) -> None:
    stored = [("LMT", "Lockheed Martin Corporation")]
    assert resolve_company("What is Lockheed's backlog?", stored, ticker_map).ticker == "LMT"
    assert not candidates("What is lockheed's backlog?", stored, ticker_map)
    assert not candidates("What was American's revenue?", [("AXP", "American Express Co")], ticker_map)
    found = resolve_company("How many pens did Penworks sell?", [("QPW", "Quillon Pen Works Corp.")], ticker_map,
                            aliases={"QPW": ("Penworks",)})
    assert found.ticker == "QPW" and found.stored


def test_ask_lists_the_candidates_when_one_name_names_two_stored_companies(ticker_map: dict) -> None:
    stored = [("DQX", "Delta Quarry Inc."), ("DOX", "Delta Orchards Corp")]
    aliases = {"DQX": ("Delta",), "DOX": ("Delta",)}
    with pytest.raises(ConfigError, match=r"DOX \(Delta Orchards Corp\).*DQX \(Delta Quarry Inc\.\).*--ticker"):
        resolve_company("What was Delta's revenue?", stored, ticker_map, aliases)
    assert resolve_company("Compare Delta Quarry with Delta Orchards", stored, ticker_map, aliases).ticker == "DQX"
