"""Issue 30, round 4: a paragraph said again in other words is a rewording, not new; captions are not content;
risk-factor headings printed as bullets are headings."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from equimind.changes import diff
from equimind.changes.blocks import paragraphs, risk_factors
from equimind.changes.model import ChangeKind
from tests.test_changes import BODY, FACTORS, factor, filing, run

REPO = Path(__file__).resolve().parents[1]
RISKS = "".join(factor(h, t) for h, t in FACTORS)

OLD_MDNA = ("Our International segment operating income was $103 million in fiscal 2019 compared to $91 million in "
            "fiscal 2018, driven primarily by increased gross profit and lower SG&A expenses in Canada.\n\n"
            "We opened four new distribution centers during the year to shorten delivery times to our customers.\n\n")
# the first paragraph says the same in other words and order, with new figures (too unlike the old one for the
# paragraph aligner, fuzz.ratio 0.45); the second is new
NEW_REWORDED = ("Driven primarily by lower SG&A expenses in Canada and by increased gross profit, the operating income "
                "of our International segment was $120 million in fiscal 2020 against $103 million a year earlier.")
NEW_FACT = ("In March we agreed to acquire a regional appliance repair business for cash, which we expect to close "
            "by the end of the summer subject to regulatory approval.")


def test_a_paragraph_reworded_elsewhere_is_a_rewording_citing_both_sides() -> None:
    old = filing(RISKS, mdna=OLD_MDNA)
    new = filing(RISKS, mdna=f"{NEW_REWORDED}\n\n{NEW_FACT}\n\nWe opened four new distribution centers during the "
                 "year to shorten delivery times to our customers.\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    added = [c for c in report.changes if c.kind == ChangeKind.ADDED]
    assert [c.new.quote for c in added if c.new] == [NEW_FACT]  # the new fact stays new
    assert not [c for c in report.changes if c.kind == ChangeKind.REMOVED]
    rw = [c for c in report.changes if c.kind == ChangeKind.REWORDED]
    assert len(rw) == 1 and rw[0].old is not None and rw[0].new is not None
    assert rw[0].old.quote.startswith("Our International segment") and rw[0].new.quote == NEW_REWORDED
    assert rw[0].similarity is not None and rw[0].similarity >= diff.REWORDED_MIN / 100
    assert report.citations_failed == 0
    # two paragraphs were not new (gone) after all: the new one and the old one it rewords, one change citing both
    assert next(s for s in report.sections if s.key == "mdna").reworded_elsewhere == 2


def test_with_the_check_off_the_same_paragraph_was_called_added() -> None:
    """What the check changes: the engine without it reports the reworded paragraph as new."""
    old = filing(RISKS, mdna=OLD_MDNA)
    new = filing(RISKS, mdna=f"{NEW_REWORDED}\n\n{NEW_FACT}\n\nWe opened four new distribution centers during the "
                 "year to shorten delivery times to our customers.\n\n", filed=date(2025, 2, 1))
    saved = diff.REWORDED_SHARE
    diff.REWORDED_SHARE = 2.0
    try:
        report = run(old, new)
    finally:
        diff.REWORDED_SHARE = saved
    assert NEW_REWORDED in [c.new.quote for c in report.changes if c.kind == ChangeKind.ADDED and c.new]


def test_a_caption_alone_is_not_added_or_removed() -> None:
    old = filing(RISKS, mdna="Revenue grew on higher demand from our largest customers in every region.\n\n")
    new = filing(RISKS, mdna="Gain on Sale of Businesses:\n\nRevenue grew on higher demand from our largest "
                 "customers in every region.\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    assert not [c for c in report.changes if c.kind in (ChangeKind.ADDED, ChangeKind.REMOVED)]
    assert next(s for s in report.sections if s.key == "mdna").fragments == 1


def test_headings_printed_as_bullets_are_headings_but_list_items_are_not() -> None:
    text = ("Risks Related to Our Business\n\n* The Company faces liabilities related to certain chemicals.\n\n"
            + BODY.format(t="Lawsuits were filed in several states.") + "\n\n"
            "* The Company is subject to risks related to its plan to spin off a business.\n\n"
            + BODY.format(t="The spin-off may not be completed on time.") + "\n\n"
            "Our stock price may be volatile because of:\n\n* changes in analysts' estimates;\n\n"
            "* the loss of a large customer.\n\n" + BODY.format(t="Volatility may hurt our holders.") + "\n\n")
    paras, _ = paragraphs(text, 0, len(text))
    heads = [f.heading.text if f.heading else None for f in risk_factors(paras)]
    assert heads == ["* The Company faces liabilities related to certain chemicals.",
                     "* The Company is subject to risks related to its plan to spin off a business."]


def test_a_new_bulleted_risk_factor_is_a_whole_factor_named_without_its_bullet() -> None:
    old = filing("".join(f"* {h}\n\n{BODY.format(t=t)}\n\n" for h, t in FACTORS[:2]))
    head = "The Company is subject to risks related to its plan to spin off its Health Care business."
    new = filing("".join(f"* {h}\n\n{BODY.format(t=t)}\n\n" for h, t in FACTORS[:2])
                 + f"* {head}\n\nThe separation requires a tax ruling, board approval and a registration statement, "
                 "and it could be delayed or not happen at all.\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    added = [c for c in report.changes if c.kind == ChangeKind.ADDED]
    assert len(added) == 1 and added[0].is_risk_factor and added[0].risk_factor == head and added[0].tier == 0


def test_the_engine_uses_the_values_chosen_leave_company_out() -> None:
    """The reworded check's two numbers are the benchmark's all-companies choice (benchmarks/changes_elsewhere.py),
    whose leave-company-out estimate is in the same file."""
    result = json.loads((REPO / "benchmarks" / "results" / "changes_elsewhere.json").read_text())
    assert result["chosen"] == {"REWORDED_MIN": diff.REWORDED_MIN, "REWORDED_SHARE": diff.REWORDED_SHARE}
    assert result["leave_company_out"]["kept"] > 0


def test_a_heading_over_a_subtitle_takes_the_paragraph_after_it_as_body() -> None:
    text = ("Abuse of our platforms may harm our reputation or user engagement.\n\n"
            "Advertising, professional, marketplace, and gaming platform abuses\n\n"
            + BODY.format(t="Users may post content that violates our terms.") + "\n\n"
            "Our results may vary from quarter to quarter.\n\nRisks Related to Regulation\n\n"
            "New laws could restrict how we use the data we collect.\n\n"
            + BODY.format(t="Several states passed privacy laws last year.") + "\n\n")
    paras, _ = paragraphs(text, 0, len(text))
    heads = [f.heading.text if f.heading else None for f in risk_factors(paras)]
    # the one-sentence paragraph before a group title and a heading is body text, not a heading of its own
    assert heads == ["Abuse of our platforms may harm our reputation or user engagement.",
                     "New laws could restrict how we use the data we collect."]


def test_a_stock_sentence_does_not_make_a_new_paragraph_a_rewording() -> None:
    """The new filing ends every factor with one stock sentence, the old filing one factor with another wording of
    it: that sentence, printed under several paragraphs of its own filing, counts on neither side of the reworded
    share, so the new paragraph's one new sentence makes it new."""
    stock_old = ("Any of these events could materially and adversely affect our business, financial condition, "
                 "results of operations and the market price of our common stock.")
    stock_new = ("Any of these events could adversely affect our business, our financial condition and results of "
                 "operations, and the market price of our common stock could decline.")
    fresh = "In May we received a subpoena from a state attorney general about our data retention."
    old = filing("".join(f"{h}\n\n{t}{' ' + stock_old if k == 0 else ''}\n\n" for k, (h, t) in enumerate(FACTORS)))
    new = filing("".join(f"{h}\n\n{t} {stock_new}\n\n" for h, t in FACTORS) + f"{fresh} {stock_new}\n\n",
                 filed=date(2025, 2, 1))
    report = run(old, new)
    added = [c for c in report.changes if c.kind == ChangeKind.ADDED]
    assert len(added) == 1 and added[0].new is not None and added[0].new.quote.startswith(fresh)


def test_a_rewording_found_elsewhere_is_marked_and_argues_no_side() -> None:
    """Its counterpart is the closest paragraph of the other filing, not the same paragraph aligned, so the change
    rule of the debate does not read its word counts as risk grown or softened."""
    from equimind.debate.change_claims import change_claims

    old = filing(RISKS, mdna=OLD_MDNA)
    new = filing(RISKS, mdna=f"{NEW_REWORDED}\n\n{NEW_FACT}\n\nWe opened four new distribution centers during the "
                 "year to shorten delivery times to our customers.\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    rw = [c for c in report.changes if c.kind == ChangeKind.REWORDED]
    assert len(rw) == 1 and rw[0].elsewhere
    moved = rw[0].model_copy(update={"section": "risk_factors", "negative_delta": -9})
    aligned = moved.model_copy(update={"elsewhere": False})
    assert change_claims(report.model_copy(update={"changes": [moved]})) == []
    assert change_claims(report.model_copy(update={"changes": [aligned]}))  # the same change aligned: bull
