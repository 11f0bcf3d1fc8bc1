"""Question analysis for the answerability check: decision vs specific asks, focus terms, co-subjects (ADR 0006)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.query.analysis import (
    ADVICE_WORDS,
    FRAME_WORDS,
    FUNCTION_WORDS,
    AskKind,
    Subject,
    analyse,
    ask_text,
    classify,
    name_words,
)

NVDA = Subject("NVDA", name_words("NVDA", "NVIDIA CORP"))
AAPL = Subject("AAPL", name_words("AAPL", "Apple Inc."))
AMZN = Subject("AMZN", name_words("AMZN", "AMAZON.COM, INC."))
NFLX = Subject("NFLX", name_words("NFLX", "Netflix, Inc."))
WFC = Subject("WFC", name_words("WFC", "WELLS FARGO & COMPANY/MN"))
BBY = Subject("BBY", name_words("BBY", "Best Buy Co., Inc."))
META = Subject("META", name_words("META", "Meta Platforms, Inc."))
STORE = [NVDA, AAPL, AMZN, NFLX, WFC, BBY, META]


def _words(question: str, subject: Subject = NVDA) -> list[str]:
    return [t.word for t in analyse(question, subject, STORE).terms]


@pytest.mark.parametrize("question", [
    "Should I invest in NVIDIA?", "Is data-center growth sustainable?", "What are the main risks?",
    "Is NVIDIA a buy at this price?", "Buy or sell NVDA?", "What is the outlook for NVIDIA?",
    "Would you recommend NVIDIA stock?", "Is NVIDIA overvalued?", "Should we hold our NVIDIA shares?",
    "Is NVIDIA a good long-term investment?", "Is NVIDIA a great stock to own?",
    # the same words in a judgement: not put in the past, a person framing it, or no change asked
    "Is NVIDIA's risk increasing?", "Should I have sold NVIDIA when its risk rose?", "Did NVIDIA flag new risks?",
    "Has NVIDIA's growth been sustainable?",
])
def test_decision_asks_are_always_rated(question: str) -> None:
    a = analyse(question, NVDA, STORE)
    assert a.kind is AskKind.DECISION and a.terms == ()


@pytest.mark.parametrize("question", [
    "How much revenue did NVIDIA's automotive segment generate in fiscal 2025?",
    "What was the effective tax rate in the second quarter of 2025?",  # "rate" is a noun, not a rating
    "How much did Apple spend buying back its own shares?",  # "buying back" is not a decision verb
    "How much did Tesla invest in capex in 2025?",  # no person: a reported fact
    "What price did NVIDIA pay to acquire Arm Holdings?",
    "How good was NVIDIA's gross margin in fiscal 2025?",  # a judgement adjective without a holding noun
    # an advice word naming a figure whose past change is asked: a reported fact (VaR, a valuation multiple)
    "Looking at VaR, did the risk NVIDIA faced in fiscal 2025 decrease compared to the prior year?",
    "Has NVIDIA's valuation risen compared to 2023?",
])
def test_specific_asks(question: str) -> None:
    assert analyse(question, NVDA, STORE).kind is AskKind.SPECIFIC


def test_a_decision_ask_keeps_its_topic_words_apart_from_its_advice_words() -> None:
    assert [t.word for t in analyse("Is data-center growth sustainable?", NVDA, STORE).topic] == [
        "data", "center", "growth"]
    assert analyse("Should I buy NVIDIA?", NVDA, STORE).topic == ()
    assert analyse("Is NVIDIA a good long-term investment?", NVDA, STORE).topic == ()
    # the decision verbs' other forms frame the ask too: no paraphrase of "should I buy" names a topic
    for q in ("Would you recommend buying NVIDIA stock?", "Is selling NVDA shares wise now?", "NVDA: buy or sell?"):
        assert analyse(q, NVDA, STORE).topic == (), q


def test_company_names_are_masked_before_classifying() -> None:
    # "Best Buy" is the company, not the decision verb "buy"
    assert analyse("Are Best Buy's gross margins historically consistent?", BBY, STORE).kind is AskKind.SPECIFIC
    assert classify(["is", "it", "a", "buy"])[0] is AskKind.DECISION


def test_focus_terms_drop_frame_function_period_and_company_words() -> None:
    assert _words("How much revenue did NVIDIA's automotive segment generate in fiscal 2025?") == [
        "revenue", "automotive", "segment", "generate"]
    assert _words("What was NVIDIA's data center revenue in Q2 of FY2026?") == ["data", "center", "revenue"]
    assert _words("How many tonnes of coffee did Tesla's cafeterias serve in 2024?", AAPL) == [
        "tonnes", "coffee", "tesla", "cafeterias", "serve"]  # Tesla: not AAPL's name nor a store company


def test_stems_match_the_bm25_stemmer() -> None:
    a = analyse("How many theaters did NVIDIA own in Brazil?", NVDA, STORE)
    assert {t.word: t.stem for t in a.terms} == {"theaters": "theater", "brazil": "brazil"}


def test_proper_nouns_and_acronyms_are_marked() -> None:
    a = analyse("What is NVIDIA's EBITDA from India in 2024?", NVDA, STORE)
    flags = {t.word: (t.proper, t.acronym) for t in a.terms}
    assert flags == {"ebitda": (False, True), "india": (True, False)}
    # a capital at the start of a sentence is not a proper noun
    assert not any(t.proper for t in analyse("Revenue of NVIDIA?", NVDA, STORE).terms)


def test_ask_text_keeps_the_question_sentence_without_instructions_or_asides() -> None:
    q = ("Assume that you are an analyst. Answer the following question using the balance sheet: what is the "
         "year end FY2018 net PPNE for 3M? Answer in USD billions.")
    assert ask_text(q) == "what is the year end FY2018 net PPNE for 3M?"
    assert ask_text("What is the FY2017 return on assets (ROA) for Coca Cola?") == \
        "What is the FY2017 return on assets   for Coca Cola?"
    assert ask_text("Tell me about NVIDIA") == "Tell me about NVIDIA"
    # a lead-in that points at a statement is where to look, not what is asked; other lead-ins are part of the ask
    assert ask_text("Using only the cash flow statement, how much did Acme spend on capex in 2024?") == \
        "how much did Acme spend on capex in 2024?"
    assert ask_text("In 2022 Q2, which segment of Acme earned most?") == \
        "In 2022 Q2, which segment of Acme earned most?"
    assert ask_text("Among operating, investing and financing activities, which brought in the most cash?") == \
        "Among operating, investing and financing activities, which brought in the most cash?"
    # a colon that does not introduce the question keeps the whole sentence
    q = "Which grew faster: AWS or NVIDIA's data center?"
    assert ask_text(q) == q


def test_compared_companies_join_the_scope_but_objects_stay_in_the_ask() -> None:
    compare = analyse("Compare the share buybacks of Apple and Netflix in 2025.", AAPL, STORE)
    assert compare.co_subjects == ("NFLX",) and "netflix" not in [t.word for t in compare.terms]
    choice = analyse("Is Amazon or Wells Fargo the bigger employer?", AMZN, STORE)
    assert choice.co_subjects == ("WFC",) and [t.word for t in choice.terms] == ["employer"]
    meta = analyse("Compare the headcounts of NVIDIA and Meta.", NVDA, STORE)  # one capitalised name word
    assert meta.co_subjects == ("META",) and [t.word for t in meta.terms] == ["headcounts"]
    obj = analyse("What was the purchase price of Amazon's acquisition of Netflix?", AMZN, STORE)
    assert obj.co_subjects == () and "netflix" in [t.word for t in obj.terms]
    assert next(t for t in obj.terms if t.word == "netflix").proper


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.one_of(_WORD, st.sampled_from(sorted(FRAME_WORDS | FUNCTION_WORDS))), min_size=1,
                      max_size=12), cap=st.booleans())
def test_focus_terms_never_hold_frame_words_or_names_and_are_deterministic(words: list[str], cap: bool) -> None:
    question = "How much " + " ".join(w.capitalize() if cap else w for w in words) + " did NVIDIA report?"
    a = analyse(question, NVDA, STORE)
    assert a == analyse(question, NVDA, STORE)
    for t in a.terms:
        assert t.word not in FRAME_WORDS | FUNCTION_WORDS | NVDA.names
        assert t.word in question.lower()
    assert len({t.stem for t in a.terms}) == len(a.terms)


@settings(max_examples=100, deadline=None)
@given(prefix=st.lists(_WORD.filter(lambda w: w not in ADVICE_WORDS), max_size=5),
       cue=st.sampled_from(sorted(ADVICE_WORDS)))
def test_any_advice_word_makes_a_decision_ask(prefix: list[str], cue: str) -> None:
    a = analyse(" ".join([*prefix, cue, "NVIDIA"]) + "?", NVDA, STORE)
    assert a.kind is AskKind.DECISION and cue in a.cue
