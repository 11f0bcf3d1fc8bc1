"""``equimind changes``: alignment, classification, ranking and citations of filing-to-filing changes.

Synthetic filings pin each rule (a new / dropped risk factor, a changed figure, a rolled date, a moved or split
paragraph, a 10-Q's partial risk-factor list); the recorded NVDA 10-K / 10-Q pair checks the whole path on real
text; a property test checks the engine is total on arbitrary text.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from equimind.changes.blocks import paragraphs, risk_factors, section_texts
from equimind.changes.diff import diff_documents
from equimind.changes.figures import figure_deltas, figures
from equimind.changes.model import ChangeKind
from equimind.changes.report import compare
from equimind.changes.select import Candidate, choose, periodic
from equimind.core.documents import Document, Origin, Section, Source
from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.search import DocumentRef

# every factor's body ends with the same stock sentence, as real risk factors do
BODY = "{t} This risk could harm our business and results of operations in ways we cannot predict."


def factor(head: str, topic: str) -> str:
    return f"{head}\n\n{BODY.format(t=topic)}\n\n"


def filing(risk: str, *, form: str = "10-K", mdna: str = "", filed: date = date(2024, 2, 1),
           ticker: str = "ACME") -> Document:
    parts = [("Cover", "ACME Corp annual report.\n\n"), ("Item 1A. Risk Factors", "Item 1A. Risk Factors\n\n" + risk)]
    if mdna:
        name = "Part I, Item 2. Management's Discussion" if form == "10-Q" else "Item 7. Management's Discussion"
        parts.append((name, f"{name}\n\n" + mdna))
    if form == "10-Q":
        parts[1] = ("Part II, Item 1A. Risk Factors", "Part II, Item 1A. Risk Factors\n\n" + risk)
    text, sections, pos = "", [], 0
    for name, body in parts:
        sections.append(Section(name, pos, pos + len(body)))
        text += body
        pos += len(body)
    return Document(id=Document.make_id(f"t:{form}:{filed}", text), source_key=f"t:{form}:{filed}", ticker=ticker,
                    cik=None, company="ACME Corp", source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form=form,
                    filed_at=filed, period_end=None, url=None, title=f"ACME {form} {filed}", text=text,
                    sections=tuple(sections))


class Lookup:
    def __init__(self, *docs: Document) -> None:
        self.docs = {d.id: d.text for d in docs}

    def get_document_text(self, doc_id: str) -> str:
        return self.docs[doc_id]


FACTORS = [("Competition could reduce our market share and our margins.",
            "Our markets are competitive, and several rivals are larger than we are and can cut prices for longer."),
           ("Supply shortages could delay our shipments to customers.",
            "We rely on a few suppliers for our sensors, and two of them build their parts in a single plant each."),
           ("Our international operations expose us to currency risk.",
            "Most of our revenue is earned abroad in euros and yen, while most of our costs are paid in dollars.")]


def run(old: Document, new: Document, **kw: Any):  # type: ignore[no-untyped-def]
    return compare(old, new, lexicon=None, text_lookup=Lookup(old, new), **kw)


def test_new_and_dropped_risk_factors_are_whole_factors_cited_on_their_side() -> None:
    old = filing("".join(factor(h, t) for h, t in FACTORS[:2]))
    new_head = "Climate regulation may increase the cost of operating our data centers."
    body = ("Several states passed rules on the water and power our facilities draw. Compliance will require new "
            "equipment, and the cost of that equipment is not yet known to us.")
    new = filing(factor(FACTORS[0][0], FACTORS[0][1]) + f"{new_head}\n\n{body}\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    added = [c for c in report.changes if c.kind == ChangeKind.ADDED]
    removed = [c for c in report.changes if c.kind == ChangeKind.REMOVED]
    assert [c.risk_factor for c in added] == [new_head] and added[0].is_risk_factor
    assert [c.risk_factor for c in removed] == [FACTORS[1][0]] and removed[0].is_risk_factor
    assert added[0].old is None and added[0].new is not None and removed[0].new is None and removed[0].old is not None
    side = added[0].new
    assert new.text[side.start:side.end] == side.quote == new_head
    assert side.extent is not None and new.text[side.extent[0]:side.extent[1]].endswith(body)
    assert report.citations_checked == 2 and report.citations_failed == 0
    assert [c.tier for c in report.changes] == [0, 0]  # whole factors rank first
    assert report.counts["risk_factors_added"] == 1 and report.counts["risk_factors_removed"] == 1


def test_a_changed_figure_is_reported_old_to_new_and_a_rolled_year_is_not() -> None:
    base = "".join(factor(h, t) for h, t in FACTORS)
    mdna_old = ("We recorded a $4.5 billion charge for excess inventory in fiscal year 2024, and our gross margin "
                "was 62.5% for the year.\n\nOur headcount grew during fiscal year 2024 as we expanded research.\n\n")
    mdna_new = ("We recorded a $5.4 billion charge for excess inventory in fiscal year 2025, and our gross margin "
                "was 62.5% for the year.\n\nOur headcount grew during fiscal year 2025 as we expanded research.\n\n")
    report = run(filing(base, mdna=mdna_old), filing(base, mdna=mdna_new, filed=date(2025, 2, 1)))
    figs = [c for c in report.changes if c.kind == ChangeKind.FIGURES_CHANGED]
    assert len(figs) == 1 and len(report.changes) == 1
    (d,) = figs[0].figures
    assert (d.old_text, d.new_text, d.old_value, d.new_value) == ("$4.5 billion", "$5.4 billion", 4.5e9, 5.4e9)
    assert d.relative == pytest.approx(0.2)
    assert figs[0].old is not None and "$4.5 billion" in figs[0].old.quote and "$5.4 billion" in figs[0].new.quote  # type: ignore[union-attr]
    assert report.dates_only == 1  # the headcount sentence only rolled its year


def test_reference_numbers_and_table_rows_are_not_figures() -> None:
    assert figures("(2) See Note 9, Restructuring Charges, for additional information.") == []
    assert figure_deltas("See Note 9 and Item 7A for more information on this.",
                         "See Note 4 and Item 7A for more information on this.") is None
    assert figure_deltas("Time deposits Level 2 300 65", "Time deposits Level 2 101 101") is None  # no sentence
    got = figure_deltas("Revenue grew 12% to $1,234 million in the year.", "Revenue grew 15% to $1,500 million in "
                        "the year.")
    assert got is not None and [(x.old_value, x.new_value, x.unit) for x in got[0]] == [(12, 15, "%"),
                                                                                        (1234e6, 1500e6, "$")]


def test_moved_and_split_paragraphs_are_not_added_or_removed() -> None:
    a = "Our suppliers are concentrated in Asia and a disruption there could delay our products for months."
    b = "We have entered into long-term capacity agreements which require prepayments to our foundry partners."
    c = "These agreements could leave us with excess inventory if demand falls faster than we can react to it."
    old = filing("".join(factor(h, t) for h, t in FACTORS), mdna=f"{a} {b}\n\n{c}\n\nA separate paragraph here "
                 "about our stores and our customers in many countries.\n\n")
    new = filing("".join(factor(h, t) for h, t in reversed(FACTORS)), mdna=f"A separate paragraph here about our "
                 f"stores and our customers in many countries.\n\n{a}\n\n{b} {c}\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    kinds = {c.kind for c in report.changes}
    assert ChangeKind.ADDED not in kinds and ChangeKind.REMOVED not in kinds
    assert all(c.kind == ChangeKind.REWORDED and c.section == "mdna" for c in report.changes)


def test_a_quarterly_update_never_calls_an_unlisted_factor_removed() -> None:
    old = filing("".join(factor(h, t) for h, t in FACTORS))
    update = ("Other than the risk factors listed below, there have been no material changes from the risk factors "
              "described in our Annual Report on Form 10-K.\n\n")
    new_head = "New tariffs on imported components could raise our costs significantly."
    new = filing(update + factor(FACTORS[1][0], FACTORS[1][1] + " Lead times grew in the quarter.")
                 + f"{new_head}\n\nTariffs on semiconductors and assemblies were announced in April, and our main "
                 "suppliers told us they will pass the new duties on to us from the next quarter.\n\n",
                 form="10-Q", filed=date(2024, 5, 1),
                 mdna="Revenue rose in the quarter on higher data center demand from cloud customers.\n\n")
    report = run(old, new)
    assert not [c for c in report.changes if c.kind == ChangeKind.REMOVED]
    assert [c.risk_factor for c in report.changes if c.is_risk_factor] == [new_head]
    assert any(c.kind == ChangeKind.REWORDED and c.risk_factor == FACTORS[1][0] for c in report.changes)
    rf = next(s for s in report.sections if s.key == "risk_factors")
    assert rf.mode == "risk_factor_update" and "not called removed" in rf.note
    mdna = next(s for s in report.sections if s.key == "mdna")
    assert mdna.mode == "new_only"  # the synthetic 10-K has no MD&A


def test_headings_need_a_body_and_never_continue_the_text_before() -> None:
    paras, _ = paragraphs("Intro text of the section.\n\nCompetition could hurt us.\n\n" + BODY.format(t="X.")
                          + "\n\nIn addition, the USG may restrict exports of our products.\n\n"
                          + BODY.format(t="Y."), 0, 10_000)
    heads = [f.heading.text if f.heading else None for f in risk_factors(paras)]
    assert heads == [None, "Competition could hurt us."]


def test_pdf_page_furniture_and_page_breaks_do_not_read_as_edits() -> None:
    text = "We sell products in many\n\n7\n\nTable of Contents\n\ncountries around the world.\n\n| a | 1 |\n| b | 2 |"
    paras, tables = paragraphs(text, 0, len(text))
    assert len(paras) == 1 and paras[0].key == "we sell products in many countries around the world."
    assert tables == 1


def _ref(doc_id: str, form: str, filed: date | None, **meta: str) -> tuple[DocumentRef, dict[str, str]]:
    return (DocumentRef(doc_id=doc_id, ticker="ACME", company="ACME Corp", form=form, filed_at=filed,
                        period_end=None, source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, title=f"{form} {filed}",
                        url=None), dict(meta))


def test_the_default_pair_and_every_bad_request_names_its_fix() -> None:
    refs = [_ref("a" * 64, "10-K", date(2023, 2, 1), accession="0000000001-23-000001"),
            _ref("b" * 64, "10-K", date(2024, 2, 1)), _ref("c" * 64, "10-Q", date(2024, 5, 1)),
            _ref("d" * 64, "8-K", date(2024, 6, 1))]
    cands = periodic(refs, "acme", None)
    assert [c.ref.form for c in cands] == ["10-K", "10-K", "10-Q"]
    old, new, why = choose(cands, "ACME")
    assert (old.ref.doc_id[0], new.ref.doc_id[0]) == ("b", "c") and "risk-factor update" in why
    old, new, _ = choose(cands, "ACME", form="10-K")
    assert (old.ref.doc_id[0], new.ref.doc_id[0]) == ("a", "b")
    old, new, _ = choose(cands, "ACME", from_="0000000001-23-000001", to="2024-05-01")
    assert (old.ref.doc_id[0], new.ref.doc_id[0]) == ("a", "c")
    assert [c.ref.form for c in periodic(refs, "ACME", date(2024, 3, 1))] == ["10-K", "10-K"]  # as-of
    with pytest.raises(ConfigError, match="swap them"):
        choose(cands, "ACME", from_="2024-05-01", to="2023-02-01")
    with pytest.raises(NotFoundError, match="only one 10-Q"):
        choose(cands, "ACME", form="10-Q")
    with pytest.raises(ConfigError, match="not a filing date"):
        choose(cands, "ACME", from_="last year")
    with pytest.raises(NotFoundError, match="the filings are"):
        choose(cands, "ACME", from_="2020-01-01")
    with pytest.raises(ConfigError, match="use 10-K or 10-Q"):
        choose(cands, "ACME", form="8-K")
    assert isinstance(cands[0], Candidate)


def test_recorded_nvda_10q_against_its_10k(recorded_documents: list[Document]) -> None:
    k = next(d for d in recorded_documents if d.ticker == "NVDA" and d.form == "10-K")
    q = next(d for d in recorded_documents if d.ticker == "NVDA" and d.form == "10-Q")
    report = run(k, q)
    assert report.citations_failed == 0 and report.citations_checked >= 10
    assert {s.key: s.mode for s in report.sections}["risk_factors"] == "risk_factor_update"
    assert not [c for c in report.changes if c.kind == ChangeKind.REMOVED]
    assert all(c.section == "risk_factors" for c in report.changes)
    for c in report.changes:
        for side, doc in ((c.old, k), (c.new, q)):
            if side is not None:
                assert doc.text[side.start:side.end] == side.quote and side.doc_id == doc.id
    # the 10-Q's new export-control paragraphs are there, and none of them is a sentence of the 10-K
    added = [c for c in report.changes if c.kind == ChangeKind.ADDED]
    assert added and any("export" in c.new.quote for c in added)  # type: ignore[union-attr]
    assert all(c.new.quote[:120] not in k.text for c in added)  # type: ignore[union-attr]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("ab .\n$%1,9Item 1A7Q:•()")), max_size=600),
       st.text(alphabet=st.sampled_from(list("ab .\n$%1,9Item 1A7Q:•()")), max_size=600),
       st.integers(-50, 700), st.integers(-50, 700))
def test_any_text_and_any_section_spans_give_a_report(a: str, b: str, s: int, e: int) -> None:
    def doc(text: str, form: str) -> Document:
        secs = (Section("Item 1A. Risk Factors", s, e), Section("Item 7. MD&A", max(0, e), len(text) + 5))
        return Document(id=Document.make_id(form, text), source_key=form, ticker="X", cik=None, company=None,
                        source=Source.LOCAL, origin=Origin.LOCAL_FILE, form=form, filed_at=None, period_end=None,
                        url=None, title=form, text=text, sections=secs)
    old, new = doc(a, "10-K"), doc(b, "10-K")
    diffs, _ = diff_documents(old, new)
    assert all(d.pair.key in ("risk_factors", "mdna") for d in diffs)
    report = run(old, new)
    assert report.citations_failed == 0
    assert section_texts(old) is not None


def test_the_offline_analyst_reads_a_new_risk_as_bear_and_a_dropped_one_as_bull() -> None:
    from equimind.core.research import Speaker
    from equimind.debate.change_claims import CHANGE_NEW_FACTOR, change_claims
    from equimind.debate.offline import OfflineAnalyst

    old = filing("".join(factor(h, t) for h, t in FACTORS[:2]))
    new_head = "New export restrictions could prevent us from selling our products in China."
    body = ("The government announced licence rules for advanced chips in April. We may be unable to obtain "
            "licences, and the loss of these sales could materially harm our revenue.")
    new = filing(factor(FACTORS[0][0], FACTORS[0][1]) + f"{new_head}\n\n{body}\n\n", filed=date(2025, 2, 1))
    report = run(old, new)
    claims = change_claims(report)
    bear = [c for c in claims if c.speaker is Speaker.BEAR]
    bull = [c for c in claims if c.speaker is Speaker.BULL]
    assert len(bear) == 1 and bear[0].strength == CHANGE_NEW_FACTOR and bear[0].signal == "change:new-risk-factor"
    assert bear[0].spans[0].doc_id == new.id and bear[0].spans[0].quote == new_head
    assert len(bull) == 1 and bull[0].spans[0].doc_id == old.id and bull[0].spans[0].quote == FACTORS[1][0]
    assert "no longer in the 10-K filed 2025-02-01" in bull[0].text
    analysis = OfflineAnalyst(None).analyse([], [], report)
    assert any(c.signal == "change:new-risk-factor" for c in analysis.bear)
    assert change_claims(None) == [] and OfflineAnalyst(None).analyse([], []).bear == ()
