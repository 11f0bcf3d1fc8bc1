"""``equimind changes`` over live EDGAR: a company's two 10-Ks are fetched from a loopback server at SEC's URL paths
(ticker map, submissions, filing index, primary documents), stored with their embeddings deferred, and compared;
the second request reads the store (DB-first) and fetches nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from market_replay import ReplayServer

from equimind.app.engine import EquiMindEngine
from equimind.changes.model import ChangeKind
from equimind.core.config import Settings
from equimind.core.errors import NotFoundError
from tests.interfaces.interfaces_fakes import fake_services

IDENTITY = "EquiMind Tests tests@example.com"
CIK = "1234567"
FILINGS = [("0001234567-24-000010", "2024-02-20", "2023-12-31", "acme-20231231.htm"),
           ("0001234567-25-000012", "2025-02-19", "2024-12-31", "acme-20241231.htm")]
KEEP = ("Competition in our markets could reduce our prices and our market share.",
        "Our markets are competitive and several rivals are larger than we are. If they cut prices we may have to "
        "follow, and our margins would fall. We may also lose customers to products we do not offer.")
DROPPED = ("Our reliance on a single warehouse exposes us to disruption of our shipments.",
           "We ship every order from one warehouse in Ohio. A fire, flood or strike there would stop our shipments "
           "for weeks, and our insurance may not cover the lost sales.")
NEW = ("New export licence rules could stop our sales of advanced controllers to China.",
       "In October the government announced licence rules for advanced controllers. We may not obtain licences, "
       "and sales to China were 14% of our revenue last year.")


def _html(year: str, factors: list[tuple[str, str]], revenue: str) -> str:
    rf = "".join(f"<p><b>{h}</b></p><p>{b}</p>" for h, b in factors)
    return (f"<html><body><p>ACME CONTROLS INC.</p><p>(Exact name of registrant as specified in its charter)</p>"
            f"<p>Annual report for the fiscal year ended December 31, {year}</p>"
            f"<p>Item 1. Business</p><p>We make industrial controllers for factories in many countries.</p>"
            f"<p>Item 1A. Risk Factors</p><p>Our business faces the risks below.</p>{rf}"
            f"<p>Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations</p>"
            f"<p>Our revenue was {revenue} for the year, and our backlog grew with new factory orders.</p>"
            f"<p>Item 8. Financial Statements and Supplementary Data</p><p>See the statements below.</p>"
            "</body></html>")


def _serve(server: ReplayServer) -> None:
    folder = f"/Archives/edgar/data/{CIK}"
    tickers = {"0": {"cik_str": int(CIK), "ticker": "ACME", "title": "ACME CONTROLS INC"}}
    subs = {"cik": CIK, "name": "ACME CONTROLS INC", "filings": {"files": [], "recent": {
        "accessionNumber": [a for a, *_ in reversed(FILINGS)], "filingDate": [f for _, f, *_ in reversed(FILINGS)],
        "reportDate": [r for *_, r, _ in reversed(FILINGS)], "form": ["10-K", "10-K"],
        "primaryDocument": [p for *_, p in reversed(FILINGS)]}}}
    server.extra["/files/company_tickers.json"] = ("application/json", json.dumps(tickers).encode())
    server.extra[f"/submissions/CIK{CIK.zfill(10)}.json"] = ("application/json", json.dumps(subs).encode())
    bodies = {FILINGS[0][0]: _html("2023", [KEEP, DROPPED], "$412.5 million"),
              FILINGS[1][0]: _html("2024", [KEEP, NEW], "$455.0 million")}
    for acc, _, _, primary in FILINGS:
        base = f"{folder}/{acc.replace('-', '')}"
        server.extra[f"{base}/{primary}"] = ("text/html", bodies[acc].encode())
        server.extra[f"{base}/{acc}-index.html"] = ("text/html", b"<html><body><table class='tableFile'>"
                                                    b"</table></body></html>")


@pytest.fixture()
def engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ReplayServer() as server:
        _serve(server)
        settings = Settings(home=tmp_path / "home", sec_identity=IDENTITY, sec_base_url=server.url,
                            sec_data_url=server.url)
        services = fake_services(settings)  # hash embedder: a comparison reads text, not vectors
        try:
            yield EquiMindEngine(services), server
        finally:
            services.close()


def test_two_live_10ks_are_fetched_stored_and_compared(engine) -> None:  # type: ignore[no-untyped-def]
    eng, server = engine
    report = eng.changes("ACME", form="10-K")
    assert report.old.accession == FILINGS[0][0] and report.new.accession == FILINGS[1][0]
    rf = {c.risk_factor: c for c in report.changes if c.is_risk_factor}
    assert set(rf) == {NEW[0], DROPPED[0]}
    assert rf[NEW[0]].kind == ChangeKind.ADDED and rf[NEW[0]].new is not None
    assert rf[DROPPED[0]].kind == ChangeKind.REMOVED and rf[DROPPED[0]].old is not None
    figs = [c for c in report.changes if c.kind == ChangeKind.FIGURES_CHANGED]
    assert [(d.old_text, d.new_text) for c in figs for d in c.figures] == [("$412.5 million", "$455.0 million")]
    assert report.citations_failed == 0 and report.citations_checked == len(report.changes) + len(figs)
    assert any("fetched 2 filing(s)" in d for d in report.degraded)
    for c in report.changes:  # every side is the stored text at its span
        for side in (c.old, c.new):
            if side is not None:
                assert eng.services.docstore.get_document_text(side.doc_id)[side.start:side.end] == side.quote
    primary = f"/Archives/edgar/data/{CIK}/{FILINGS[1][0].replace('-', '')}/{FILINGS[1][3]}"
    fetched = server.count(primary)
    again = eng.changes("ACME", form="10-K")  # DB-first: the store has both now
    assert server.count(primary) == fetched and again.degraded == []
    assert [c.summary for c in again.changes] == [c.summary for c in report.changes]
    with pytest.raises(NotFoundError, match="unknown ticker"):
        eng.changes("ZZZQ")
