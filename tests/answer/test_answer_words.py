"""Words of an ask the extractive answerer need not find as written: the word naming the answer's type, the
acronyms a filing defines, "either or" words, and an event's calendar month (synthetic sentences; real scoring)."""

from __future__ import annotations

import Stemmer

from equimind.answer.acronyms import acronym_groups, common_noun_acronyms, defined_acronyms
from equimind.answer.extract import extract
from equimind.lexicon.vocabulary import either_pairs
from equimind.query.analysis import Subject, name_words
from equimind.query.periods import PeriodKind, find_periods
from equimind.query.question import analyse_question
from tests.answer.conftest import sentence_units

STEM = Stemmer.Stemmer("english")
META = Subject("META", name_words("META", "Meta Platforms, Inc."))


def _answer(question: str, *sentences: str, report: tuple[int, str] = (2024, "FY")) -> list[str]:
    q = analyse_question(question, META, (), STEM)
    units, texts = sentence_units(*sentences, ticker="META")
    groups = acronym_groups(list(texts.values()))
    common = common_noun_acronyms(list(texts.values()))
    return [s.text for s in extract(q, units, texts, STEM, "META", {"d": report}, None, groups, common).sentences]


DEFINES = "We report the numbers of our daily active people (DAP) and average revenue per person (ARPP)."
SHARE = "In the fourth quarter of 2024, we estimated that less than 3% of our worldwide DAP were violating accounts."
OTHER = "Violating accounts are very difficult to measure at our scale and our estimates may change."


def test_defined_acronyms_need_the_initials_in_order() -> None:
    text = ("our daily active people (DAP), Remaining Performance Obligations (\u201cRPO\u201d), the Board of "
            "Directors (the \u201cBoard\u201d), free cash flow (FCF), and net sales (Q4)")
    assert defined_acronyms(text) == (("daily active people", "DAP"), ("Remaining Performance Obligations", "RPO"),
                                      ("free cash flow", "FCF"))
    assert common_noun_acronyms([text]) == frozenset({"DAP", "FCF"})


def test_a_sentence_in_the_short_name_answers_an_ask_in_the_long_words() -> None:
    ask = "What fraction of Meta's daily active people are fake or violating accounts?"
    assert _answer(ask, DEFINES, SHARE, OTHER) == [SHARE]
    # without the definition the sentence holds too little of the ask: "not found", never a near miss
    assert _answer(ask, SHARE, OTHER) == []


def test_either_word_of_an_or_holds_the_term() -> None:
    assert either_pairs("fake or violating accounts", STEM) == [("fake", "violat")]
    assert _answer("What share of Meta's accounts are fake or duplicate accounts?",
                   "We estimate that duplicate accounts represented 11% of our worldwide users.") != []
    assert _answer("What share of Meta's accounts are fake and duplicate accounts?",
                   "We estimate that duplicate accounts represented 11% of our worldwide users.") == []


CITY = "The Company's headquarters is located in Menlo Park, California."


def test_the_word_naming_the_answer_type_need_not_be_written() -> None:
    assert _answer("In which city is Meta's head office?", CITY) == [CITY]
    # ... but a unit that writes it ranks first
    named = "Our head office is in the city of Menlo Park, California."
    assert _answer("In which city is Meta's head office?", CITY, named)[0] == named


def test_a_common_noun_acronym_is_not_a_name() -> None:
    cdn = 'We use our own and third-party content delivery networks ("CDN") to stream content to members.'
    ours = "We use Open Connect, our own network, to stream content to members."
    assert _answer("What network does Meta use to stream content?", cdn, ours)[0] == ours


MAY_24 = "On May 2, 2024, the Company announced a program to repurchase up to $110 billion of its common stock."
MAY_25 = "On May 1, 2025, the Company announced an additional program to repurchase up to $100 billion."
OLD = "In September 2023, the Board authorized repurchases of up to $10 billion of its common stock."


def test_an_event_month_is_a_calendar_month() -> None:
    (p,) = find_periods("the buyback programme announced in May 2024")
    assert (p.kind, p.month, p.year, p.label()) == (PeriodKind.MONTH, 5, 2024, "May 2024")
    ask = "How large is the buyback programme Meta announced in May 2025?"
    assert _answer(ask, MAY_24, MAY_25, report=(2025, "Q3")) == [MAY_25]
    assert _answer(ask, MAY_24, report=(2025, "Q3")) == []
    # a month names its year: a 2023 authorisation is not a mid-2025 figure, even in a fiscal 2025 report
    assert _answer("How much of Meta's share repurchase authorization was left as of mid-2025?", OLD,
                   report=(2025, "Q2")) == []


def test_money_written_with_a_space_after_the_dollar_sign_is_not_a_count() -> None:
    from equimind.answer.values import counts

    text = "Payments were $ 5.6 billion in 2024 and $6.4 billion in 2022; we had approximately 164,000 employees."
    assert [v.text for v in counts(text)] == ["164,000"]
