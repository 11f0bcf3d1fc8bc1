"""Ticker-less documents get their registrant's ticker from the SEC ticker map, so "JPM" finds JPMorgan's filings."""

from __future__ import annotations

import json
from pathlib import Path

from equimind.query.company_identity import name_key, registrant_tickers
from equimind.query.filters import DocFacts, QueryFilterParser, StoreFilterParser

MAP = {"JPM": "JPMORGAN CHASE & CO", "JPM-PC": "JPMORGAN CHASE & CO", "AMJ": "JPMORGAN CHASE & CO",
       "KO": "COCA COLA CO", "KOF": "COCA COLA FEMSA SAB DE CV", "COKE": "Coca-Cola Consolidated, Inc.",
       "AAPL": "Apple Inc.", "APLE": "Apple Hospitality REIT, Inc.", "A": "AGILENT TECHNOLOGIES, INC.",
       "AMZN": "AMAZON COM INC", "BLK": "BlackRock, Inc.", "BCSA": "Blockchain Coinvestors Acquisition Corp. I",
       "XYZ": "Block, Inc."}

FACTS = [DocFacts("jpm21", "JPMorgan", None, 2021), DocFacts("ko17", "Coca-Cola", None, 2017),
         DocFacts("aapl", "Apple", None, 2024), DocFacts("amzn", "Amazon", None, 2019),
         DocFacts("blk", "Block", None, 2020), DocFacts("agi", "Agilent", None, 2020),
         DocFacts("nvda", "NVIDIA CORP", "NVDA", 2025), DocFacts("anon", None, None, None),
         DocFacts("coca", "Coca", None, 2017)]


def test_names_are_compared_without_suffixes_case_or_punctuation() -> None:
    assert name_key("JPMORGAN CHASE & CO") == "jpmorgan chase"
    assert name_key("Coca-Cola") == name_key("COCA COLA CO") == "coca cola"


def test_exact_name_wins_then_a_unique_whole_word_prefix() -> None:
    got = registrant_tickers(FACTS, MAP)
    assert got["jpm21"] == "JPM"  # prefix of one registrant; its first ticker, not a preferred share's
    assert got["ko17"] == "KO" and got["aapl"] == "AAPL"  # exact beats "COCA COLA FEMSA", "Apple Hospitality"
    assert got["amzn"] == "AMZN" and got["blk"] == "XYZ"  # "Block" is not a prefix of "Blockchain ..."
    assert "agi" not in got  # one-letter tickers are never used
    assert "coca" not in got  # a prefix of two registrants is ambiguous
    assert "nvda" not in got and "anon" not in got  # already has a ticker / no name


def test_parser_reads_the_joined_ticker_as_the_company() -> None:
    parser = QueryFilterParser(FACTS, registrant_tickers(FACTS, MAP))
    assert parser.parse("In 2021 Q1, which of JPM's segments earned the most?").doc_ids == ("jpm21",)
    assert QueryFilterParser(FACTS).parse("In 2021 Q1, which of JPM's segments earned the most?").is_empty()


