"""The answer strategies as an explicit ordered chain (issue 27): the chain's order, each strategy run alone on a small
input (passing with a reason when it does not apply), a degraded strategy recorded in ``degraded`` while the chain
goes on, and the trace an Answer carries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest
import Stemmer

from equimind.answer.answerer import Answerer
from equimind.answer.figures import FigureAnswerer
from equimind.answer.llm_answer import LLMAnswerError
from equimind.answer.record import AnswerSentence, Method, PassageRead, RefusalReason, Support
from equimind.answer.strategies import (
    DEFAULT_ORDER,
    Answered,
    ChoiceRows,
    ComputedFigure,
    Degraded,
    Extractive,
    FinalRefusal,
    LLMStrategy,
    NoPassages,
    NotApplicable,
    Notice,
    Outcome,
    PassageReader,
    Refused,
    SentenceLookup,
    SideInput,
    StatementLine,
    TableLookup,
    XbrlLine,
    record_degraded,
    run_chain,
)
from equimind.core.search import SearchHit
from equimind.query.analysis import Subject, name_words
from equimind.query.question import analyse_question
from tests.answer.asking import ask
from tests.answer.conftest import OneFilingStore

AS_OF = date(2025, 9, 30)
ACME = Subject("ACME", name_words("ACME", "Acme Corp"), ("d",))
TEXT = ("Item 7. Management's Discussion and Analysis. Acme designs industrial robots for warehouses. "
        "The company is headquartered in Springfield.")
STEM = Stemmer.Stemmer("english")


class TinyStore(OneFilingStore):
    """A docstore of one 10-K ("d") holding ``TEXT``."""

    def __init__(self) -> None:
        super().__init__(TEXT, "ACME", "Acme Corp", 2025, date(2025, 3, 1), date(2025, 1, 31))

    def get_document_text(self, doc_id: str) -> str:
        return TEXT


def side(question: str, passages: bool = True) -> SideInput:
    q = analyse_question(question, ACME, (), STEM)
    read = (PassageRead(doc_id="d", start=0, end=len(TEXT), score=1.0, ticker="ACME"),) if passages else ()
    return SideInput(q, "ACME", read, AS_OF, ("d",))


def reader() -> PassageReader:
    return PassageReader(TinyStore(), STEM)  # type: ignore[arg-type]


AMOUNT_XBRL = "What was Acme's revenue in fiscal 2025?"
TEXT_ASK = "What does Acme design?"
DATE_ASK = "When was Acme incorporated?"


# -------------------------------------------------------------------------------------------------------- the order

def test_the_answerer_builds_the_chain_in_the_issue_order() -> None:
    chain = Answerer(TinyStore()).chain  # type: ignore[arg-type]
    assert tuple(s.name for s in chain) == DEFAULT_ORDER == (
        "choice", "computed", "xbrl", "statement_line", "no_passages", "llm", "extractive", "sentence_lookup_first",
        "table_lookup", "sentence_lookup", "refusal")
    kinds = [type(s) for s in chain]
    assert kinds == [ChoiceRows, ComputedFigure, XbrlLine, StatementLine, NoPassages, LLMStrategy, Extractive,
                     SentenceLookup, TableLookup, SentenceLookup, FinalRefusal]


# ---------------------------------------------------------------------------------------- each strategy on its own

@pytest.mark.parametrize(("make", "question", "why"), [
    (lambda: ChoiceRows(FigureAnswerer(TinyStore(), None)), AMOUNT_XBRL,  # type: ignore[arg-type]
     "no choice among named candidates"),
    (lambda: ComputedFigure(FigureAnswerer(TinyStore(), None)), AMOUNT_XBRL,  # type: ignore[arg-type]
     "no formula named"),
    (lambda: XbrlLine(None), TEXT_ASK, "not an XBRL ask"),
    (lambda: StatementLine(FigureAnswerer(TinyStore(), None)), TEXT_ASK,  # type: ignore[arg-type]
     "not an XBRL ask"),
    (lambda: NoPassages(), TEXT_ASK, "1 passages of ACME retrieved"),
    (lambda: LLMStrategy(TinyStore(), None, STEM), TEXT_ASK, "no LLM configured"),  # type: ignore[arg-type]
    (lambda: TableLookup(reader()), DATE_ASK, "a date ask: no table row states one"),
    (lambda: SentenceLookup(reader(), first=True), TEXT_ASK, "a text ask: no value to look up"),
    (lambda: SentenceLookup(reader(), first=True), AMOUNT_XBRL, "an amount ask: the sentences are read after the "
                                                               "tables"),
    (lambda: SentenceLookup(reader(), first=False), DATE_ASK, "a date ask: the sentences are read before the "
                                                             "tables"),
])
def test_a_strategy_that_does_not_apply_passes_with_its_reason(make: Callable[[], Any], question: str,
                                                               why: str) -> None:
    out = make().run(side(question))
    assert isinstance(out, NotApplicable)
    assert out.reason == why and not out.notices


def test_the_extractive_strategy_answers_alone_from_the_passages() -> None:
    out = Extractive(reader()).run(side("Where is Acme headquartered?"))
    assert isinstance(out, Answered) and "Springfield" in out.sentences[0].text
    assert out.sentences[0].method is Method.EXTRACTIVE and out.note.startswith("extractive: ")
    # no similarity model: the one notice, recorded once per answer
    assert out.notices == (Notice("answer: no unit similarity model given; sentences scored by term coverage alone",
                                  once=True),)


def test_the_extractive_strategy_passes_when_no_passage_answers_and_the_refusal_says_why() -> None:
    s = side("How many employees did Acme have?")
    out = Extractive(reader()).run(s)
    assert isinstance(out, NotApplicable) and out.reason.startswith("no passage sentence or row answers")
    refused = FinalRefusal(reader()).run(s)  # the extraction is shared through the side's work, not redone
    assert isinstance(refused, Refused) and refused.reason is RefusalReason.NO_PASSAGES and not refused.notices
    assert refused.note.startswith("no retrieved sentence or table row of ACME holds half of the question's terms")


def test_no_passages_refuses_a_side_without_passages() -> None:
    out = NoPassages().run(side(TEXT_ASK, passages=False))
    assert out == Refused(RefusalReason.NO_PASSAGES, "no passage of ACME was retrieved")


TABLE = ("Item 7. Acme's segment revenue grew in fiscal 2025 on demand for warehouse robots.\n\n"
         "Revenue by segment (In millions)\n\n| | Fiscal 2025 | Fiscal 2024 |\n|---|---|---|\n"
         "| Robotics revenue | $1,234 | $1,000 |\n| Services revenue | $321 | $300 |\n")


class TableStore(TinyStore):
    def get_document_text(self, doc_id: str) -> str:
        return TABLE


def test_the_table_lookup_answers_what_the_passages_name_but_do_not_state() -> None:
    """The passage (the first line) holds the terms but no amount: the chain goes on past the extractive strategy
    to the statement table of the retrieved filing."""
    q = analyse_question("What was Acme's robotics revenue in fiscal 2025?", ACME, (), STEM)
    passage = PassageRead(doc_id="d", start=0, end=TABLE.index("\n"), score=1.0, ticker="ACME")
    degraded: list[str] = []
    chain = Answerer(TableStore()).chain  # type: ignore[arg-type]
    outcome, steps = run_chain(chain, SideInput(q, "ACME", (passage,), AS_OF, ("d",)), degraded)
    assert isinstance(outcome, Answered) and outcome.sentences[0].text.startswith("Robotics revenue: $1,234 million")
    assert outcome.note.startswith("table lookup in the retrieved filings: ")
    assert [(s.strategy, s.outcome) for s in steps][-3:] == [
        ("extractive", "not_applicable"), ("sentence_lookup_first", "not_applicable"), ("table_lookup", "answered")]
    assert degraded == ["answer: no unit similarity model given; sentences scored by term coverage alone"]


# ------------------------------------------------------------------------------------------ degraded, and going on

def test_a_degraded_strategy_is_recorded_and_the_chain_goes_on() -> None:
    @dataclass(frozen=True)
    class Fixed:
        outcome: Outcome
        name: str

        def run(self, side: SideInput) -> Outcome:
            return self.outcome

    sentence = AnswerSentence(text="Acme is based in Springfield.", method=Method.EXTRACTIVE)
    degraded: list[str] = []
    outcome, steps = run_chain([XbrlLine(None), Fixed(NotApplicable("not mine"), "skip"),
                                Fixed(Answered((sentence,), "fixed"), "fixed"),
                                Fixed(Refused(RefusalReason.NO_PASSAGES, "never reached"), "late")],
                               side(AMOUNT_XBRL), degraded)
    assert degraded == ["xbrl: no companyfacts source given; answered from the passages"]
    assert outcome == Answered((sentence,), "fixed")
    assert [(s.strategy, s.outcome) for s in steps] == [("xbrl", "degraded"), ("skip", "not_applicable"),
                                                        ("fixed", "answered")]
    assert steps[0].why == degraded[0] and steps[1].why == "not mine"


def test_notices_come_before_the_degraded_reason_and_once_notices_are_kept_once() -> None:
    degraded = ["answer: said before"]
    record_degraded(Degraded("why", (Notice("first"), Notice("answer: said before", once=True))), degraded)
    record_degraded(NotApplicable("quiet", (Notice("first"),)), degraded)
    assert degraded == ["answer: said before", "first", "why", "first"]


def test_an_llm_failure_is_degraded_and_the_extractive_strategy_answers() -> None:
    class Failing:
        def run(self, *args: Any) -> Any:
            raise LLMAnswerError("timeout", "the model timed out")

    answerer = Answerer(TinyStore(), llm=Failing())  # type: ignore[arg-type]
    degraded: list[str] = []
    outcome, steps = run_chain(answerer.chain, side("Where is Acme headquartered?"), degraded)
    assert isinstance(outcome, Answered) and "Springfield" in outcome.sentences[0].text
    assert degraded[0].startswith("llm (timeout): ") and degraded[0].endswith("offline extractive answerer")
    assert [s.outcome for s in steps] == ["not_applicable"] * 5 + ["degraded", "answered"]


# ----------------------------------------------------------------------------------------- the trace on the Answer

@pytest.mark.integration
def test_the_answer_says_which_strategy_answered_and_why_the_others_passed(
        nvda_services: Any, search: Callable[[str], list[SearchHit]]) -> None:
    question = "What was NVIDIA's revenue in fiscal 2025?"
    ans = ask(Answerer(nvda_services.docstore), question, "NVDA", AS_OF, search(question))
    assert ans.support is Support.SUPPORTED
    assert "xbrl: no companyfacts source given; answered from the passages" in ans.degraded
    (trace,) = ans.strategies
    assert trace["side"] == "NVDA" and trace["periods"] == ["fiscal 2025"]
    steps = trace["steps"]
    assert steps[0] == {"strategy": "choice", "outcome": "not_applicable", "why": "no choice among named candidates"}
    assert steps[1] == {"strategy": "computed", "outcome": "not_applicable", "why": "no formula named"}
    assert steps[2]["strategy"] == "xbrl" and steps[2]["outcome"] == "degraded"
    assert steps[-1]["outcome"] == "answered" and trace["decided_by"] == steps[-1]["strategy"]
    assert ans.parsed_question["sides"] == [steps[-1]["why"]]


@pytest.mark.integration
def test_a_comparison_traces_the_chain_once_per_side(answerer: Answerer) -> None:
    ans = ask(answerer, "Was NVIDIA's revenue in fiscal 2025 higher than in fiscal 2024?", "NVDA", AS_OF, [])
    assert ans.support is Support.SUPPORTED
    assert [(t["side"], t["periods"], t["decided_by"]) for t in ans.strategies] == [
        ("NVDA", ["fiscal 2025"], "xbrl"), ("NVDA", ["fiscal 2024"], "xbrl")]
    assert all([s["outcome"] for s in t["steps"]] == ["not_applicable", "not_applicable", "answered"]
               for t in ans.strategies)
