"""Meaning in the extractive answerer: a sentence written in other words than the question qualifies through the
question-unit similarity (``answer.similarity``), the vectors are cached per span, and a missing model is visible."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import Stemmer

from equimind.answer.extract import extract
from equimind.answer.similarity import UnitSimilarity
from equimind.core.errors import ConfigError
from equimind.query.analysis import Subject, name_words
from equimind.query.question import analyse_question
from tests.answer.asking import ask
from tests.answer.conftest import sentence_units

STEM = Stemmer.Stemmer("english")
ACME = Subject("ACME", name_words("ACME", "Acme Widgets, Inc."))
# The answer says "operating loss" where the question says "money ... pour into": the asker's verb is discounted
# (``QuestionAnalysis.asker_verb``), but "money" is missing too, so it holds less than half of the ask's term weight.
PAID = "Acme Labs reported an operating loss of $4.12 billion in 2024, as we kept investing in the platform."
OTHER = "Acme employees receive stock awards that vest over four years of service."
QUESTION = "How much money did Acme pour into its Labs platform during 2024?"


class TableEmbedder:
    """Vectors from a table: each known text gets its own direction mixed with the question's by a set cosine."""

    name = "table"
    dim = 8

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.embedded += list(texts)
        out = []
        for i, t in enumerate(texts):
            c = self.cosines.get(t, 0.0)
            v = np.zeros(self.dim, dtype=np.float32)
            v[0], v[1 + i % (self.dim - 1)] = c, np.sqrt(1 - c * c)
            out.append(v)
        return np.stack(out)

    def embed_query(self, text: str) -> Any:
        v = np.zeros(self.dim, dtype=np.float32)
        v[0] = 1.0
        return v


def _answer(similarity: UnitSimilarity | None) -> list[str]:
    q = analyse_question(QUESTION, ACME, (), STEM)
    units, texts = sentence_units(OTHER, PAID, ticker="ACME")
    meaning = None if similarity is None else (lambda us: similarity.scores(QUESTION, us))
    return [s.text for s in extract(q, units, texts, STEM, "ACME", {"d": (2024, "FY")}, meaning).sentences]


def test_a_paraphrased_answer_qualifies_by_meaning_and_not_by_words_alone() -> None:
    assert _answer(None) == []  # by terms alone no sentence holds half of the ask: "not found"
    close = UnitSimilarity(lambda: TableEmbedder({PAID: 0.7, OTHER: 0.3}))  # type: ignore[arg-type, return-value]
    assert _answer(close) == [PAID]


def test_meaning_far_from_the_question_does_not_qualify() -> None:
    far = UnitSimilarity(lambda: TableEmbedder({PAID: 0.2, OTHER: 0.2}))  # type: ignore[arg-type, return-value]
    assert _answer(far) == []


def test_unit_vectors_are_cached_per_span() -> None:
    model = TableEmbedder({PAID: 0.7})
    sim = UnitSimilarity(lambda: model)  # type: ignore[arg-type, return-value]
    units, _ = sentence_units(OTHER, PAID, ticker="ACME")
    first = sim.scores("a question", units)
    second = sim.scores("another question", units)
    assert first == second and first is not None and first[1] == pytest.approx(0.7, abs=1e-6)
    assert model.embedded == [OTHER, PAID]  # the second question embedded no unit again


def test_a_model_that_cannot_be_built_is_reported_and_terms_still_answer() -> None:
    def broken() -> Any:
        raise ConfigError("the embedding model is not installed; run `equimind models pull`")

    sim = UnitSimilarity(broken)
    units, _ = sentence_units(OTHER, PAID, ticker="ACME")
    assert sim.scores("q", units) is None
    assert sim.problem is not None and "equimind models pull" in sim.problem


@pytest.mark.integration
def test_the_product_answerer_reads_meaning_and_one_without_a_model_says_so(answerer: Any, search: Any,
                                                                            nvda_services: Any) -> None:
    from datetime import date

    question = "Which new GPU architecture did NVIDIA introduce?"
    hits = search(question)
    plain = ask(answerer, question, "NVDA", date(2025, 9, 30), hits)
    assert any("no unit similarity model given" in d for d in plain.degraded)
    product = nvda_services.answerer()
    assert product.similarity is nvda_services.unit_similarity
    ans = ask(product, question, "NVDA", date(2025, 9, 30), hits)
    assert not any("similarity" in d for d in ans.degraded) and ans.sentences
