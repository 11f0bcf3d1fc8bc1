"""Query shaping: retrieve with the ask, not the instructions around it.

A question often comes wrapped in instructions to whoever answers it ("Assume that you are an analyst.", "Answer in USD
millions.", "If X is not a useful metric, then state that and explain why."). Those words are about the answer's form,
not about the page that holds it, yet they weigh in both retrieval legs. The rules, applied to the question's own text
(nothing is learned from any benchmark):

1. Split into sentences (``.``, ``?``, ``!`` followed by white space).
2. When at least one sentence is a question (ends with ``?``), keep the question sentences and drop the others; a
   question whose ask follows a colon and opens with a question word ("Answer the following question using the
   balance sheet: what is ...?") keeps the part after the last colon.
3. Every dropped part keeps the name of a primary financial statement it points to (balance sheet, income statement,
   statement of operations / earnings / comprehensive income / cash flows / shareholders' equity, cash flow
   statement): the closed set of statements US GAAP requires (ASC 205-10-45), so "relying on the cash flow statement"
   still steers retrieval to that statement.
4. A text with no question sentence (keywords, a statement of interest) is searched as given.
5. A reported metric the text names (the answerer's concept map, ``equimind/lexicon/concepts.py``: "bottom-line
   profit", "capex", "earn") adds the words of the name of its first XBRL concept ("net income loss", "payments to
   acquire property plant and equipment"): the wording line items are printed in, which a paraphrase does not share.
   Statement names are not metrics ("cash flow statement" does not name "cash").
6. A ratio the text names (``formulas.RATIOS``: gross / operating / net margin, effective tax rate, capital
   intensity) adds the words of the line items it is computed from ("operating margin" -> "operating income loss",
   "revenues"), since the page that answers a margin question is the statement or table of those lines; the ratio's
   own words are then not read as a metric ("profit margin" is not "profit").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from equimind.lexicon.concepts import concept_name_words, find_metrics
from equimind.lexicon.formulas import find_ratios
from equimind.query.analysis import STATEMENT_NAME

_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_QUESTION_START = re.compile(r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|has|have|"
                             r"had|can|could|will|would|should)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ShapedQuery:
    """The text retrieval searches with, and the question it came from."""

    text: str
    original: str
    terms: tuple[str, ...] = ()  # concept words for the BM25 leg (rule 5)

    @property
    def changed(self) -> bool:
        return self.text != self.original or bool(self.terms)


def _ask(sentence: str) -> tuple[str, str]:
    """(the ask, the preamble before its last colon) of a question sentence."""
    head, sep, tail = sentence.rpartition(":")
    if sep and _QUESTION_START.match(tail.strip()) and len(tail.split()) >= 3:
        return tail.strip(), head
    return sentence, ""


def concept_words(text: str) -> list[str]:
    """The line-item words of each ratio ``text`` names (rule 6) and the words of the first XBRL concept name of each
    metric it names (rule 5), in text order, each once; a phrase of words all already in ``text`` is left out."""
    have = set(re.findall(r"\w+", text.lower()))
    rest = STATEMENT_NAME.sub(lambda m: " " * len(m.group(0)), text)
    found: list[tuple[int, str]] = []
    for ratio, start, end in find_ratios(rest):
        found += [(start, item) for item in ratio.line_items]
        rest = rest[:start] + " " * (end - start) + rest[end:]
    for match in find_metrics(rest):
        found.append((match.start, concept_name_words(match.metric.concepts[0])))
    out: list[str] = []
    for _, words in sorted(found, key=lambda f: f[0]):
        if words not in out and not set(words.split()) <= have:
            out.append(words)
    return out


def _with_concepts(text: str, question: str) -> ShapedQuery:
    return ShapedQuery(text, question, tuple(concept_words(text)))


def shape_query(question: str) -> ShapedQuery:
    """The ask sentence(s) of ``question`` plus the statement names its instructions mention and the concept words
    of the metrics it names (module docstring)."""
    text = " ".join(question.split())
    sentences = [s for s in _SENTENCE.split(text) if s]
    if not any(s.endswith("?") for s in sentences):
        return _with_concepts(text, question)
    kept: list[str] = []
    dropped: list[str] = []
    for s in sentences:
        if s.endswith("?"):
            ask, preamble = _ask(s)
            kept.append(ask)
            dropped.append(preamble)
        else:
            dropped.append(s)
    asked = " ".join(kept).lower()
    names = [m.group(0) for d in dropped for m in STATEMENT_NAME.finditer(d)]
    extra = [n for n in dict.fromkeys(n.lower() for n in names) if n not in asked]
    return _with_concepts(" ".join([*kept, *extra]), question)
