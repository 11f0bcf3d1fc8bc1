"""The reporting vocabulary of the extractive answerer: question words matched by the words filings print."""

from __future__ import annotations

import Stemmer

from equimind.answer.extract import holds_term
from equimind.lexicon.vocabulary import Term, content_terms, expand_terms
from equimind.query.analysis import stem_sets

STEM = Stemmer.Stemmer("english")


def _stems(text: str) -> frozenset[str]:
    return stem_sets([text], STEM)[0]


def test_a_multi_word_question_phrase_becomes_one_term_matched_by_the_filing_word() -> None:
    terms = expand_terms(list(STEM.stemWords(["spend", "buying", "back", "shares"])), STEM)
    assert [t.key for t in terms] == ["spend", "buy back", "share"]
    buy_back = terms[1]
    assert holds_term(buy_back, _stems("the Company repurchased 499 million shares"))
    assert holds_term(buy_back, _stems("we bought back stock"))
    # a phrase's words need only all be in the unit (units are single sentences or table rows)
    assert holds_term(buy_back, _stems("we bought inventory and paid it back later"))
    assert not holds_term(buy_back, _stems("we bought inventory"))
    assert not holds_term(buy_back, _stems("we issued 12 million shares"))


def test_words_in_no_group_match_only_themselves() -> None:
    terms = expand_terms(["blackwel", "architectur"], STEM)
    assert [t.alternatives for t in terms] == [(("blackwel",),), (("architectur",),)]


def test_money_verbs_are_not_required_of_an_amount_answer() -> None:
    stems = list(STEM.stemWords(["spend", "buying", "back", "shares"]))
    assert [t.key for t in content_terms(stems, STEM, amount_ask=True)] == ["buy back", "share"]
    assert [t.key for t in content_terms(stems, STEM, amount_ask=False)] == ["spend", "buy back", "share"]
    assert [t.key for t in content_terms(["spend"], STEM, amount_ask=True)] == ["spend"]  # never empty


def test_prefix_matching_equals_the_definition_on_random_words() -> None:
    """``holds`` finds prefix relatives by set lookups and a bisect; it must agree with its definition (a stem of
    at least PREFIX characters that starts the term, or that the term starts) on every case."""
    import random

    from equimind.answer.extract import PREFIX, holds

    def by_definition(term: str, stems: frozenset[str]) -> bool:
        return term in stems or (len(term) >= PREFIX and any(
            len(w) >= PREFIX and (w.startswith(term) or term.startswith(w)) for w in stems))

    rng = random.Random(3)
    seen = set()
    for _ in range(5000):
        stems = frozenset("".join(rng.choice("abcd") for _ in range(rng.randint(1, 9)))
                          for _ in range(rng.randint(0, 30)))
        term = "".join(rng.choice("abcd") for _ in range(rng.randint(1, 9)))
        assert holds(term, stems) is by_definition(term, stems), (term, sorted(stems))
        seen.add(by_definition(term, stems))
    assert seen == {True, False}


def test_the_asked_metric_is_one_term_held_by_any_line_name_of_it() -> None:
    from equimind.lexicon.concepts import METRIC_VERBS, find_metrics

    def terms(ask: str, words: list[str]) -> list[Term]:
        m = find_metrics(ask)[0]
        return content_terms(list(STEM.stemWords(words)), STEM, True, (m.phrase, *m.metric.phrases),
                             sorted(METRIC_VERBS))

    cogs = terms("COGS", ["cogs"])
    assert len(cogs) == 1 and holds_term(cogs[0], _stems("| Total cost of revenue | 32,780 |"))
    assert not holds_term(cogs[0], _stems("| Total revenue | 85,320 |"))
    cash = terms("cash flow from operating activities", ["generate", "cash", "flow", "operating", "activities"])
    assert len(cash) == 1  # "generate" is the metric's verb, not a word the statement prints
    assert holds_term(cash[0], _stems("| Net cash provided by operating activities | 381,603 |"))
    income = terms("net income", ["net", "income", "attributable"])
    assert [t.key for t in income] == ["net incom", "attribut"]
    assert not holds_term(income[0], _stems("| Net sales | 280,522 |"))
