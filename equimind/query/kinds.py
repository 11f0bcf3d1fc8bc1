"""The kind of answer a question asks for: decided once, by ``query.question.analyse_question``."""

from __future__ import annotations

from enum import StrEnum


class AnswerKind(StrEnum):
    """What the question asks for (``question.analyse_question`` decides)."""

    AMOUNT = "amount"  # how much / what was X: a money amount with unit and period
    COUNT = "count"  # how many
    PERCENT = "percent"  # how fast / what share / what rate
    DATE = "date"  # when
    NAME = "name"  # where / which / who
    YES_NO = "yes_no"  # is / does / can ...
    TEXT = "text"  # why / what drove / how does ...: an explanation
    COMPARISON = "comparison"  # two companies or two periods with a comparison word
    DECISION = "decision"  # should I buy ...: rated by the debate, not answered here
