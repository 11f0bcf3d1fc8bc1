"""Salient and topic terms of a question (shared by the critic's coverage score and the rewriter)."""

from __future__ import annotations

from equimind.lexicon.text import salient_terms, topic_terms

QUESTION = "Is NVIDIA's data-center growth sustainable?"


def test_question_terms() -> None:
    assert salient_terms(QUESTION, ["NVIDIA"]) == ["data", "center", "growth", "sustainable"]
    assert topic_terms(QUESTION, ["NVDA", "NVIDIA"]) == ["data", "center"]
