"""Answer correctness of the answer path (``equimind.answer.Answerer``) over the golden set, per question type.

Each golden question is searched through the product's search (``EquiMindEngine.search``, once per ticker of the
question with that ticker as the filter, so each compared company gets its own passages), answered at ``AS_OF``
and judged:

* **numeric_xbrl** — correct when a figure / stated value of the answer equals the gold XBRL value (relative
  tolerance ``REL_TOL``, after unit and scale normalisation), or a cited span overlaps a gold span;
* **factual** — correct when a cited span overlaps a gold span, or a cited quote holds a gold quote's exact words
  from another filing of the company (a 10-Q repeating the 10-K's sentence), or (an XBRL answer cites no span) a
  figure equals a number of the gold answer text at that number's precision, or (a gold answer without numbers)
  the answer's own sentences hold every content word of the gold answer; each row says which rule judged it
  (``judged_by``), so the share under the span rule alone can be read off;
* **comparison** — correct when every side is answered and each side's citation / value is judged as above;
  ``both_answered`` counts the supported ones;
* **absent** — correct when refused.

A question whose search or answering raises is a row with verdict ``error`` and its ``error``
(``"<ExceptionType>: <message>"``): a miss of its type (counted in ``n`` and ``errors``, never correct), and the run
goes on.

Otherwise an answered question is *wrong* and a refused answerable question a *false refusal*. Wilson 95 % intervals
for the correct share. No question text, company or year is special-cased anywhere in the answer path.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any

from equimind.answer.record import Answer
from equimind.core.documents import FilterSpec
from equimind.evaluation.golden import GoldenQuestion, ResolvedSpan
from equimind.lexicon.amounts import SCALES
from equimind.query.parsed import QuestionParser

log = logging.getLogger(__name__)

AS_OF = date(2025, 9, 30)
ERROR = "error"  # the verdict of a question whose answering raised (its row says how: ``error``)
REL_TOL = 0.001
# a number and the scale word written after it ("$95.0 billion", "$1.8 bn"): the abbreviations too
_GOLD_NUM = re.compile(r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                       r"(?:\s*(thousand|million|billion|trillion|bn|mn)\b)?", re.I)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (round(max(0.0, mid - half), 3), round(min(1.0, mid + half), 3))


def gold_numbers(text: str) -> list[tuple[float, float]]:
    """(value, half a unit of its last digit) of each number in a gold answer ("$95.0 billion" -> (95e9, 0.05e9))."""
    out: list[tuple[float, float]] = []
    for m in _GOLD_NUM.finditer(text or ""):
        raw, word = m.group(1), (m.group(2) or "").lower()
        scale = SCALES.get(word, 1.0)
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        out.append((float(raw.replace(",", "")) * scale, 0.5 * 10 ** -decimals * scale))
    return out


def answer_numbers(ans: Answer) -> list[float]:
    nums = [f.value for s in ans.sentences for f in s.figures]
    nums += [v.number for s in ans.sentences for v in s.values if v.number is not None]
    return nums


def cites_gold(ans: Answer, spans: Sequence[Sequence[ResolvedSpan]]) -> bool:
    quotes = [q for s in ans.sentences for q in s.quotes]
    return any(q.doc_id == g.doc_id and min(q.end, g.end) > max(q.start, g.start)
               for q in quotes for item in spans for g in item)


def _flat(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").lower().split())


def quotes_gold_words(ans: Answer, q: GoldenQuestion) -> bool:
    """A cited quote holds a gold quote's exact words (case and white space aside) though from another filing of
    the company than the one the gold names: a 10-Q repeating the 10-K's sentence is the same evidence."""
    quotes = [_flat(x.text) for s in ans.sentences for x in s.quotes]
    return any(_flat(g.quote) in t for g in q.gold for t in quotes)


_WORD = re.compile(r"[a-z][a-z&'-]+")
_STOP = frozenset(["the", "a", "an", "and", "of", "in", "on", "for", "to", "its", "it", "by", "at", "as", "or",
                   "with", "from", "is", "are", "was", "were", "be", "than", "about"])


def gold_words(answer: str) -> set[str]:
    """The content words of a gold answer that states no number (empty for one with a number: ``value_matches``
    judges those), at least two of three letters or more."""
    if re.search(r"\d", answer):
        return set()
    words = {w for w in _WORD.findall(answer.lower()) if len(w) >= 3 and w not in _STOP}
    return words if len(words) >= 2 else set()


def states_gold_answer(ans: Answer, q: GoldenQuestion) -> bool:
    """The answer's own sentences (not the passages) hold every content word of the gold answer ("Family of Apps and
    Reality Labs")."""
    words = gold_words(q.answer or "")
    said = set(_WORD.findall(" ".join(s.text for s in ans.sentences).lower()))
    return bool(words) and words <= said


def judged_by(q: GoldenQuestion, ans: Answer, spans: Sequence[Sequence[ResolvedSpan]]) -> str | None:
    """Which rule finds an answered question correct, the issue's own first: ``span`` (a cited span overlaps a gold
    span), ``value``, ``same_words`` (the gold quote's words cited from another filing), ``gold_words``."""
    if cites_gold(ans, spans):
        return "span"
    if value_matches(ans, q):
        return "value"
    if quotes_gold_words(ans, q):
        return "same_words"
    if states_gold_answer(ans, q):
        return "gold_words"
    return None


