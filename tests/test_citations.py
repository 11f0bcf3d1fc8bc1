"""Quote verification against canonical text: exact, normalised (mapped back to original offsets), closest passage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.core.citations import (
    CitationVerifier,
    MatchKind,
    check_figures,
    normalise,
    verify_citation,
    verify_spans,
)
from equimind.core.documents import sha256_hex
from equimind.core.errors import NotFoundError
from equimind.core.research import Figure

TEXT = (
    "Item 7. Management’s Discussion and Analysis\n\n"
    "Revenue for fiscal year 2025 was $130.5 billion,   up 114% from a year ago.\n"
    "Data Center revenue was a record, driven by demand for our Hopper platform.\n"
    "We face risks from “export controls” and long\u2011term supply\u00a0constraints.\n"
    "Revenue for fiscal year 2025 was $130.5 billion, up 114% from a year ago.\n"
)


class FakeLookup:
    def __init__(self, docs: dict[str, str]) -> None:
        self.docs = docs
        self.calls = 0

    def get_document_text(self, doc_id: str) -> str:
        self.calls += 1
        if doc_id not in self.docs:
            raise NotFoundError(f"document {doc_id} is not stored")
        return self.docs[doc_id]


LOOKUP = FakeLookup({"d1": TEXT})


def test_exact_match_returns_offsets_and_hash() -> None:
    quote = "Data Center revenue was a record"
    check = verify_citation(LOOKUP, "d1", quote)
    assert check.match is MatchKind.EXACT and check.verified
    assert TEXT[check.start:check.end] == quote  # type: ignore[misc]
    assert check.doc_sha256 == sha256_hex(TEXT)
    cit = check.citation()
    assert (cit.doc_id, cit.start, cit.end, cit.quote) == ("d1", check.start, check.end, quote)


def test_normalised_match_maps_back_to_original_characters() -> None:
    # straight quotes, ASCII hyphen, single spaces and different case vs curly quotes, U+2011, NBSP in the text
    quote = 'we face risks from "EXPORT CONTROLS" and long-term supply constraints.'
    check = verify_citation(LOOKUP, "d1", quote)
    assert check.match is MatchKind.NORMALISED
    assert check.passage == "We face risks from “export controls” and long\u2011term supply\u00a0constraints."
    assert TEXT[check.start:check.end] == check.passage  # type: ignore[misc]
    assert check.citation().quote == check.passage  # the citation records the document's own text


def test_whitespace_runs_collapse() -> None:
    lookup = FakeLookup({"d2": "Revenue was $130.5 billion,   up 114%\n from a year ago."})
    check = verify_citation(lookup, "d2", "$130.5 billion, up 114% from")
    assert check.match is MatchKind.NORMALISED
    assert check.passage == "$130.5 billion,   up 114%\n from"


def test_within_window_prefers_the_cited_passage_when_quote_repeats() -> None:
    quote = "Revenue for fiscal year 2025 was $130.5 billion, up 114% from a year ago."
    second = TEXT.rindex(quote)
    check = verify_citation(LOOKUP, "d1", quote, within=(second - 5, len(TEXT)))
    assert check.start == second
    assert verify_citation(LOOKUP, "d1", quote).start == second  # only the second is verbatim (first has 3 spaces)
    # a normalised match inside the cited passage beats a verbatim match elsewhere in the document
    first = verify_citation(LOOKUP, "d1", quote, within=(0, 130))
    assert first.match is MatchKind.NORMALISED and first.start == TEXT.index("Revenue for")


def test_paraphrase_is_not_verified_but_closest_passage_is_reported() -> None:
    paraphrase = "Data Center revenue was a record, driven by demand for our Blackwell platform."
    check = verify_citation(LOOKUP, "d1", paraphrase)
    assert check.match is MatchKind.CLOSEST and not check.verified
    assert check.passage is not None and "Hopper platform" in check.passage
    assert 0.8 < check.similarity < 1.0
    with pytest.raises(ValueError, match="only verified"):
        check.citation()


def test_unrelated_quote_finds_nothing() -> None:
    check = verify_citation(LOOKUP, "d1", "zzz qqq xxx")
    assert check.match is MatchKind.NONE and check.similarity == 0.0 and check.start is None


def test_empty_quote_verifies_nothing() -> None:
    assert verify_citation(LOOKUP, "d1", "   ").match is MatchKind.NONE


def test_unknown_document_raises_not_found() -> None:
    with pytest.raises(NotFoundError):
        verify_citation(LOOKUP, "nope", "anything")


def test_verifier_caches_document_text() -> None:
    lookup = FakeLookup({"d1": TEXT})
    v = CitationVerifier(lookup)
    v.verify("d1", "record")
    v.verify("d1", "EXPORT controls")
    assert lookup.calls == 1


def test_normalise_joins_hyphen_breaks_and_drops_soft_hyphens() -> None:
    assert normalise("long-  term  busi\u00adness").text == "long-term business"


def test_check_figures() -> None:
    figs = {"f1": Figure(id="f1", name="rsi_14", value=71.0, unit="", as_of=None, formula="rsi"),
            "f2": Figure(id="f2", name="pe_ttm", value=None, unit="x", as_of=None, formula="pe")}
    assert check_figures(["f1"], figs) is None
    assert "not among" in (check_figures(["f9"], figs) or "")
    assert "no value" in (check_figures(["f2"], figs) or "")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_substring_verifies_exactly_and_any_respacing_normalises(data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(TEXT) - 12))
    end = data.draw(st.integers(start + 10, min(len(TEXT), start + 120)))
    quote = TEXT[start:end]
    if not quote.strip():
        return
    check = verify_citation(LOOKUP, "d1", quote)
    assert check.verified and TEXT[check.start:check.end] == quote  # type: ignore[misc]
    squashed = " ".join(quote.split()).upper()
    check2 = verify_citation(LOOKUP, "d1", squashed)
    assert check2.verified
    assert normalise(check2.passage or "").text == normalise(squashed).text


def test_a_batch_checks_each_quote_against_its_claimed_span_reading_each_document_once() -> None:
    lookup = FakeLookup({"d1": TEXT})
    quote = "Revenue for fiscal year 2025 was $130.5 billion, up 114% from a year ago."
    last = TEXT.rindex(quote)
    first, second, elsewhere, missing = verify_spans(lookup, [
        ("d1", last, last + len(quote), quote),  # the second occurrence: the claimed span wins over the first
        ("d1", 0, len(TEXT), "Data Center revenue was a record"),
        ("d1", 0, 20, "driven by demand for our Hopper platform"),  # in the document, not in the claimed span
        ("nope", 0, 5, "anything"),
    ])
    assert first.check is not None and first.check.start == last and first.in_claimed_span
    assert second.in_claimed_span and second.check is not None and second.check.match is MatchKind.EXACT
    assert elsewhere.check is not None and elsewhere.check.verified and not elsewhere.in_claimed_span
    assert missing.check is None and missing.error is not None and "not stored" in missing.error
    assert not missing.in_claimed_span and lookup.calls == 2  # d1 read once, "nope" tried once
