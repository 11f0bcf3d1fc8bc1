"""A choice among candidates the ask names: "Among operations, investing, and financing activities, which brought in
the most cash flow?", "Which of cloud, search or devices had the highest revenue in fiscal 2024?", "Which was
larger in 2023, services or products revenue?".

The candidates are a coordination in the ask: two or more items separated by commas and closed by "and" / "or"
("operations, investing, and financing activities"), or two joined by "or" ("cloud or search"). An item is a run
of one to four content words (no year or period). When the last item has more than one word and the others are
single words, or its last word is a plural, that word is the head they share ("operations, investing, and
financing *activities*": operating activities, investing activities, financing activities; "North America,
International and AWS *segments*"); a row need not repeat it. The ask must also hold a superlative (most, highest,
largest ...) or, for two candidates, a comparative (more, higher, larger ...): its direction says which end wins,
turned over after a verb of an outflow ("used the most cash": the most negative value; "lost the least").
The answer reads a row per candidate in one table (``answer.choice``).

An ask that names no candidates but asks for the largest or smallest of a kind of line ("What was the largest
liability on its balance sheet in 2022?", "What is its biggest expense?": ``_MEMBER``) chooses among the lines the
statement's total of that kind sums ("Total liabilities"): ``Choice.total``. One that names the group its
candidates belong to ("Which region had the worst topline performance?", "which of its business segments had the
lowest net revenue": ``_GROUP``, the groups ASC 280 discloses by) chooses among the rows of a table by that group:
``Choice.group``, with the measure (the words after the superlative) and whether it is a change from the year
before ("fastest", "performance", "growth").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from equimind.lexicon.concepts import find_metrics
from equimind.lexicon.text import wordset

MOST = wordset("most highest largest biggest greatest best top fastest strongest more higher larger bigger greater "
               "faster stronger")
LEAST = wordset("least lowest smallest fewest worst weakest slowest less lower smaller fewer weaker slower")
COMPARATIVE = wordset("more higher larger bigger greater faster stronger less lower smaller fewer weaker slower")
# words that end an item or cannot be one: function and question words
_STOP = wordset("""a an the of in on at for to from by with among between which what who whose that this these those
is are was were be been did does do has have had its their our his her it they we you i and or but if than as
brought bring brings generated generate generates contributed contribute made make produced earned earn grew grow
saw see recorded reported delivered posted experienced performed showed accounted represented provided most least
highest lowest largest smallest biggest greatest best worst top more less higher lower larger smaller fewer
bigger greater during fiscal year quarter""")
_TOKEN = re.compile(r"[a-z0-9&'-]+|,")
_PERIOD = re.compile(r"^(?:\d+|fy\d+|q[1-4]|h[12])$")  # a year or period is never an item ("in 2023, A or B")


# verbs of an outflow: "used the most cash" is the largest outflow, the most negative value; "lost the least" the
# least negative
OUTFLOW = wordset("use uses used using spend spends spent spending lose loses lost losing burn burns burned burnt "
                  "consume consumes consumed")


def _stop(token: str, exclude: frozenset[str] = frozenset()) -> bool:
    return (token in _STOP or token in OUTFLOW or token == "," or bool(_PERIOD.match(token))
            or token.removesuffix("'s") in exclude)


@dataclass(frozen=True)
class Choice:
    """The candidates' words (each item), the head noun they share (may be empty), the winning end ("max" /
    "min") and the superlative or comparative word as written."""

    candidates: tuple[tuple[str, ...], ...]
    shared: tuple[str, ...]
    direction: str
    word: str
    total: tuple[str, ...] = ()  # no candidates named: the lines a statement total sums are ("what was the largest
    # liability": the rows that "Total liabilities" sums)
    group: str = ""  # no candidates named: the disclosure group they belong to ("which region had the lowest
    # revenue": the rows of a table by region)
    measure: tuple[str, ...] = ()  # a group's measure, the words after the superlative ("net revenue")
    growth: bool = False  # the group's measure is a change from the year before ("fastest", "worst topline
    # performance", "growth")

    def names(self) -> list[str]:
        if self.group:
            return [f"the {self.group} rows of one table"]
        if self.total:
            return [f"the lines of total {' '.join(self.total)}"]
        return [" ".join((*c, *self.shared)) if self.shared and c[-1:] != self.shared[-1:] else " ".join(c)
                for c in self.candidates]


def _item(tokens: list[str], end: int, exclude: frozenset[str]) -> tuple[int, tuple[str, ...]]:
    """The content-word run ending before ``end`` (exclusive): (its start, its words), at most four words."""
    start = end
    while start > 0 and end - start < 4 and not _stop(tokens[start - 1], exclude):
        start -= 1
    return start, tuple(tokens[start:end])


def _forward(tokens: list[str], start: int, exclude: frozenset[str]) -> tuple[str, ...]:
    end = start
    while end < len(tokens) and end - start < 4 and not _stop(tokens[end], exclude):
        end += 1
    return tuple(tokens[start:end])


# "What was the largest liability ...", "What is Acme's biggest expense ...": the superlative names the member
# itself, one of the lines a statement total sums (not a measure of something named before it, as in "which segment
# had the lowest revenue")
_MEMBER = re.compile(r"^(?:what|which)\s+(?:is|was|are|were)\s+(?:the\s+|[\w&.'-]+'s\s+){0,3}(\w+)\s+([a-z]+)\b")


def _member(ask: str, exclude: frozenset[str]) -> Choice | None:
    words = ask.lower().replace("\u2019", "'").split()
    kept = [w for w in words if w.removesuffix("'s") not in exclude]  # the company's name: "Acme Corp's"
    m = _MEMBER.match(" ".join(kept))
    if (m is None or m.group(1) not in MOST | LEAST or m.group(1) in COMPARATIVE | {"most", "least"}
            or m.group(2) in _STOP | exclude):  # "the most important risk": "most" makes an adjective superlative
        return None
    if find_metrics(m.group(2)):  # "what was the highest revenue": the metric itself, not one of its lines
        return None
    return Choice((), (), "max" if m.group(1) in MOST else "min", m.group(1), (m.group(2),))


# The groups a filing discloses figures by (ASC 280 segments and its entity-wide disclosures: geographic areas,
# products and services), as a "which" ask names them: "which region", "which of JPM's business segments", "which
# Best Buy product category".
_GROUP = re.compile(r"\bwhich\s+(?:of\s+)?(?:[\w&.'-]+\s+){0,3}?((?:segment|region|categor|division|geograph|market|"
                    r"product line|line of business|lines of business|brand|channel)\w*)\b")
# a measure that is a change: the superlative or the measure's words say so
_GROWTH = wordset("fastest slowest growth grew grow growing performance performed perform increase decline change")


def _group(ask: str, word: str, at: int, tokens: list[str], most: bool) -> Choice | None:
    m = _GROUP.search(ask.lower().replace("\u2019", "'"))
    if m is None:
        return None
    measure: list[str] = []
    for t in tokens[at + 1:]:
        if t in _STOP or t == "," or _PERIOD.match(t):
            if measure:
                break
            continue
        measure.append(t)
    growth = word in _GROWTH or bool(_GROWTH & set(measure)) or bool(_GROWTH & set(tokens[:at]))
    if not find_metrics(" ".join(measure)):  # a metric named further on, past a stop word: "best (by top line)"
        following: list[str] = []
        for t in tokens[at + 1:]:
            if t == "," or _PERIOD.match(t):
                break
            following.append(t)
        named = find_metrics(" ".join(following))
        if named:
            measure = named[0].phrase.lower().split()
    return Choice((), (), "max" if most else "min", word, group=m.group(1), measure=tuple(measure), growth=growth)


def find_choice(ask: str, exclude: frozenset[str] = frozenset()) -> Choice | None:
    """The choice the ask names (module docstring), or None; ``exclude``: the company's name words, never part of
    an item ("Best Buy's operating, investing or financing activities")."""
    tokens = _TOKEN.findall(ask.lower().replace("\u2019", "'"))
    printed = re.findall(_TOKEN.pattern, ask.replace("\u2019", "'"), re.I)  # the same tokens, as written
    # a superlative capitalised inside the sentence ("Which Best Buy product category ..."), or a word of the
    # company's name run ("best buy"), is the name's word, not the choice's end ("... performed the best")
    def named(k: int) -> bool:
        if k > 0 and printed[k][:1].isupper():
            return True
        beside = tokens[max(0, k - 1):k] + tokens[k + 1:k + 2]
        return tokens[k] in exclude and any(b in exclude for b in beside)

    at = next((k for k, t in enumerate(tokens) if t in MOST | LEAST and not named(k)), None)
    if at is None:
        return None
    word = tokens[at]
    outflow = bool(OUTFLOW & set(tokens[max(0, at - 3):at]))
    most = (word in MOST) != outflow
    for i, t in enumerate(tokens):
        if t not in ("and", "or"):
            continue
        last = _forward(tokens, i + 1, exclude)
        if not last:
            continue
        j = i - 1 if i > 0 and tokens[i - 1] == "," else i  # "investing, and financing": the serial comma
        items = [last]
        while True:
            start, item = _item(tokens, j, exclude)
            if not item:
                break
            items.insert(0, item)
            if start == 0 or tokens[start - 1] != ",":
                break
            j = start - 1
        commas = len(items) >= 3 or (len(items) == 2 and t == "or")
        if len(items) < 2 or not commas:
            continue
        if len(items) == 2 and word not in COMPARATIVE and t != "or":
            continue
        shared: tuple[str, ...] = ()
        if len(last) > 1 and (all(len(x) == 1 for x in items[:-1]) or last[-1].endswith("s")):
            shared = last[-1:]
            items[-1] = last[:-1]
        return Choice(tuple(items), shared, "max" if most else "min", word)
    return _member(ask, exclude) or _group(ask, word, at, tokens, most)
