"""The reader of a question is total (issue 28): any text, and question-shaped text built from the concept map's
phrases, the label table's phrases, the composition grammar's words, periods and amounts, is analysed without an
exception, and what it finds holds together: a metric's span is inside the ask it was read from, a computed figure's
lines are lines the answer path can look up, the answer kind is decided by one production of the grammar."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.answer.computed import line_spec
from equimind.lexicon.concepts import METRICS
from equimind.lexicon.line_items import load_line_items
from equimind.query.analysis import Subject, name_words
from equimind.query.question import GRAMMAR, analyse_question

SUBJECT = Subject("HRN", name_words("HRN", "Heron Freight Lines Inc."))
ANY_TEXT_EXAMPLES = 200
SHAPED_EXAMPLES = 400

_metric = st.sampled_from(sorted({p for m in METRICS for p in m.phrases}))
_label = st.sampled_from(sorted({p for s in load_line_items().specs.values() for p in s.phrases})[::7])
_glue = st.sampled_from(["What was", "How much", "Did", "Why did", "What is the year-over-year change in",
                         "growth", "grew", "as a % of revenue", "% margin", "to revenue ratio", "in percent",
                         "Heron Freight's", "in fiscal 2023", "FY2019 - FY2021", "3 year average", "stable",
                         "consistent", "increase", "capital-intensive", "interest coverage", "retention ratio",
                         "(in USD millions)", "?", ",", "and", "of", "between FY2022 and FY2023", "\u2019s", "&",
                         "Among", "which of", "or", "most", "the least", "used the most", "largest liability",
                         "What was the", "activities", "segments", "what drove", "into reportable segments"])
_piece = _metric | _label | _glue | st.text(max_size=6)
QUESTION_SHAPED = st.lists(_piece, min_size=1, max_size=14).map(" ".join)
_kinds = {r.kind for r in GRAMMAR}


def _holds_together(question: str) -> None:
    q = analyse_question(question, SUBJECT)
    assert q.value_kind in _kinds
    if q.metric is not None:
        assert 0 <= q.metric.start <= q.metric.end <= len(q.ask.ask)
    if q.formula is not None:
        for key, _ in q.formula.formula.lines:
            assert line_spec(key).key == key
        for member in q.formula.formula.members:
            assert member
    if q.choice is not None:
        assert q.choice.direction in ("max", "min") and (q.choice.candidates or q.choice.total)
        assert all(c for c in q.choice.candidates) and q.choice.names()


@settings(deadline=None, derandomize=True, max_examples=ANY_TEXT_EXAMPLES)
@given(text=st.text())
def test_the_question_reader_returns_on_any_text(text: str) -> None:
    _holds_together(text)


@settings(deadline=None, derandomize=True, max_examples=SHAPED_EXAMPLES)
@given(text=QUESTION_SHAPED)
def test_the_question_reader_returns_on_question_shaped_text(text: str) -> None:
    _holds_together(text)
