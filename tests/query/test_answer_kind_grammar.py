"""The answer-kind grammar (issue 28: "answer-kind detection is a small explicit grammar, tested on questions you
write"): every production of ``query.question.GRAMMAR`` decides at least one question of our own, about made-up
companies and in wordings not taken from any benchmark, and the order of the productions settles the overlaps."""

from __future__ import annotations

import pytest

from equimind.lexicon.concepts import find_metrics
from equimind.query.analysis import Subject, name_words
from equimind.query.kinds import AnswerKind
from equimind.query.question import GRAMMAR, _words, analyse_question, kind_rule

HERON = Subject("HRN", name_words("HRN", "Heron Freight Lines Inc."))

CASES: list[tuple[str, str, AnswerKind]] = [
    ("How many trucks did Heron Freight operate at year end?", "how many", AnswerKind.COUNT),
    ("How fast did Heron Freight's fuel surcharge income grow?", "how fast / by how much + growth",
     AnswerKind.PERCENT),
    ("By how much did Heron Freight's revenue increase in 2023?", "how fast / by how much + growth",
     AnswerKind.PERCENT),
    ("What percentage of Heron Freight's loads were intermodal?", "what percentage / fraction / rate",
     AnswerKind.PERCENT),
    ("What share of Heron Freight's drivers are owner-operators?", "what percentage / fraction / rate",
     AnswerKind.PERCENT),
    ("How large is Heron Freight's workforce?", "how much + count noun", AnswerKind.COUNT),
    ("How much did Heron Freight pay for diesel in 2023?", "how much / large", AnswerKind.AMOUNT),
    ("What is Heron Freight's headcount?", "what is + headcount / number of", AnswerKind.COUNT),
    ("What was the number of terminals Heron Freight ran in 2022?", "what is + headcount / number of",
     AnswerKind.COUNT),
    ("When did Heron Freight open its Memphis hub?", "when / what year", AnswerKind.DATE),
    ("In what year was Heron Freight incorporated?", "when / what year", AnswerKind.DATE),
    ("Did Heron Freight renew its revolving credit facility?", "auxiliary first", AnswerKind.YES_NO),
    ("Has Heron Freight's net income increased since 2021?", "auxiliary first", AnswerKind.YES_NO),
    ("Why did Heron Freight's operating ratio worsen?", "why / what drove / how does X describe", AnswerKind.TEXT),
    ("What drove the decline in Heron Freight's revenue?", "why / what drove / how does X describe",
     AnswerKind.TEXT),
    ("What was Heron Freight's empty-mile ratio in units of percents?", "a percent instruction",
     AnswerKind.PERCENT),
    ("What was Heron Freight's total revenue in 2023?", "a reported metric", AnswerKind.AMOUNT),
    ("What did Heron Freight record as its claims accrual (in USD millions)?", "a currency instruction",
     AnswerKind.AMOUNT),
    ("Which customer accounted for the most of Heron Freight's loads?", "which / where / who", AnswerKind.NAME),
    ("What company did Heron Freight acquire in 2022?", "which / where / who", AnswerKind.NAME),
    ("Describe Heron Freight's approach to driver retention.", "anything else", AnswerKind.TEXT),
]


@pytest.mark.parametrize(("question", "production", "kind"), CASES)
def test_each_question_is_decided_by_the_production_that_names_its_form(question: str, production: str,
                                                                        kind: AnswerKind) -> None:
    matches = find_metrics(question)
    rule, cue = kind_rule(_words(question), matches[0] if matches else None, question)
    assert (rule.name, rule.kind) == (production, kind), cue
    assert cue


def test_every_production_of_the_grammar_decides_one_of_our_questions() -> None:
    assert {name for _, name, _ in CASES} == {rule.name for rule in GRAMMAR}
    assert GRAMMAR[-1].applies is not None and GRAMMAR[-1].kind is AnswerKind.TEXT  # the catch-all is last


@pytest.mark.parametrize(("question", "kind"), [
    # a growth word with "how much" is a percent, not an amount: the growth production comes first
    ("How much did Heron Freight's revenue grow in 2023?", AnswerKind.PERCENT),
    # a reason is asked even when a metric is named: the explanation production comes before the metric
    ("Why did Heron Freight's net income fall in 2023?", AnswerKind.TEXT),
    # a count noun with a money verb is an amount: "spend" on employees is money
    ("How much did Heron Freight spend on employees in 2023?", AnswerKind.AMOUNT),
])
def test_the_order_of_the_productions_settles_the_overlaps(question: str, kind: AnswerKind) -> None:
    assert analyse_question(question, HERON).value_kind is kind
