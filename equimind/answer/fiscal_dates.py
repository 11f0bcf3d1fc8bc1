"""The dates of a fiscal year as the company's own annual report states them, for answers read from statement rows
(documents without XBRL companyfacts, such as local PDFs whose metadata only carries ``fiscal_year``).

"Fiscal 2023" is the company's fiscal 2023: Best Buy's ended January 28, 2023, NVIDIA's fiscal 2025 ended January
26, 2025. ``year_ends`` reads, for each annual report (10-K) of the company with a ``fiscal_year`` in its meta, the
end of that year: the period end its cover states (``meta["period_end_stated"]``, recorded at ingest by
``ingest/fiscal_cover.py``), else the document's ``period_end``, else — a store written before the cover was read —
the cover read now from the first characters of its text. An end more than a year from the fiscal year's number is
not that year's (a wrong ``fiscal_year``), and is not used. A year no annual report dates is left undated: nothing
is guessed.

``with_year_dates`` states them in a sentence: "for fiscal 2023" → "for fiscal 2023 (the year ended January 28,
2023)", at the first mention of each dated year, and "fiscal 2015-2017 average" → "... (the years ended December
31, 2015 to December 31, 2017)". ``with_line_date`` does the same for a reported line's sentence, whose period is the
column it was read from ("(2019)" → "(2019; fiscal 2019: the year ended February 1, 2020)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date

from equimind.answer.record import AnswerSentence
from equimind.core.documents import Document
from equimind.ingest.fiscal_cover import period_end_of, stated_period
from equimind.lexicon.forms import is_annual

_FISCAL = re.compile(r"\bfiscal (\d{4})(?:-(\d{4})(?: average)?)?\b(?P<dated> \(the years? ended)?")


def year_end_of(doc: Document) -> date | None:
    """The end of the fiscal year an annual report covers (module docstring), or None."""
    meta = doc.meta_dict()
    end = period_end_of(meta) or doc.period_end
    if end is None and doc.text:
        stated = stated_period(doc.text, doc.form)
        end = stated.end if stated is not None else None
    return end


def year_ends(docs: Iterable[Document]) -> dict[int, date]:
    """fiscal year -> its end, as the company's annual reports among ``docs`` state it (the first that does)."""
    out: dict[int, date] = {}
    for doc in docs:
        fy = doc.meta_dict().get("fiscal_year", "")
        if not fy.isdigit() or not is_annual(doc.form) or int(fy) in out:
            continue
        end = year_end_of(doc)
        if end is not None and abs(end.year - int(fy)) <= 1:
            out[int(fy)] = end
    return out


def spoken(d: date) -> str:
    """A date as an answer writes it: "January 28, 2023"."""
    return f"{d:%B} {d.day}, {d.year}"


def with_year_dates(text: str, ends: Mapping[int, date]) -> str:
    """``text`` with the dates of each dated fiscal year it names, at its first mention (module docstring)."""
    done: set[int] = set()

    def one(m: re.Match[str]) -> str:
        first, last = int(m.group(1)), int(m.group(2) or 0)
        if m.group("dated"):  # already stated
            done.update(range(first, (last or first) + 1))
            return m.group(0)
        if last:
            if first in ends and last in ends and not {first, last} <= done:
                done.update(range(first, last + 1))
                return f"{m.group(0)} (the years ended {spoken(ends[first])} to {spoken(ends[last])})"
            return m.group(0)
        if first in ends and first not in done:
            done.add(first)
            return f"{m.group(0)} (the year ended {spoken(ends[first])})"
        return m.group(0)

    return _FISCAL.sub(one, text)


def dated(sentence: AnswerSentence, ends: Mapping[int, date]) -> AnswerSentence:
    """A computed figure's sentence with its fiscal years' dates stated."""
    text = with_year_dates(sentence.text, ends)
    return sentence if text == sentence.text else sentence.model_copy(update={"text": text})


def with_line_date(sentence: AnswerSentence, year: int | None, ends: Mapping[int, date]) -> AnswerSentence:
    """A reported line's sentence ("... (2019).") with the dates of fiscal ``year`` after its column."""
    end = ends.get(year) if year is not None else None
    if end is None or spoken(end) in sentence.text or not sentence.text.endswith(")."):
        return sentence
    text = f"{sentence.text[:-2]}; fiscal {year}: the year ended {spoken(end)})."
    return sentence.model_copy(update={"text": text})
