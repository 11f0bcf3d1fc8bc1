"""What a computed-figure ask wants beyond the figure: the decimals it asks to round to ("round to two decimal
places"), whether it wants each year and the change ("How much has the effective tax rate changed between FY2021
and FY2022?") and the direction a yes / no ask asks about ("Has X increased its debt"). English ask grammar,
hand-written."""

from __future__ import annotations

import re

from equimind.lexicon.formulas import FormulaMatch

DECIMALS = re.compile(r"\bround(?:ed)?\s+(?:\w+\s+){0,3}?to\s+(?:the\s+nearest\s+)?(zero|one|two|three|0|1|2|3)\s+"
                      r"decimal", re.I)
_WORD_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3}


def asked_decimals(question: str) -> int | None:
    m = DECIMALS.search(question)
    if m is None:
        return None
    raw = m.group(1).lower()
    return int(raw) if raw.isdigit() else _WORD_DIGITS[raw]


# --- the computation -----------------------------------------------------------------------------------------------
CHANGE_ASK = re.compile(r"\b(?:chang\w*|compar\w*|versus|vs\.?|differ\w*|improv\w*|deteriorat\w*|"
                        r"declin\w*|increas\w*|decreas\w*|trend\w*)\b", re.I)


def asks_each_year(ask: str, match: FormulaMatch) -> bool:
    """The ask wants the figure for each year it names and the change ("How much has the effective tax rate
    changed between FY2021 and FY2022?"), not one year's figure: a change word, and a formula that is not itself a
    change or an average over years (revenue growth, return on average assets)."""
    return CHANGE_ASK.search(ask) is not None and all(off == 0 for _, off in match.formula.lines)




UP = re.compile(r"\b(?:increas\w*|improv\w*|grow\w*|grew|rise|rising|rose|risen|higher|expand\w*|gain\w*)\b", re.I)
DOWN = re.compile(r"\b(?:decreas\w*|declin\w*|drop\w*|fall|falling|fell|fallen|lower|shrink\w*|shrank|"
                  r"deteriorat\w*|reduc\w*|contract\w*)\b", re.I)


def trend_word(ask: str) -> str | None:
    """"up" / "down": the direction a yes / no ask asks about ("Has X increased its debt", "an improving gross
    margin profile", "Was there any drop in ..."), the first such word; None when it names none."""
    up, down = UP.search(ask), DOWN.search(ask)
    if up and (not down or up.start() < down.start()):
        return "up"
    return "down" if down else None
