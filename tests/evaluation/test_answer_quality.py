"""FinanceBench answer judging (equimind.evaluation.answer_quality): numbers at every scale, gold pages through the
document's page spans, tallies per type with computed answers apart. Pure functions over synthetic records."""

from __future__ import annotations

from datetime import date

from equimind.answer.record import Answer, AnswerSentence, Method, PassageRead, Quote, Refusal, RefusalReason, Support
from equimind.core.documents import Document, Origin, PageSpan, Source, sha256_hex
from equimind.evaluation.answer_probe import gold_numbers
from equimind.evaluation.answer_quality import _subjects, fb_tally, judge_fb, number_found, numbers_in
from equimind.query.analysis import Subject
from equimind.query.kinds import AnswerKind

TEXT = ("Cash flows\nPurchases of property, plant and equipment (PP&E) (1,577) (1,373)\n"
        "Page two text about dividends of $3,193 million.")
DOC = Document(id="d1", source_key="local:3M_2018_10K.pdf", ticker=None, cik=None, company="3M",
               source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=None, period_end=None, url=None,
               title="3M 10-K", text=TEXT, pages=(PageSpan(59, 0, 70), PageSpan(60, 70, len(TEXT))),
               meta=(("doc_name", "3M_2018_10K"),))


def _answer(quote_start: int, quote_end: int, refused: bool = False) -> Answer:
    if refused:
        return Answer(question="q", ticker="3M", as_of=date(2100, 1, 1), kind=AnswerKind.AMOUNT,
                      support=Support.REFUSED, refusal=Refusal(reason=RefusalReason.NO_PASSAGES, message="none"))
    quote = Quote(doc_id="d1", start=quote_start, end=quote_end, text=TEXT[quote_start:quote_end],
                  doc_sha256=sha256_hex(TEXT))
    sentence = AnswerSentence(text=quote.text, method=Method.EXTRACTIVE, quotes=[quote])
    return Answer(question="q", ticker="3M", as_of=date(2100, 1, 1), kind=AnswerKind.AMOUNT,
                  support=Support.SUPPORTED, sentences=[sentence],
                  passages_searched=[PassageRead(doc_id="d1", start=0, end=len(TEXT), score=1.0)])


def _row(answer: str, page: int = 59, reasoning: str | None = "Information extraction") -> dict[str, object]:
    return {"financebench_id": "x", "question_type": "metrics-generated", "question_reasoning": reasoning,
            "answer": answer, "evidence": [{"doc_name": "3M_2018_10K", "evidence_page_num": page}]}


def test_numbers_are_read_without_dollar_signs_commas_or_parentheses() -> None:
    assert numbers_in("(1,577) and $ 95.0 billion, 12.5%") == [1577.0, 95.0, 12.5]


def test_a_gold_number_is_found_at_any_scale_at_its_stated_precision() -> None:
    (gold,) = gold_numbers("$1577.00")
    assert number_found(gold, [1577.0]) and not number_found(gold, [1578.0])
    (billions,) = gold_numbers("$95.0 billion")
    assert number_found(billions, [95_000.0])  # a "(In millions)" table
    assert number_found(billions, [95.0]) and not number_found(billions, [96.0])
    # the abbreviated scale words a gold answer writes: "$1.8 bn" is 1.8 billion, found as $1,824 million
    (bn,) = gold_numbers("$1.8 bn")
    assert bn == (1.8e9, 0.05e9) and number_found(bn, [1824.0]) and not number_found(bn, [1900.0])
    assert [v for v, _ in gold_numbers("12 mn units, 7 months, 10K, 2.5x")] == [12e6, 7.0, 10.0, 2.5]


def test_judge_on_gold_page_and_numbers() -> None:
    start = TEXT.index("Purchases")
    row = judge_fb(_row("$1577.00"), _answer(start, start + 60), {"d1": DOC})
    assert row["on_gold_page"] and row["numbers_found"] and not row["refused"]
    wrong_page = judge_fb(_row("$1577.00", page=61), _answer(start, start + 60), {"d1": DOC})
    assert not wrong_page["on_gold_page"] and wrong_page["numbers_found"]
    later = TEXT.index("Page two")
    other = judge_fb(_row("$9999.00"), _answer(later, len(TEXT)), {"d1": DOC})
    assert not other["on_gold_page"] and not other["numbers_found"]
    refused = judge_fb(_row("$1577.00"), _answer(0, 0, refused=True), {"d1": DOC})
    assert refused["refused"] and not refused["numbers_found"] and not refused["on_gold_page"]


def test_tally_reports_computed_answers_apart_and_counts_numbers_only_where_gold_has_one() -> None:
    start = TEXT.index("Purchases")
    rows = [judge_fb(_row("$1577.00"), _answer(start, start + 60), {"d1": DOC}),
            judge_fb(_row("0.66", reasoning="Numerical reasoning"), _answer(start, start + 60), {"d1": DOC}),
            judge_fb(_row("Yes, it is capital-intensive"), _answer(0, 0, refused=True), {"d1": DOC})]
    t = fb_tally(rows)
    assert t["all"]["n"] == 3 and t["all"]["refused"]["k"] == 1
    assert t["all"]["numbers_found"]["n"] == 2 and t["all"]["numbers_found"]["k"] == 1
    assert t["computed"]["n"] == 1 and t["extracted"]["n"] == 2
    assert t["all"]["answer_bearing"]["k"] == 2  # on a gold page, or every gold number found


def test_the_subject_is_the_company_the_question_names_never_the_gold_document() -> None:
    other = Document(**{**DOC.__dict__, "id": "d2", "company": "Adobe", "title": "Adobe 10-K"})
    subject, others = _subjects([DOC, other], ("3M",))  # type: ignore[misc]
    assert subject == Subject("3M", frozenset({"3m"}), ("d1",)) and [o.key for o in others] == ["Adobe"]
    assert _subjects([DOC, other], ()) is None
