"""Values of an asked type inside a span of filing text: amounts (with unit and scale), counts, percents, dates and
proper names. (The instruction-like text that must never support an answer: ``lexicon.injection.is_instruction``.)

Pure functions over strings. Numbers are normalised the way a reader does: "$95.0 billion" -> 95.0e9, "$115,186" in a
table "(In millions)" -> 115.186e9, "164,000" -> 164000, "19%" -> 19.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from equimind.answer.record import StatedValue
from equimind.lexicon.amounts import SCALES
from equimind.lexicon.calendar import MONTHS
from equimind.lexicon.text import wordset
from equimind.query.kinds import AnswerKind

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s*(?:thousand|million|billion|trillion|mn|bn)s?\b)?"
MONEY = re.compile(rf"\$\s?\(?({_NUM})\)?({_SCALE})", re.I)
PERCENT = re.compile(rf"({_NUM})\s?(?:%|percent\b|percentage points?\b)", re.I)
COUNT = re.compile(rf"(?<![\$\d.,])(?<!\$\s)({_NUM})({_SCALE})(?!\s?%|\s?percent|[\d,(])", re.I)  # "$ 5.6": money
_MON = "|".join(MONTHS)
DATE = re.compile(rf"\b(?:(?:{_MON})\s+(?:\d{{1,2}},?\s+)?(?:19|20)\d{{2}}|(?:19|20)\d{{2}})\b", re.I)
# "(In millions)", "$ in millions", "(Dollars in millions)", and a parenthesis that opens with the unit: "(Millions,
# except per share amounts)"
TABLE_SCALE = re.compile(r"\bin\s+(thousands|millions|billions)\b|\(\s*(thousands|millions|billions)\b", re.I)


REFERENCE = re.compile(r"(?i)\b(?:note|item|part|section|exhibit|page|rule|schedule|level|tier|phase)\s*$")
YEAR = re.compile(r"^(?:19|20)\d{2}$")
_CAP = re.compile(r"(?<![\w'])([A-Z][a-zA-Z0-9&\-]+(?:\s+[A-Z][a-zA-Z0-9&\-]+)*)")
GENERIC_CAPS = wordset("""the we our us it its this that these those company company's item part note notes
table total year years fiscal quarter in on of for and or a an as at by to from with under during see refer
consolidated statements financial unaudited form annual report sec inc corporation corp llc ltd plc group
i ii iii iv v vi vii million billion thousand percent""")

def _number(raw: str) -> float:
    return float(raw.replace(",", ""))


def _scaled(raw: str, scale_word: str, table_scale: float) -> float:
    word = scale_word.strip().lower()
    if word:
        return _number(raw) * SCALES.get(word, SCALES.get(word + "s", 1.0))
    return _number(raw) * table_scale


def table_scale(text: str) -> float:
    """The scale a table states in its header or caption ("(In millions)"), 1 when none."""
    m = TABLE_SCALE.search(text)
    return SCALES[(m.group(1) or m.group(2)).lower()] if m else 1.0


def amounts(text: str, scale: float = 1.0) -> list[StatedValue]:
    """Money amounts: "$95.0 billion", "$ 115,186" (times ``scale`` when the text states none)."""
    return [StatedValue(text=m.group(0).strip(), number=_scaled(m.group(1), m.group(2), scale), unit="USD")
            for m in MONEY.finditer(text)]


def percents(text: str) -> list[StatedValue]:
    return [StatedValue(text=m.group(0), number=_number(m.group(1)), unit="%") for m in PERCENT.finditer(text)]


def counts(text: str, scale: float = 1.0, counted: str = "") -> list[StatedValue]:
    """Counts: a number with thousands separators or a scale word, or a plain number of 2+ digits that is not a
    year, not money, not a percent and not part of a date; with ``counted`` (the word a "how many" ask counts in,
    "GWh" in "how many GWh"), also a decimal written right before that word ("31.4 GWh")."""
    out: list[StatedValue] = []
    dated = [(m.start(), m.end()) for m in DATE.finditer(text)]
    for m in COUNT.finditer(text):
        raw, word = m.group(1), m.group(2)
        in_unit = bool(counted) and text[m.end():m.end() + len(counted) + 1].strip().lower() == counted.lower()
        if any(a <= m.start() < b for a, b in dated) or YEAR.match(raw) or (
                "." in raw and not word.strip() and not in_unit):
            continue
        if "," not in raw and not word.strip() and (len(raw) < 2 or REFERENCE.search(text[:m.start()])):
            continue
        out.append(StatedValue(text=m.group(0).strip(), number=_scaled(raw, word, scale), unit="count"))
    return out


def dates(text: str) -> list[StatedValue]:
    return [StatedValue(text=m.group(0), unit="date") for m in DATE.finditer(text)]


def names(text: str, exclude: Iterable[str]) -> list[StatedValue]:
    """Capitalised words inside a sentence (not its first word) that the question does not already say."""
    known = {w.lower() for w in exclude}
    out: list[StatedValue] = []
    for m in _CAP.finditer(text):
        if m.start() == 0 or text[:m.start()].rstrip().endswith((".", "|", ":")):
            continue
        words = [w for w in m.group(1).split() if w.lower().strip("'s") not in known | GENERIC_CAPS]
        words = [w for w in words if w.lower() not in MONTHS]
        if words:
            out.append(StatedValue(text=" ".join(words), unit="name"))
    return out


def values_of(kind: AnswerKind, text: str, *, scale: float = 1.0, question_words: Iterable[str] = ()) -> list[
        StatedValue]:
    """The values of ``kind`` in ``text`` (text / yes-no asks need none: an empty list means 'no requirement')."""
    asked = " ".join(question_words).lower()
    if kind is AnswerKind.AMOUNT:
        found = amounts(text, scale)
    elif kind is AnswerKind.COUNT:
        found = counts(text, scale, counted_word(question_words))
    elif kind is AnswerKind.PERCENT:
        found = percents(text)
    elif kind is AnswerKind.DATE:
        found = dates(text)
    elif kind is AnswerKind.NAME:
        found = names(text, question_words)
    else:
        return []
    return [v for v in found if v.text.lower() not in asked or kind is AnswerKind.NAME]


def counted_word(question_words: Iterable[str]) -> str:
    """The word a "how many" ask counts in ("GWh" in "How many GWh of storage ..."), "" when there is none."""
    words = [w.strip("?,.;:()").lower() for w in question_words]
    for i in range(len(words) - 2):
        if words[i] == "how" and words[i + 1] == "many":
            return words[i + 2]
    return ""


# A value written right after a verb of change is the change, not the level ("revenues increased $10.1 billion"),
# and so is one after "by" when a verb of change opens the clause ("reduced our 2024 overall operating profit by
# approximately $17.73 billion": the verb's object between them, no punctuation).
_APPROX = r"(?:\s+(?:approximately|about|nearly|almost|over|roughly))?\s*$"
CHANGE_BEFORE = re.compile(r"(?i)\b(?:increased|decreased|grew|rose|fell|declined|dropped|climbed|improved|"
                           r"(?:was|were) (?:up|down))(?:\s+(?:by|of))?" + _APPROX + "|"
                           r"(?i:\b(?:increased|decreased|reduced|lowered|raised|improved)\b[^.,;:()$%]{1,60}\bby)"
                           + _APPROX)


def is_change(text: str, value: StatedValue) -> bool:
    """``value`` is written in ``text`` right after a verb of change: a year-over-year change, not a level."""
    i = text.find(value.text)
    return i > 0 and CHANGE_BEFORE.search(text[max(0, i - 60):i]) is not None


def needs_value(kind: AnswerKind) -> bool:
    return kind in (AnswerKind.AMOUNT, AnswerKind.COUNT, AnswerKind.PERCENT, AnswerKind.DATE, AnswerKind.NAME)


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (scale words applied), for checking that a quote contains an answer's
    values."""
    out = [v.number for v in amounts(text) if v.number is not None]
    out += [_number(m.group(1)) for m in re.finditer(rf"(?<![\d.,])({_NUM})", text)]
    return out


def in_asked_scale(number: float, asked: float) -> str:
    """``number`` (USD) in the unit the question asked ("$382 million" for 381,603 thousand asked in millions):
    whole units from 100 up, else two decimals ("$8.74 billion")."""
    v = number / asked
    digits = 0 if abs(v) >= 100 else 2
    sign = "-" if v < 0 else ""
    return f"{sign}${abs(v):,.{digits}f} {scale_word(asked)}"


def scale_word(scale: float) -> str:
    """1e3 -> "thousand", 1e6 -> "million", 1e9 -> "billion"; "" for any other scale."""
    return {1e3: "thousand", 1e6: "million", 1e9: "billion"}.get(scale, "")
