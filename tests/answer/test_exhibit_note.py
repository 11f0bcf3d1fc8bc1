"""A refusal about a company whose filing keeps its substance in an exhibit that is not stored says so and names the
fix (answer/exhibits.py): the note over documents' meta, and `equimind ask` over the recorded corpus, whose Wells
Fargo 10-K is stored without its Exhibit 13."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from equimind.answer.exhibits import exhibit_note, with_note
from equimind.answer.record import RefusalReason
from equimind.core.documents import Origin, Source
from equimind.core.search import DocumentRef

QUESTION = "What restriction does the asset cap place on Wells Fargo?"
FIX = 'EQUIMIND_SEC_IDENTITY="Your Name you@example.com" equimind ingest --tickers WFC --forms 10-K'


def _ref(doc_id: str, form: str = "10-K", filed: date = date(2025, 2, 25)) -> DocumentRef:
    return DocumentRef(doc_id=doc_id, ticker="WFC", company="WELLS FARGO", form=form, filed_at=filed,
                       period_end=None, source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, title=doc_id, url=None)


def test_a_missing_exhibit_gives_a_note_naming_it_the_filing_and_the_fix() -> None:
    docs: list[tuple[DocumentRef, Mapping[str, str]]] = [(_ref("k"), {"exhibit_missing": "EX-13"}),
                                                         (_ref("p", form="prices"), {})]
    note = exhibit_note(docs)
    assert note is not None
    assert "WFC's 10-K filed 2025-02-25" in note and "Exhibit 13 (its annual report to shareholders)" in note
    assert "not stored" in note and f"`{FIX}`" in note and "without --snapshot" in note
    assert with_note("not answered", note) == f"not answered. {note}"
    assert with_note("not answered", None) == "not answered"


def test_no_note_when_nothing_is_missing_or_a_live_copy_carries_the_exhibit() -> None:
    assert exhibit_note([(_ref("k"), {"parser": "edgartools-html/1"})]) is None
    assert exhibit_note([]) is None
    covered = [(_ref("snap"), {"exhibit_missing": "EX-13"}), (_ref("live"), {"exhibits": "EX-13.1"})]
    assert exhibit_note(covered) is None
    other_year = [(_ref("snap"), {"exhibit_missing": "EX-13"}),
                  (_ref("live", filed=date(2024, 2, 20)), {"exhibits": "EX-13"})]
    assert exhibit_note(other_year) is not None  # last year's exhibit does not hold this year's report


def test_two_filings_missing_their_exhibits_are_named_together() -> None:
    note = exhibit_note([(_ref("k"), {"exhibit_missing": "EX-13"}),
                         (_ref("q", form="10-Q", filed=date(2025, 5, 1)), {"exhibit_missing": "EX-13,EX-99"})])
    assert note is not None and "10-K filed 2025-02-25 and 10-Q filed 2025-05-01 incorporate" in note
    assert "Exhibit 13" in note and "Exhibit 99" in note and "--forms 10-K,10-Q" in note


def _assert_names_exhibit_and_fix(message: str) -> None:
    assert "Exhibit 13" in message and "not stored" in message and FIX in message, message


@pytest.mark.integration
def test_ask_over_the_snapshot_refuses_naming_exhibit_13_and_the_fix(tmp_path: Path, corpus_dir: Path) -> None:
    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    services = open_services(Settings(home=tmp_path / "h", snapshot=corpus_dir), embedder=HashEmbedder(),
                             reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"),
                             tokenizer=WhitespaceTokenizer())
    try:
        engine = EquiMindEngine(services)
        answer = engine.ask(QUESTION, "WFC", date(2025, 9, 30))  # refused by the answerability check
        assert answer.refused and answer.refusal is not None
        assert answer.refusal.reason is RefusalReason.NOT_ANSWERABLE
        _assert_names_exhibit_and_fix(answer.refusal.message)
        # its terms are in the 10-K ("net interest income"), its figure only in the exhibit: the final refusal
        final = engine.ask("What was Wells Fargo's net interest income in 2024?", "WFC", date(2025, 9, 30))
        assert final.refused and final.refusal is not None
        assert final.refusal.reason is not RefusalReason.NOT_ANSWERABLE
        _assert_names_exhibit_and_fix(final.refusal.message)
    finally:
        services.close()


@pytest.mark.slow
@pytest.mark.integration
def test_the_ask_command_over_the_snapshot_names_exhibit_13_and_the_fix(tmp_path: Path, corpus_dir: Path) -> None:
    from typer.testing import CliRunner

    from equimind.interfaces.cli.main import app

    res = CliRunner().invoke(app, ["ask", QUESTION, "--ticker", "WFC", "--snapshot", str(corpus_dir),
                                   "--as-of", "2025-09-30", "--json", "--home", str(tmp_path / "h")])
    assert res.exit_code == 0, res.stderr
    out: dict[str, Any] = json.loads(res.stdout)
    assert out["support"] == "refused"
    _assert_names_exhibit_and_fix(out["refusal"]["message"])
