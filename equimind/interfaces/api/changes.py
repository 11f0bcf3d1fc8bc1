"""``GET /api/v1/changes/{ticker}``: what changed from one filing of a company to the next (new and dropped risk
factors, changed figures, rewordings), ranked by the report's stated rule, each change cited on both sides.

A thin adapter over ``EquiMindEngine.changes`` (``app/changes_run.py``): the path takes what ``equimind changes``
takes (a ticker, or the company name of stored local PDFs), so the ticker is not checked here; the engine checks it
when it has to fetch filings. Errors follow ``errors.STATUS_TABLE``: bad input (``form``, reversed ``from`` / ``to``,
an unknown ``section``, two companies' filings) is a ``ConfigError`` → 422; an unknown ticker, one filing only or a
``from`` / ``to`` naming no stored filing is a ``NotFoundError`` → 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi import Path as PathParam

from equimind.interfaces.api.deps import AsOfDep, EngineDep, RequestIdDep
from equimind.interfaces.api.errors import ERRORS
from equimind.interfaces.traced import TracedChangeReport
from equimind.security.trace import traced

router = APIRouter(prefix="/api/v1", tags=["changes"])

SUBJECT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 .&,'\-]{0,99}$"  # a ticker, or a local PDF's company name
FILING_SPEC = (" a filing date (YYYY-MM-DD), an accession number (0001045810-25-000023), a fiscal year (2019, "
               "2024Q2) or a document id (at least 8 characters).")
MAX_SECTIONS = 8

Subject = Annotated[str, PathParam(pattern=SUBJECT_PATTERN, description="A ticker (e.g. NVDA), or the company name "
                                                                         "of stored local PDFs.")]
FormQ = Annotated[str | None, Query(max_length=8, description="10-K or 10-Q: the latest two filings of that form. "
                                                             "Default: the latest periodic filing against the one "
                                                             "before it (of the same form when there is one).")]
FromQ = Annotated[str | None, Query(alias="from", min_length=1, max_length=80,
                                    description="The old filing:" + FILING_SPEC)]
ToQ = Annotated[str | None, Query(min_length=1, max_length=80, description="The new filing:" + FILING_SPEC)]
SectionQ = Annotated[list[str] | None, Query(max_length=MAX_SECTIONS, description=(
    "Only these sections (repeatable): risk_factors, mdna, business, notes, market_risk, legal, full_text."))]


@router.get("/changes/{ticker}", responses=ERRORS)
def changes(ticker: Subject, engine: EngineDep, rid: RequestIdDep, form: FormQ = None, from_: FromQ = None,
            to: ToQ = None, section: SectionQ = None, as_of: AsOfDep = None) -> TracedChangeReport:
    """What changed between two filings of a company: each change (added, removed, reworded, figures_changed) with
    its kind, summary and the old / new quotes (document id and character span, checked against the stored text),
    ranked by the stated ``ranking_rule``; ``pairing`` says why these two filings were compared and ``degraded``
    what was missing. Filings not yet stored are fetched from the server's source (their embeddings deferred)."""
    report = engine.changes(ticker, form=form, from_=from_, to=to, sections=tuple(section or ()), as_of=as_of)
    return traced(TracedChangeReport, report, engine.trace(rid))
