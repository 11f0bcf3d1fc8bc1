"""One ``changes`` request: find the company's two filings in the store (DB-first), fetch what is missing from the
run's source (live EDGAR or the recorded snapshot), choose the pair (``changes.select``) and compare them
(``changes.report``).

Fetched filings are stored with every chunk's embedding deferred (a comparison reads text, not vectors), so the
request costs a download and a parse, not an embedding pass; BM25 searches them at once and ``equimind complete``
(or the next research run on the ticker) embeds them. The report's ``degraded`` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

from equimind.app.services import Services
from equimind.changes.blocks import SECTION_KEYS
from equimind.changes.model import ChangeReport
from equimind.changes.report import compare
from equimind.changes.select import (
    Candidate,
    check_form,
    check_same_company,
    check_spec,
    choose,
    found,
    of_form,
    periodic,
)
from equimind.core.documents import Chunk, Document
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError
from equimind.core.timeguard import filter_dated
from equimind.ingest.documents import documents
from equimind.sources.base import SourceFailure

SECTIONS = (*SECTION_KEYS, "full_text")
FETCH_PER_FORM = 2


class DeferAll:
    """Store a fetched filing's chunks without embedding any of them now (``ingest.pipeline.DeferRule``)."""

    def embed_now(self, doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        return []


def check_sections(sections: Sequence[str]) -> tuple[str, ...]:
    out = []
    for s in sections:
        key = s.strip().lower().replace("-", "_").replace(" ", "_")
        key = {"item_1a": "risk_factors", "risks": "risk_factors", "md&a": "mdna", "item_7": "mdna",
               "item_1": "business", "financial_statements": "notes"}.get(key, key)
        if key not in SECTIONS:
            raise ConfigError(f"--section {s!r} is not a compared section; use one of {', '.join(SECTIONS)}")
        out.append(key)
    return tuple(out)


def run_changes(services: Services, known_ticker: Callable[[str], str], ticker: str, *, form: str | None = None,
                from_: str | None = None, to: str | None = None, sections: Sequence[str] = (),
                as_of: date | None = None) -> ChangeReport:
    """See the module docstring. ``known_ticker`` is the engine's ticker check (unknown symbols fail clearly)."""
    keys = check_sections(sections)
    check_form(form)
    specs = [check_spec(x, which) for x, which in ((from_, "from"), (to, "to")) if x]  # bad input fails first
    name = ticker.strip()
    if not name:
        raise ConfigError("a ticker (or, for local PDFs, the company name) is required, e.g. `equimind changes NVDA`")
    store = services.docstore
    cands = periodic(store.list_documents_with_meta(), name, as_of)
    notes: list[str] = []
    if _needs_fetch(cands, form, specs):
        t = known_ticker(name)  # an unknown symbol fails here, naming the fix
        notes.extend(_fetch(services, t, as_of or date.today(), form))
        cands = periodic(store.list_documents_with_meta(), t, as_of)
        name = t
    try:
        old, new, why = choose(cands, name.upper(), form=form, from_=from_, to=to)
    except NotFoundError:
        _other_company(services, name, from_, to)
        raise
    check_same_company(old.ref, new.ref)
    report = compare(store.get_document(old.ref.doc_id), store.get_document(new.ref.doc_id),
                     lexicon=services.sources.market.lexicon, text_lookup=store, sections=keys, pairing=why,
                     as_of=as_of)
    report.degraded.extend(notes)
    return report


def _needs_fetch(cands: list[Candidate], form: str | None, specs: list[str]) -> bool:
    """Fetch only what the store lacks: a filing named by from / to that no stored one matches, or, with none
    named, a second filing of the form(s) asked for."""
    cands = of_form(cands, form)
    if specs:
        return not all(found(cands, s) for s in specs)
    return len(cands) < 2


def _fetch(services: Services, ticker: str, as_of: date, form: str | None) -> list[str]:
    """Fetch the ticker's latest filings of the forms asked for into the store; notes for ``degraded``."""
    kinds = [form.strip().upper()] if form else ["10-K", "10-Q"]
    got: list[Document] = []
    notes: list[str] = []
    for kind in kinds:
        try:
            raw = list(services.sources.filings.latest(ticker, kind, until=as_of, limit=FETCH_PER_FORM))
        except EquiMindError as exc:
            notes.append(f"could not fetch {ticker} {kind} filings from the {services.sources.mode.value} source "
                         f"({exc}); compared what is stored")
            continue
        for item in documents(raw):
            if isinstance(item, SourceFailure):
                notes.append(f"a {kind} filing could not be fetched ({item.error})")
            else:
                got.append(item)
    got = filter_dated(got, as_of)
    if got:
        report = services.pipeline().run(got, defer=DeferAll())
        if report.documents_added:
            notes.append(f"fetched {report.documents_added} filing(s) of {ticker} from the "
                         f"{services.sources.mode.value} source into the store; their embeddings are deferred "
                         "(a comparison reads text): `equimind complete` embeds them")
    return notes


def _other_company(services: Services, name: str, from_: str | None, to: str | None) -> None:
    """A --from / --to that names another company's filing gets that error, not 'not found'."""
    specs = [s.strip().lower() for s in (from_, to) if s and len(s.strip()) >= 8]
    if not specs:
        return
    for ref, meta in services.docstore.list_documents_with_meta():
        if any(ref.doc_id.startswith(s) or meta.get("accession") == s for s in specs):
            owner = ref.ticker or ref.company or "another company"
            if owner.upper() != name.upper():
                raise ConfigError(f"{ref.form} {ref.doc_id[:12]} is a filing of {owner}, not of {name.upper()}: "
                                  "the two filings of a comparison must be of one company")


def stored_changes(services: Services, ticker: str, as_of: date) -> ChangeReport | None:
    """The risk-factor changes between the ticker's two latest stored filings visible at ``as_of`` (the default
    pairing, no fetch): what a research run's debate reads (``debate.change_claims``). None when fewer than two
    filings are stored."""
    try:
        old, new, why = choose(periodic(services.docstore.list_documents_with_meta(), ticker, as_of), ticker)
        store = services.docstore
        return compare(store.get_document(old.ref.doc_id), store.get_document(new.ref.doc_id),
                       lexicon=services.sources.market.lexicon, text_lookup=store, sections=("risk_factors",),
                       pairing=why, as_of=as_of)
    except EquiMindError:
        return None