def value_matches(ans: Answer, q: GoldenQuestion) -> bool:
    nums = answer_numbers(ans)
    if q.xbrl and "value" in q.xbrl:
        gold = float(q.xbrl["value"])
        return any(abs(n - gold) <= REL_TOL * abs(gold) for n in nums)
    return any(abs(n - g) <= tol for n in nums for g, tol in gold_numbers(q.answer or "") if g >= 10)


def verdict(q: GoldenQuestion, ans: Answer, spans: Sequence[Sequence[ResolvedSpan]]) -> tuple[str, str | None]:
    """(correct / wrong / refused, the rule that judged a correct answer: ``judged_by``); refused on an absent
    question is correct, judged by no rule."""
    if q.absent:
        return ("correct" if ans.refused else "wrong"), None
    if ans.refused:
        return "refused", None
    how = judged_by(q, ans, spans)
    ok = how is not None
    if q.qtype == "comparison":
        sides = {s.subject for s in ans.sentences}
        ok = ok and ans.support.value == "supported" and len(sides) >= 2
    return ("correct", how) if ok else ("wrong", None)


def judge(q: GoldenQuestion, ans: Answer, spans: Sequence[Sequence[ResolvedSpan]]) -> str:
    """correct / wrong / refused (``verdict`` without the rule)."""
    return verdict(q, ans, spans)[0]


def run_probe(engine: Any, answerer: Any, questions: Sequence[GoldenQuestion],
              spans: dict[str, list[list[ResolvedSpan]]], as_of: date = AS_OF,
              parser: QuestionParser | None = None) -> dict[str, Any]:
    """Answer and judge every question; per-type tallies plus one row per question. ``parser``: the reader of the
    questions (default: the engine's, over its store)."""
    rows: list[dict[str, Any]] = []
    parser = parser or engine.services.question_parser
    for q in questions:
        try:
            rows.append(_probe_row(engine, answerer, parser, q, spans.get(q.id, []), as_of))
        except Exception as exc:  # one question's failure is its row (verdict "error"); the run goes on
            log.exception("golden question %s raised", q.id)
            rows.append({"id": q.id, "type": q.qtype, "question": q.question, "gold": q.answer, "verdict": ERROR,
                         "judged_by": None, "support": None, "kind": None, "methods": [], "answer": "",
                         "refusal": None, "refusal_message": None, "gold_reached": False,
                         "error": f"{type(exc).__name__}: {exc}"})
    return {"by_type": tally(rows), "misses_by_cause": misses(rows), "rows": rows}


def _probe_row(engine: Any, answerer: Any, parser: QuestionParser, q: GoldenQuestion,
               spans: Sequence[Sequence[ResolvedSpan]], as_of: date) -> dict[str, Any]:
    """One golden question searched, answered and judged (``run_probe``)."""
    hits = [h for t in q.tickers for h in engine.search(q.question, FilterSpec(tickers=(t,))).hits]
    ans: Answer = answerer.answer(parser.parse(q.question, as_of, q.tickers[0]), hits)
    judged, how = verdict(q, ans, spans)
    return {"id": q.id, "type": q.qtype, "question": q.question, "gold": q.answer, "verdict": judged,
            "judged_by": how, "support": ans.support.value, "kind": ans.kind.value,
            "methods": [s.method.value for s in ans.sentences], "answer": ans.text[:400],
            "refusal": ans.refusal.reason.value if ans.refusal else None,
            "refusal_message": ans.refusal.message[:300] if ans.refusal else None,
            "gold_reached": _reached(hits, spans), "error": None}


def misses(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Why answerable questions were missed: the refusal's reason, or for a wrong answer whether the search reached a
    gold span at all (retrieval miss) or the answerer chose another sentence / row (selection miss); an answered
    absent question counts as ``answered_absent``."""
    out: dict[str, int] = {}
    for r in rows:
        if r["verdict"] == "correct":
            continue
        if r.get("error"):
            cause = f"error: {str(r['error']).split(':', 1)[0]}"
        elif r["type"] == "absent":
            cause = "answered_absent"
        elif r["verdict"] == "refused":
            cause = f"refused: {r['refusal']}" + ("" if r["gold_reached"] else " (gold not retrieved)")
        else:
            cause = "wrong: selection miss" if r["gold_reached"] else "wrong: gold not retrieved"
        out[cause] = out.get(cause, 0) + 1
    return dict(sorted(out.items()))


def _reached(hits: Sequence[Any], spans: Sequence[Sequence[ResolvedSpan]]) -> bool:
    return any(h.document.doc_id == g.doc_id and min(h.parent_end, g.end) > max(h.parent_start, g.start)
               for h in hits for item in spans for g in item)


def tally(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for qtype in [*sorted({r["type"] for r in rows}), "all_answerable"]:
        mine = [r for r in rows if r["type"] == qtype or (qtype == "all_answerable" and r["type"] != "absent")]
        n = len(mine)
        counts = {v: sum(1 for r in mine if r["verdict"] == v) for v in ("correct", "wrong", "refused")}
        out[qtype] = {"n": n, **counts, "errors": sum(1 for r in mine if r.get("error")),
                      "correct_share": round(counts["correct"] / n, 3) if n else None,
                      "correct_ci95": wilson(counts["correct"], n),
                      "false_refusal_share": (round(counts["refused"] / n, 3) if n and qtype != "absent" else None),
                      "gold_reached": sum(1 for r in mine if r["gold_reached"]),
                      "judged_by": dict(sorted(Counter(r["judged_by"] for r in mine if r.get("judged_by")).items()))}
    return out
