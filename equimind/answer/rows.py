"""Table rows as answers: the column of the asked year, the value a row states for an ask, and the rows that are
never answers (another line than the one asked, a table of contents).

A row is read in its table's terms: its header row names the columns' periods, its unit line scales its numbers, and
its sub-heading (``units.Unit.section``: "Operating income (loss):") says which line a segment's row reports.
"""

from __future__ import annotations

import re

from equimind.answer.record import StatedValue
from equimind.answer.units import Span, Unit, UnitKind, cells
from equimind.answer.values import percents, table_scale, values_of
from equimind.lexicon.concepts import LINE_HEADS, LINE_QUALIFIERS
from equimind.lexicon.text import TOKEN
from equimind.query.kinds import AnswerKind
from equimind.query.question import QuestionAnalysis


def year_column(header: Span | None, row: Span, year: int | None) -> tuple[int, str] | None:
    """(cell index, header cell) of the column of ``year``, else the first numeric column."""
    if header is None:
        return None
    head, body = cells(header.text), cells(row.text)
    if len(head) != len(body):
        return None
    numeric = [i for i, c in enumerate(body) if i > 0 and any(ch.isdigit() for ch in c)]
    if year is not None:
        hit = [i for i in numeric if str(year) in head[i]]
        if hit:
            return hit[0], head[hit[0]]
    return (numeric[0], head[numeric[0]]) if numeric else None


def other_line(q: QuestionAnalysis, label: str) -> bool:
    """An amount ask's row whose label names a line the ask does not ("costs" for a revenue ask): its numbers are
    another line's. The ask's own words and its metric's phrases are the lines it names."""
    if q.value_kind is not AnswerKind.AMOUNT:
        return False
    asked = set(TOKEN.findall(q.ask.ask.lower()))
    if q.metric is None and not asked & LINE_HEADS:  # "how big was the data center segment": any line answers
        return False
    if q.metric is not None:
        asked |= {w for p in q.metric.metric.phrases for w in TOKEN.findall(p.lower())}
    label = re.sub(r"\([^)]*\)", " ", label)  # "Operating income (loss)": the parenthesis is the line's sign
    return bool((set(TOKEN.findall(label.lower())) & LINE_HEADS) - asked)


def row_values(q: QuestionAnalysis, u: Unit, year: int | None) -> tuple[StatedValue, ...]:
    if other_line(q, cells(u.span.text)[0]) or (u.section is not None and other_line(q, cells(u.section.text)[0])):
        return ()
    col = year_column(u.header, u.span, year)
    scale = table_scale(u.scale_context)
    if q.value_kind is AnswerKind.COUNT and scale != 1.0 and "share" not in u.context.lower():
        return ()  # a table "(In millions)" of money: its numbers are amounts, not counts
    if col is None:
        return tuple(values_of(q.value_kind, u.span.text, scale=scale, question_words=q.question.split()))
    i, head = col
    cell = cells(u.span.text)[i]
    # a statement prints "$" on its first and total rows only: under a unit line ("(In millions)") a row's numbers
    # are money unless the row counts shares
    has_money = "$" in cell or "$" in u.span.text or (
        scale != 1.0 and q.value_kind is AnswerKind.AMOUNT and "share" not in cells(u.span.text)[0].lower())
    found = values_of(q.value_kind, f"${cell}" if has_money and "$" not in cell else cell, scale=scale,
                      question_words=q.question.split())
    if not found and q.value_kind is AnswerKind.PERCENT:  # "| R&D | $31,370 | 5% | ...": the row's change column
        found = [v.model_copy(update={"period": f"change in {head}"}) for v in percents(u.span.text)][:1]
        return tuple(found)
    return tuple(v.model_copy(update={"period": head}) for v in found)


def _label_words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9&]+", text.lower()))


def names_metric(q: QuestionAnalysis, label: str) -> bool:
    """A row's label is the asked metric's line item: one of the metric's phrases, alone or after the qualifiers a
    statement puts before a line ("Total assets", "Merchandise inventories", "Total net sales"), with any
    punctuation; "Cost of sales" is not "sales"."""
    if q.metric is None:
        return False
    words = _label_words(label).split()
    for phrase in (_label_words(x).split() for x in q.metric.metric.phrases):
        n = len(phrase)
        if n and words[-n:] == phrase and set(words[:-n]) <= LINE_QUALIFIERS:
            return True
    return False


CONTENTS_ROW = re.compile(r"^\s*\|?\s*(part\s+[ivx]+|item\s+\d+[a-z]?)\b", re.I)


def is_contents_row(u: Unit) -> bool:
    """A table-of-contents or exhibit-index row ("| Item 1B. | Unresolved Staff Comments | 49 |") names where a
    topic is, never a value: it is not an answer."""
    if u.kind is not UnitKind.ROW:
        return False
    head = u.header.text.lower() if u.header is not None else ""
    return (CONTENTS_ROW.search(u.span.text) is not None or "page" in cells(head)[-1:]
            or any(w in head for w in ("exhibit", "incorporated by reference")))
