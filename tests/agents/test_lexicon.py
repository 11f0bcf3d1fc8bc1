"""Loughran-McDonald loader and tone counting (real word lists from the shared corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind.core.errors import NotFoundError, ParseError
from equimind.lexicon.lm_lists import LMCategory, load_lexicon
from equimind.lexicon.tone import tone


def test_loads_real_lists(lm_dir: Path) -> None:
    lex = load_lexicon(lm_dir)
    assert len(lex.words[LMCategory.NEGATIVE]) == 2355
    assert len(lex.words[LMCategory.POSITIVE]) == 354
    assert lex.has(LMCategory.NEGATIVE, "LOSS") and lex.has(LMCategory.POSITIVE, "IMPROVED")


def test_tone_counts_and_negation(lm_dir: Path) -> None:
    lex = load_lexicon(lm_dir)
    t = tone("Results improved strongly, despite losses and litigation.", lex)
    assert (t.positive, t.negative) == (2, 2)  # IMPROVED, DESPITE (LM counts it positive); LOSSES, LITIGATION
    assert t.litigious >= 1
    negated = tone("Results have not improved.", lex)
    assert (negated.positive, negated.negative) == (0, 1)  # a negated positive counts as negative (LM 2011)
    assert tone("", lex).net == 0.0


def test_missing_directory_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="EQUIMIND_SHARED"):
        load_lexicon(tmp_path / "absent")


def test_required_lists_and_optional_ones(tmp_path: Path) -> None:
    (tmp_path / "LM_positive.txt").write_text("GOOD\n")
    with pytest.raises(NotFoundError, match="LM_negative"):
        load_lexicon(tmp_path)
    (tmp_path / "LM_negative.txt").write_text("BAD\n\n")
    lex = load_lexicon(tmp_path)
    assert lex.words[LMCategory.UNCERTAINTY] == frozenset()
    assert tone("good, good and bad", lex).net == pytest.approx(1 / 3)


def test_malformed_list_is_a_parse_error(tmp_path: Path) -> None:
    (tmp_path / "LM_positive.txt").write_text("GOOD\n")
    (tmp_path / "LM_negative.txt").write_text("TWO WORDS\n")
    with pytest.raises(ParseError, match="single words"):
        load_lexicon(tmp_path)
