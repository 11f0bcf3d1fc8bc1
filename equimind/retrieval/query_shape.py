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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_QUESTION_START = re.compile(r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|has|have|"
                             r"had|can|could|will|would|should)\b", re.IGNORECASE)
_STATEMENT = re.compile(
    r"\b(?:(?:consolidated\s+)?balance\s+sheets?|(?:consolidated\s+)?income\s+statements?|"
    r"(?:consolidated\s+)?statements?\s+of\s+(?:consolidated\s+)?(?:financial\s+position|operations|"
    r"(?:comprehensive\s+)?income|(?:comprehensive\s+)?earnings|cash\s+flows?|"
    r"(?:changes\s+in\s+)?(?:stockholders|shareholders)['\u2019]?\s+equity)|cash\s+flows?\s+statements?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ShapedQuery:
    """The text retrieval searches with, and the question it came from."""

    text: str
    original: str

    @property
    def changed(self) -> bool:
        return self.text != self.original


def _ask(sentence: str) -> tuple[str, str]:
    """(the ask, the preamble before its last colon) of a question sentence."""
    head, sep, tail = sentence.rpartition(":")
    if sep and _QUESTION_START.match(tail.strip()) and len(tail.split()) >= 3:
        return tail.strip(), head
    return sentence, ""


def shape_query(question: str) -> ShapedQuery:
    """The ask sentence(s) of ``question`` plus the statement names its instructions mention (module docstring)."""
    text = " ".join(question.split())
    sentences = [s for s in _SENTENCE.split(text) if s]
    if not any(s.endswith("?") for s in sentences):
        return ShapedQuery(text, question)
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
    names = [m.group(0) for d in dropped for m in _STATEMENT.finditer(d)]
    extra = [n for n in dict.fromkeys(n.lower() for n in names) if n not in asked]
    return ShapedQuery(" ".join([*kept, *extra]), question)
