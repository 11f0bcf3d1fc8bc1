"""Ask an ``Answerer`` a question the way the product does: parse it once (``query/parsed.QuestionParser``, over the
answerer's store and companyfacts), then answer the parse."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from equimind.answer.answerer import Answerer
from equimind.answer.record import Answer
from equimind.query.parsed import ParsedQuestion, QuestionParser


def parser_for(answerer: Answerer) -> QuestionParser:
    facts = answerer.facts
    return QuestionParser(answerer.docstore, shaping=False,
                          entity_name=None if facts is None else (lambda t: facts.company_facts(t).entity_name))


def parse(answerer: Answerer, question: str, ticker: str | None, as_of: date, *,
          company: str | None = None) -> ParsedQuestion:
    return parser_for(answerer).parse(question, as_of, ticker, company=company)


def ask(answerer: Answerer, question: str, ticker: str | None, as_of: date, hits: Sequence[Any], *,
        company: str | None = None, topic: bool = False) -> Answer:
    return answerer.answer(parse(answerer, question, ticker, as_of, company=company), hits, topic=topic)
