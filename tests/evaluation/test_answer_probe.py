"""The answer probe's judgement: gold numbers at their precision, cited-span overlap, refusals."""

from __future__ import annotations

from datetime import date

from equimind.answer.record import Answer, AnswerSentence, Method, Quote, StatedValue, Support
from equimind.evaluation.answer_probe import gold_numbers, judge, misses, tally, wilson
from equimind.evaluation.golden import GoldenQuestion, GoldQuote, ResolvedSpan
from equimind.query.kinds import AnswerKind

GOLD = (GoldQuote("NVDA", "10-K", date(2025, 2, 26), "q"),)


def _answer(sentences: list[AnswerSentence], support: Support = Support.SUPPORTED) -> Answer:
    return Answer(question="q", ticker="NVDA", as_of=date(2025, 9, 30), kind=AnswerKind.AMOUNT, support=support,
                  sentences=sentences)


def test_gold_numbers_keep_their_precision() -> None:
    assert gold_numbers("$95.0 billion for 499 million shares.") == [(95e9, 0.05e9), (499e6, 0.5e6)]
    assert gold_numbers("About 164,000 full-time")[0] == (164_000, 0.5)


def test_judge_by_value_span_and_refusal() -> None:
    q = GoldenQuestion("g", "factual", "q", "$95.0 billion.", ("NVDA",), GOLD)
    near = _answer([AnswerSentence(text="t", method=Method.EXTRACTIVE,
                                   values=[StatedValue(text="$94.95 billion", number=94.95e9, unit="USD")])])
    far = _answer([AnswerSentence(text="t", method=Method.EXTRACTIVE,
                                  values=[StatedValue(text="$94.9 billion", number=94.9e9, unit="USD")])])
    assert judge(q, near, []) == "correct" and judge(q, far, []) == "wrong"
    span = [[ResolvedSpan("d", 100, 200)]]
    cited = _answer([AnswerSentence(text="t", method=Method.EXTRACTIVE, quotes=[
        Quote(doc_id="d", start=150, end=260, text="x", doc_sha256="s")])])
    assert judge(q, cited, span) == "correct"
    refused = _answer([], Support.REFUSED)
    assert judge(q, refused, span) == "refused"
    absent = GoldenQuestion("a", "absent", "q", None, ("NVDA",), ())
    assert judge(absent, refused, []) == "correct" and judge(absent, cited, []) == "wrong"


def test_tally_and_misses() -> None:
    rows = [{"type": "factual", "verdict": "correct", "gold_reached": True, "refusal": None},
            {"type": "factual", "verdict": "refused", "gold_reached": False, "refusal": "no_passages"},
            {"type": "absent", "verdict": "correct", "gold_reached": False, "refusal": "not_answerable"}]
    t = tally(rows)
    assert t["factual"]["n"] == 2 and t["factual"]["correct"] == 1 and t["factual"]["false_refusal_share"] == 0.5
    assert t["all_answerable"]["n"] == 2 and t["absent"]["false_refusal_share"] is None
    assert misses(rows) == {"refused: no_passages (gold not retrieved)": 1}
    assert wilson(0, 0) == (0.0, 0.0) and wilson(10, 10)[1] == 1.0


def test_the_gold_words_quoted_from_another_filing_of_the_company_count() -> None:
    gold = (GoldQuote("NVDA", "10-K", date(2025, 2, 26), "Headquartered in Santa Clara, California"),)
    q = GoldenQuestion("g", "factual", "Where is NVIDIA based?", "Santa Clara.", ("NVDA",), gold)
    span = [[ResolvedSpan("ten-k", 100, 140)]]

    def quoting(text: str) -> Answer:
        return _answer([AnswerSentence(text=text, method=Method.EXTRACTIVE, quotes=[
            Quote(doc_id="ten-q", start=5, end=5 + len(text), text=text, doc_sha256="s")])])

    assert judge(q, quoting("Headquartered  in Santa Clara, California, NVIDIA was incorporated"), span) == "correct"
    assert judge(q, quoting("Headquartered in California"), span) == "wrong"


def test_a_gold_answer_without_numbers_is_stated_when_every_content_word_is_said() -> None:
    q = GoldenQuestion("g", "factual", "What are its segments?", "Family of Apps and Reality Labs.", ("META",), GOLD)

    def saying(text: str) -> Answer:
        return _answer([AnswerSentence(text=text, method=Method.EXTRACTIVE)])

    assert judge(q, saying("We report two segments: Family of Apps (FoA) and Reality Labs (RL)."), []) == "correct"
    assert judge(q, saying("We report Family of Apps results."), []) == "wrong"
    number = GoldenQuestion("n", "factual", "How many?", "About 36,000.", ("NVDA",), GOLD)
    assert judge(number, saying("About thirty-six thousand."), []) == "wrong"  # numbers are judged by value only
    rows = [{"type": "factual", "verdict": "correct", "gold_reached": True, "refusal": None, "judged_by": "span"},
            {"type": "factual", "verdict": "correct", "gold_reached": True, "refusal": None,
             "judged_by": "gold_words"}]
    assert tally(rows)["factual"]["judged_by"] == {"gold_words": 1, "span": 1}
