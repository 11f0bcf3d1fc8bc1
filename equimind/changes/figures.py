"""The figures of a sentence, and whether two sentences differ only in them.

A figure is a number as a filing prints it: ``$4.5 billion``, ``15%``, ``1,234``, ``12 months``, ``0.5``. Its value
carries the scale word (million, billion, thousand, trillion); a percent keeps its printed value with unit ``%``.
A four-digit number from 1900 to 2099 with no currency sign, separator, decimals or unit is a **year**.

Two sentences *differ only in figures* when their templates (the normalised sentence with every figure replaced by
``#`` and every year by ``Y``) are equal. Then each position whose figure differs is a ``FigureDelta``; when only
years differ (a date rolled forward: "fiscal year 2025" -> "fiscal year 2026") the sentence is *dates only*.
The day of a date ("June 9") counts as part of the date, like a year. A number that names rather than measures
("Note 9", "Item 7A", "Level 2", a "(2)" or "4." marker opening the sentence) is not a figure and stays in the
template as printed. Only prose sentences (ending in a full stop, five words or more) can have changed figures: a
PDF prints table rows as text lines, and a row is not a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from equimind.changes.blocks import norm
from equimind.changes.model import FigureDelta
from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS

_NUM = re.compile(
    r"(?P<cur>[$€£]\s?)?(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<unit>\s?(?:%|percent\b|per cent\b|trillion\b|billion\b|million\b|thousand\b|bps\b|basis points\b))?",
    re.IGNORECASE)
_REF_BEFORE = re.compile(r"\b(?:note|notes|item|items|part|section|rule|page|pages|level|tier|phase|schedule|"
                         r"exhibit|article|chapter|form|step|stage|class|series|no\.)\s*$", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z]{2,}")
PROSE_MIN_WORDS = 5
# a day of a date ("June 9, 2015"): part of the date, which a rolled-forward filing changes as it changes years
_MONTH_BEFORE = re.compile(r"\b(?:" + "|".join((*MONTHS, *MONTH_ABBREVIATIONS)) + r")\.?\s*$", re.IGNORECASE)
_MARKER = re.compile(r"\(?\d{1,2}[.)]\s")
_SCALE = {"trillion": 1e12, "billion": 1e9, "million": 1e6, "thousand": 1e3}


@dataclass(frozen=True)
class Figure:
    text: str
    value: float
    unit: str  # "%", "$", "bps", "" (a count or a plain number)
    year: bool


def _is_reference(sentence: str, m: re.Match[str]) -> bool:
    """A number that names something rather than measures it: "Note 9", "Item 7A", "Level 2", a footnote or list
    marker opening the sentence ("(2)", "4.")."""
    if _REF_BEFORE.search(sentence, 0, m.start()):
        return True
    head = sentence[:m.start()].strip()
    if head or m.group("cur") or m.group("unit"):
        return False
    return _MARKER.match(sentence[m.start():]) is not None


def _matches(sentence: str) -> list[tuple[re.Match[str], Figure]]:
    out = []
    for m in _NUM.finditer(sentence):
        if _is_reference(sentence, m) or (m.start() and sentence[m.start() - 1] == "("
                                          and sentence[:m.start() - 1].strip() == ""):
            continue
        num = m.group("num")
        try:
            value = float(num.replace(",", ""))
        except ValueError:  # the pattern only matches digits; kept total all the same
            continue
        unit_word = (m.group("unit") or "").strip().lower()
        unit = "$" if m.group("cur") else ""
        if unit_word in _SCALE:
            value *= _SCALE[unit_word]
        elif unit_word in ("%", "percent", "per cent"):
            unit = "%"
        elif unit_word in ("bps", "basis points"):
            unit = "bps"
        plain = not m.group("cur") and not unit_word and "," not in num and "." not in num
        year = plain and ((len(num) == 4 and 1900 <= value <= 2099) or (
            len(num) <= 2 and _MONTH_BEFORE.search(sentence, 0, m.start()) is not None))
        out.append((m, Figure(m.group().strip(), value, unit, year)))
    return out


def figures(sentence: str) -> list[Figure]:
    """The figures of ``sentence`` in order (reference numbers left out)."""
    return [f for _, f in _matches(sentence)]


def template(sentence: str) -> str:
    """The sentence with each figure replaced by ``#`` and each year by ``Y`` (a reference number stays as
    printed, so "Note 9" against "Note 4" is a rewording, not a changed figure)."""
    found = {(f.start, f.end): f for f in _located(sentence)}
    parts = []
    pos = 0
    for m in _NUM.finditer(sentence):
        f = found.get((m.start(), m.end()))
        if f is None:
            continue
        parts.append(sentence[pos:m.start()])
        parts.append("Y" if f.figure.year else "#")
        pos = m.end()
    parts.append(sentence[pos:])
    return norm("".join(parts))


def is_prose(sentence: str) -> bool:
    """A sentence, not a table row a PDF printed as text: ends in a full stop (or ! ?) and has five words."""
    t = sentence.strip().rstrip("\"'”’)]")
    return t.endswith((".", "!", "?")) and len(_WORDS.findall(sentence)) >= PROSE_MIN_WORDS


@dataclass(frozen=True)
class _Located:
    start: int
    end: int
    figure: Figure


def _located(sentence: str) -> list[_Located]:
    return [_Located(m.start(), m.end(), f) for m, f in _matches(sentence)]


def figure_deltas(old: str, new: str) -> tuple[list[FigureDelta], bool] | None:
    """None when the sentences differ in more than figures; else (the changed non-year figures, years changed)."""
    if not (is_prose(old) and is_prose(new)) or template(old) != template(new):
        return None
    a, b = figures(old), figures(new)
    if len(a) != len(b):
        return None
    deltas = []
    years = False
    for x, y in zip(a, b, strict=True):
        if x.value == y.value:  # "1.0%" against "1%" is the same figure
            continue
        if x.year or y.year:
            years = True
            continue
        rel = abs(y.value - x.value) / abs(x.value) if x.value else None
        deltas.append(FigureDelta(old_text=x.text, new_text=y.text, old_value=x.value, new_value=y.value,
                                  unit=y.unit or x.unit, relative=None if rel is None else round(rel, 4)))
    return deltas, years