def test_store_parser_joins_with_the_recorded_sec_map(fresh_stores, corpus_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from equimind.sources.sec_edgar import parse_ticker_map

    sec = parse_ticker_map(json.loads((corpus_dir / "sec" / "company_tickers.json").read_text()))
    names = {t: i.name for t, i in sec.items()}
    calls: list[int] = []

    def join(facts):  # type: ignore[no-untyped-def]
        calls.append(len(facts))
        return registrant_tickers([*facts, DocFacts("extra", "JPMorgan", None, None)], names)

    parser = StoreFilterParser(fresh_stores.docstore, join)
    assert parser.explain("How did MSFT do?").spec.doc_ids  # the corpus's own tickers still match
    assert calls and calls[0] == len({d.id for d in fresh_stores.docs})


def test_engine_search_reads_a_ticker_for_a_document_that_has_only_a_company_name(tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                                   corpus_dir: Path) -> None:
    from datetime import date

    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.core.documents import Document, Origin, Section, Source
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    def doc(key: str, company: str, words: str) -> Document:
        text = "Item 2. Results\n" + " ".join(f"{words} item {j}." for j in range(30))
        return Document(id=Document.make_id(key, text), source_key=key, ticker=None, cik=None, company=company,
                        source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-Q", filed_at=date(2022, 8, 1),
                        period_end=None, url=None, title=f"{company} 10-Q", text=text,
                        sections=(Section("Item 2. Results", 0, len(text)),))

    settings = Settings(home=tmp_path / "home", snapshot=corpus_dir, child_tokens=60, parent_tokens=200)
    services = open_services(settings, embedder=HashEmbedder(), reranker=FixedScoreReranker({}, unavailable="x"),
                             tokenizer=WhitespaceTokenizer())
    services.pipeline().run([doc("jpm", "JPMorgan", "net income by segment"),
                             doc("axp", "American Express", "net income by segment")])
    res = EquiMindEngine(services).search("Which of JPM's segments had the highest net income?")
    assert res.filters.get("doc_ids") and {h.document.company for h in res.hits} == {"JPMorgan"}
    assert res.auto_filter is not None and "JPMorgan" in res.auto_filter


def test_live_mode_without_the_sec_map_says_so_on_the_search_result(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The one degradation that used to be silent (a log line only): ticker-less documents cannot be given their
    registrant's ticker when the live SEC ticker map is refused for want of an identity."""
    from datetime import date

    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.core.documents import Document, Origin, Section, Source
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    text = "Item 7. Management's Discussion\n" + "JPMorgan net interest income rose on higher rates. " * 40
    doc = Document(id=Document.make_id("pdf:jpm", text), source_key="pdf:jpm", ticker=None, cik=None,
                   company="JPMorgan Chase & Co", source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K",
                   filed_at=date(2024, 2, 16), period_end=None, url=None, title="JPMorgan 10-K", text=text,
                   sections=(Section("Item 7. Management's Discussion", 0, len(text)),))
    services = open_services(Settings(home=tmp_path / "h", sec_identity=None, child_tokens=50, parent_tokens=200),
                             embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())
    services.pipeline().run([doc])
    result = EquiMindEngine(services).search("What was JPM's net interest income?")
    lines = [d for d in result.degraded if d.capability == "company_identity"]
    assert len(lines) == 1 and "EQUIMIND_SEC_IDENTITY" in lines[0].reason and "ticker map" in lines[0].reason


def test_live_mode_without_the_sec_map_says_so_on_the_ask_answer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The ask path carries the same line as search (issue 31: it was a log warning only), and a question about a
    company only a ticker-less document names says why it is not known."""
    from datetime import date

    import pytest

    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.core.documents import Document, Origin, Section, Source
    from equimind.core.errors import NotFoundError
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    def doc(key: str, ticker: str | None, company: str, sentence: str) -> Document:
        text = "Item 7. Management's Discussion\n" + sentence * 40
        return Document(id=Document.make_id(key, text), source_key=key, ticker=ticker, cik=None, company=company,
                        source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=date(2024, 2, 16),
                        period_end=None, url=None, title=f"{company} 10-K", text=text,
                        sections=(Section("Item 7. Management's Discussion", 0, len(text)),))

    services = open_services(Settings(home=tmp_path / "h", sec_identity=None, child_tokens=50, parent_tokens=200),
                             embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())
    services.pipeline().run([
        doc("pdf:jpm", None, "JPMorgan Chase & Co", "JPMorgan net interest income rose on higher rates. "),
        doc("pdf:nvda", "NVDA", "NVIDIA Corp", "NVIDIA data center revenue was $47.5 billion in fiscal 2024. ")])
    engine = EquiMindEngine(services)
    answer = engine.ask("What was NVIDIA's data center revenue in fiscal 2024?", as_of=date(2024, 6, 30))
    lines = [d for d in answer.degraded if d.startswith("company_identity:")]
    assert len(lines) == 1 and "EQUIMIND_SEC_IDENTITY" in lines[0], answer.degraded
    with pytest.raises(NotFoundError, match=r"SEC ticker map could not be read.*EQUIMIND_SEC_IDENTITY"):
        engine.ask("What was JPMorgan Chase's net interest income in 2023?")
