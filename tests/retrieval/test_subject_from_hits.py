"""A question that names no company is asked of the company the search's top passages come from, only when they
overwhelmingly do and the question writes no name they never mention (``retrieval.subject``)."""

from __future__ import annotations

from datetime import date

from equimind.core.documents import Origin, Source
from equimind.core.search import DocumentRef, SearchHit, StageScores
from equimind.core.tunables import overridden
from equimind.retrieval.subject import RANK_SHARE, SHARE, company_of_hits, unknown_names

QUESTION = "Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?"
TEXT = "Cash and cash equivalents fell to $1,093 million at the end of the second quarter."


def _hit(rank: int, ticker: str | None, company: str | None, text: str = TEXT) -> SearchHit:
    ref = DocumentRef(doc_id=f"{company}-{rank}", ticker=ticker, company=company, form="10-Q",
                      filed_at=date(2023, 9, 1), period_end=None, source=Source.LOCAL, origin=Origin.LOCAL_FILE,
                      title=str(company), url=None)
    return SearchHit(rank=rank, chunk_id=f"c{rank}", text=text, start=0, end=len(text), parent_id=f"p{rank}",
                     parent_text=text, parent_start=0, parent_end=len(text), section=None, document=ref,
                     scores=StageScores())


def test_the_company_of_most_top_passages_is_the_subject_and_says_how_it_was_found() -> None:
    hits = [_hit(i, None, "Harbor Electronics") for i in range(8)] + [_hit(8 + i, "ZZZ", "Other") for i in range(2)]
    found = company_of_hits(QUESTION, hits)
    assert found is not None and found.company == "Harbor Electronics" and found.ticker is None
    assert found.describe() == "search: 8 of the top 10 passages"


def test_split_passages_or_no_passages_guess_nothing() -> None:
    # no company holds 70 % of the passages nor half of their 1/rank weight (Alpha, ranked first: 44 %)
    order = ["AAA", "BBB", "CCC", "CCC", "BBB", "AAA", "BBB", "CCC", "AAA", "BBB"]
    split = [_hit(i, t, t.title()) for i, t in enumerate(order)]
    assert company_of_hits(QUESTION, split) is None
    assert company_of_hits(QUESTION, []) is None


def test_the_share_is_a_tuned_parameter() -> None:
    # Alpha: 6 of 10 passages, 43 % of the weight by rank (nobody holds half of it)
    order = ["BBB", "AAA", "CCC", "AAA", "BBB", "AAA", "AAA", "CCC", "AAA", "AAA"]
    hits = [_hit(i, t, t.title()) for i, t in enumerate(order)]
    assert company_of_hits(QUESTION, hits) is None  # 0.6 is below the default share
    with overridden({SHARE: 0.5}):
        found = company_of_hits(QUESTION, hits)
    assert found is not None and found.ticker == "AAA"


def test_a_company_holding_most_of_the_rank_weight_is_the_subject_though_few_passages_are_its() -> None:
    # 3 of 10 passages, but ranked 1st, 3rd and 6th among three companies' passages: 51 % of the 1/rank weight
    order = ["AAA", "BBB", "AAA", "CCC", "BBB", "AAA", "CCC", "CCC", "BBB", "BBB"]
    hits = [_hit(i, t, t.title()) for i, t in enumerate(order)]
    found = company_of_hits(QUESTION, hits)
    assert found is not None and found.ticker == "AAA" and found.by_rank and found.held == 3
    assert found.describe() == "search: 3 of the top 10 passages, 51% of their weight by rank (the passage ranked r " \
        "weighs 1/r)"
    with overridden({RANK_SHARE: 0.7}):  # a tuned parameter: above its share nothing is guessed
        assert company_of_hits(QUESTION, hits) is None
    # the best-ranked passage alone is a third of the weight: not a majority
    alone = [_hit(0, "AAA", "Alpha")] + [_hit(1 + i, t, t) for i, t in enumerate(["BBB", "CCC"] * 4 + ["BBB"])]
    assert company_of_hits(QUESTION, alone) is None


def test_local_files_named_by_their_registrant_count_for_its_ticker() -> None:
    # ticker-less PDFs of one registrant (as stored from a folder of filings) and its own ticker-bearing 10-Q: one
    # company, and the guess carries the ticker ``ask`` runs for
    hits = [_hit(i, None, "Harbor Electronics") for i in range(5)] + [_hit(5 + i, "HRBR", "HARBOR ELECTRONICS INC")
                                                                       for i in range(3)]
    hits += [_hit(8 + i, "ZZZ", "Other") for i in range(2)]
    assert company_of_hits(QUESTION, hits) is not None and company_of_hits(QUESTION, hits).ticker is None
    found = company_of_hits(QUESTION, hits, doc_tickers={f"Harbor Electronics-{i}": "HRBR" for i in range(5)})
    assert found is not None and found.ticker == "HRBR" and found.held == 8


def test_a_name_the_passages_never_mention_blocks_the_guess() -> None:
    hits = [_hit(i, "AAA", "Alpha") for i in range(10)]
    assert unknown_names("What is the revenue of Acme Widgets?", hits) == ["Acme", "Widgets"]
    assert company_of_hits("What is the revenue of Acme Widgets?", hits) is None
    # capitalised ordinary words and periods the passages hold are no obstacle
    assert unknown_names(QUESTION, hits) == []
