"""The company a question names, from the stored companies and the recorded SEC ticker map."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.errors import ConfigError, NotFoundError
from equimind.query.company import candidates, core_name, resolve_company
from equimind.sources.market_snapshot import SnapshotSec


@pytest.fixture(scope="module")
def ticker_map(corpus_dir: Path) -> dict:
    return SnapshotSec(corpus_dir).ticker_map()


def test_core_names_drop_legal_suffixes() -> None:
    assert core_name("NVIDIA CORP") == ("nvidia",)
    assert core_name("WELLS FARGO & COMPANY/MN") == ("wells", "fargo")
    assert core_name("AMAZON COM INC") == ("amazon",)
    assert core_name("Apple Inc.") == ("apple",)


@pytest.mark.parametrize(("question", "ticker"), [
    ("What was NVIDIA's data center revenue in fiscal 2025?", "NVDA"),
    ("What was Apple's net income in fiscal 2024?", "AAPL"),
    ("How many paid memberships did Netflix end 2024 with?", "NFLX"),  # "paid" is not PAID INC: not a proper noun
    ("What were Tesla's capital expenditures in 2024?", "TSLA"),
    ("What was JPM net income in 2024?", "JPM"),  # an upper-case ticker
    ("What was Alphabet's revenue?", "GOOGL"),  # the share class SEC lists first
    ("What is Wells Fargo net income?", "WFC"),
])
def test_a_company_named_in_the_question_resolves(question: str, ticker: str, ticker_map: dict) -> None:
    assert resolve_company(question, [], ticker_map).ticker == ticker


def test_a_stored_company_wins_and_a_comparison_takes_the_first_named(ticker_map: dict) -> None:
    stored = [("NVDA", "NVIDIA CORP")]
    hit = resolve_company("What did NVIDIA report?", stored, ticker_map)
    assert hit.ticker == "NVDA" and hit.stored
    assert resolve_company("Compare Apple and Microsoft revenue in 2024", [], ticker_map).ticker == "AAPL"


def test_two_companies_without_a_comparison_word_are_ambiguous(ticker_map: dict) -> None:
    with pytest.raises(ConfigError, match=r"AAPL \(Apple Inc\.\).*MSFT.*pass --ticker"):
        resolve_company("What was revenue of Apple and Microsoft?", [("AAPL", "Apple Inc.")], ticker_map)
    assert {c.ticker for c in candidates("What was revenue of Apple and Microsoft?", [], ticker_map)} == {
        "AAPL", "MSFT"}


def test_no_known_company_is_a_clear_error(ticker_map: dict) -> None:
    with pytest.raises(NotFoundError, match=r"names no company.*--ticker"):
        resolve_company("What is the revenue of Acme Widgets?", [], ticker_map)
