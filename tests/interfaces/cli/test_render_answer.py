"""The CLI's answer output shows the company a question naming none was answered for, and how it was found."""

from __future__ import annotations

from datetime import date

from equimind.answer.record import Answer, Support
from equimind.interfaces.cli import render_answer
from equimind.interfaces.cli.render import console
from equimind.query.kinds import AnswerKind


def _answer(company_from: str) -> Answer:
    return Answer(question="Were any nominees voted against?", ticker="FL", as_of=date(2026, 1, 1),
                  kind=AnswerKind.YES_NO, support=Support.SUPPORTED, parsed_question={"company_from": company_from})


def test_a_company_guessed_from_search_is_shown_with_its_override() -> None:
    guess = ("search: 3 of the top 10 passages, 51% of their weight by rank (the passage ranked r weighs 1/r) "
             "(Foot Locker); pass --ticker to ask about another company")
    with console.capture() as out:
        render_answer.answer(_answer(guess))
    text = " ".join(out.get().split())
    assert "company: the question names none; answered for FL, from search: 3 of the top 10 passages" in text
    assert "pass --ticker to ask about another company" in text
    with console.capture() as named:
        render_answer.answer(_answer("the question's words ('Foot Locker': a stored company)"))
    assert "company:" not in named.get()
