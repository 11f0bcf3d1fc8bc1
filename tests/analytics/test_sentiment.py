"""Loughran-McDonald tone of headlines and of the risk-factor sections of real filings."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.errors import NotFoundError
from equimind.lexicon.lm_lists import Lexicon
from equimind.lexicon.sentiment import (
    compare_sections,
    extract_risk_factors,
    headline_tone,
    score_text,
)
from equimind.sources.filing_text import html_to_text


@pytest.fixture(scope="module")
def lex(corpus_dir: Path) -> Lexicon:
    return Lexicon.load(corpus_dir / "sentiment")


@pytest.fixture(scope="module")
def nvda_10k_text(corpus_dir: Path) -> str:
    return html_to_text((corpus_dir / "sec/filings/NVDA/nvda-10-k-2025-02-26.html").read_text(encoding="utf-8"))


def test_lexicon_sizes_match_the_published_lists(lex: Lexicon) -> None:
    assert len(lex.words["negative"]) == 2355 and len(lex.words["positive"]) == 354
    assert "IMPAIRMENT" in lex.words["negative"] and "ACHIEVE" in lex.words["positive"]


def test_missing_lists_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="sentiment"):
        Lexicon.load(tmp_path)


def test_counts_and_negation(lex: Lexicon) -> None:
    s = score_text("The company reported a loss and an impairment; results were not good. Strong gains.", lex)
    assert s.counts["negative"] == 3  # LOSS, IMPAIRMENT, NOT GOOD
    assert s.counts["positive"] == 2  # STRONG, GAINS
    assert s.negative_words == {"LOSS": 1, "IMPAIRMENT": 1, "NOT GOOD": 1}
    assert s.tone == pytest.approx((2 - 3) / 5)
    assert score_text("", lex).tone == 0.0


def test_headline_tone(lex: Lexicon) -> None:
    scores, mean = headline_tone([("Nvidia achieves record profitability", "2025-06-27"),
                                  ("Chipmaker faces lawsuit over losses", "2025-06-28")], lex)
    assert [s.tone for s in scores] == [1.0, -1.0] and mean == 0.0
    assert headline_tone([], lex) == ([], None)


def test_risk_factors_section_skips_the_table_of_contents(nvda_10k_text: str) -> None:
    rf = extract_risk_factors(nvda_10k_text)
    assert rf is not None and rf.startswith("The following risk factors should be considered")
    assert 80_000 < len(rf) < 130_000
    assert "Unresolved Staff Comments" not in rf[-200:]


def test_10q_update_vs_10k_shows_what_got_more_negative(lex: Lexicon, nvda_10k_text: str, corpus_dir: Path) -> None:
    q = html_to_text((corpus_dir / "sec/filings/NVDA/nvda-10-q-2025-08-27.html").read_text(encoding="utf-8"))
    cur, prev = extract_risk_factors(q), extract_risk_factors(nvda_10k_text)
    assert cur is not None and prev is not None
    shift = compare_sections(cur, prev, lex)
    assert shift.current.words < shift.previous.words  # the 10-Q lists only the updated risk factors
    for word, before, now in shift.rising_negative_words:
        assert now > before and word in shift.current.negative_words
    flat_prev = " ".join(prev.split())
    assert shift.new_negative_sentences
    assert all(" ".join(s.split()) not in flat_prev for s in shift.new_negative_sentences)


def test_compare_sections_on_a_controlled_change(lex: Lexicon) -> None:
    prev = "Demand for our products was strong. We expect growth to continue."
    cur = prev + " We face litigation, penalties and losses that could impair our results."
    shift = compare_sections(cur, prev, lex)
    rising = [w for w, _, _ in shift.rising_negative_words]
    assert {"LITIGATION", "PENALTIES", "LOSSES"} <= set(rising)
    assert shift.negative_per_1000_change > 0 and shift.tone_change < 0
    assert shift.new_negative_sentences == [
        "We face litigation, penalties and losses that could impair our results."]


def test_risk_factor_change_compares_one_form_with_the_same_form(corpus_dir: Path, tmp_path: Path) -> None:
    """The snapshot holds NVDA's 10-K (2025-02-26) and one 10-Q (2025-08-27): a 10-Q's Item 1A updates the 10-K's,
    so there is no like-for-like pair and the change is a degraded line, not a 10-Q-against-10-K density."""
    from datetime import date

    from equimind.analytics.market import report_for
    from equimind.core.config import Settings

    report = report_for(Settings(home=tmp_path, snapshot=corpus_dir), "NVDA", date(2025, 9, 30))
    ids = {f.id for f in report.figures()}
    assert "risk_factors_negative_change" not in ids
    lines = {d.capability: d.reason for d in report.degraded}
    assert "two filings of one form" in lines["sentiment.risk_factors"] and "10-Q 2025-08-27" in lines[
        "sentiment.risk_factors"]
