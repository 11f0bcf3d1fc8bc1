"""Answer-level checks of the research pipeline (``EquiMindEngine.research``) under the offline analyst.

For golden questions (answerable: a sample per ticker; absent: all) the pipeline runs with the question's first
ticker and a fixed as-of date, and every Recommendation is checked for:

* **citation validity** — every cited quote (of a claim, or of a direct answer's sentence) is the document's own
  text at [start, end) and the document's sha256 matches the citation's; rate = valid citations / all citations
  (claims citing nothing but figures are counted separately);
* **refusal** — ``Recommendation.refused``: on absent-answer questions a refusal is correct; on answerable ones it is
  a false refusal. Specific asks the visible documents do not answer are refused by the answerability check
  (ADR 0006); ``equimind.evaluation.refusals`` measures that check alone over all golden questions;
* **gold evidence reached** — for answerable questions, whether any search hit of the run overlaps a gold span;
* **look-ahead violations** — a cited document, a search hit or a figure dated after the as-of date (must be 0);
  probed additionally with an early as-of date that falls between recorded filings;
* **determinism** — the same question run twice back to back gives the same Recommendation (wall-clock timings and
  token usage excluded).
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.answer.record import Answer
from equimind.app.engine import EquiMindEngine
from equimind.app.services import open_services
from equimind.core.config import ProviderName, Settings
from equimind.core.documents import sha256_hex
from equimind.core.research import Recommendation
from equimind.evaluation.answer_quality import financebench_answers, financebench_engine, golden_answers
from equimind.evaluation.golden import (
    GoldenQuestion,
    ResolvedSpan,
    filing_key,
    load_golden,
    resolve,
    snapshot_documents,
)
from equimind.evaluation.lco import chosen_tunables
from equimind.evaluation.lco_parts import run_lco
from equimind.evaluation.report import corpus_signature
from equimind.evaluation.runner import product_variant

if TYPE_CHECKING:
    from equimind.app.engine import EquiMindEngine

log = logging.getLogger(__name__)

AS_OF = date(2025, 9, 30)  # after every recorded 10-K / 10-Q (latest filed 2025-08-27)
EARLY_AS_OF = date(2025, 2, 10)  # between recorded filings: later ones must stay invisible
VOLATILE = ("timings_ms", "usage", "ms")  # wall-clock fields; everything else must repeat


@dataclass
class AnswerTally:
    citations: int = 0
    citations_valid: int = 0
    claims: int = 0
    claims_uncited: int = 0
    lookahead: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)


def _day(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def check_citations(rec: Recommendation, engine: EquiMindEngine, tally: AnswerTally) -> int:
    """Count valid citations into ``tally``; returns the number of invalid ones in this recommendation. A claim's
    citations and a direct answer's sentence quotes count the same."""
    answer = rec.answer if isinstance(rec.answer, Answer) else None
    cited = [[(c.doc_id, c.start, c.end, c.quote, c.doc_sha256) for c in claim.citations]
             for claim in [*rec.bull_case, *rec.bear_case]]
    cited += [[(q.doc_id, q.start, q.end, q.text, q.doc_sha256) for q in s.quotes]
              for s in (answer.sentences if answer is not None else [])]
    bad = 0
    for spans in cited:
        tally.claims += 1
        tally.claims_uncited += int(not spans)
        for doc_id, start, end, quote, sha in spans:
            tally.citations += 1
            text = engine.services.docstore.get_document_text(doc_id)
            ok = text[start:end] == quote and sha256_hex(text) == sha
            tally.citations_valid += int(ok)
            bad += int(not ok)
    return bad


def lookahead_violations(rec: Recommendation, engine: EquiMindEngine) -> list[str]:
    """Everything in the recommendation dated after its as-of date (cited documents, search hits, figures)."""
    out: list[str] = []
    cited = {c.doc_id for cl in [*rec.bull_case, *rec.bear_case] for c in cl.citations}
    refs = engine.services.docstore.get_refs(cited) if cited else {}
    for doc_id, ref in refs.items():
        if ref.filed_at is not None and ref.filed_at > rec.as_of:
            out.append(f"cited {doc_id[:12]} filed {ref.filed_at}")
    for it in rec.agentic_rag.log if rec.agentic_rag else []:
        for hit in it.hits:
            filed = _day(hit.get("filed_at"))
            if filed is not None and filed > rec.as_of:
                out.append(f"hit {str(hit.get('doc_id'))[:12]} filed {filed}")
    for fig in rec.figures:
        if fig.as_of is not None and fig.as_of > rec.as_of:
            out.append(f"figure {fig.name} as of {fig.as_of}")
    return out


def gold_reached(rec: Recommendation, items: Sequence[Sequence[ResolvedSpan]]) -> bool:
    """Did any search hit of the run overlap a gold span?"""
    for it in rec.agentic_rag.log if rec.agentic_rag else []:
        for hit in it.hits:
            start, end = hit.get("span", [0, 0])
            if any(s.doc_id == hit.get("doc_id") and min(end, s.end) > max(start, s.start)
                   for spans in items for s in spans):
                return True
    return False


def stable_json(rec: Recommendation) -> str:
    """The recommendation without run-dependent fields (timings, token usage), for determinism checks."""
    return json.dumps(_strip(rec.model_dump(mode="json")), sort_keys=True)


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def sample_questions(questions: Sequence[GoldenQuestion], per_ticker: int, tickers: Sequence[str] = ()
                     ) -> list[GoldenQuestion]:
    """Every absent question plus the first ``per_ticker`` answerable ones per (first) ticker, in file order."""
    seen: dict[str, int] = {}
    out: list[GoldenQuestion] = []
    for q in questions:
        t = q.tickers[0]
        if tickers and t not in tickers:
            continue
        if q.absent:
            out.append(q)
        elif seen.get(t, 0) < per_ticker:
            seen[t] = seen.get(t, 0) + 1
            out.append(q)
    return out


def _open_engine(settings: Settings, corpus_dir: Path, cache_dir: Path, seed_store: Path | None) -> EquiMindEngine:
    """An engine over ``cache_dir`` with the snapshot as its on-demand source and the offline analyst.

    When the store is new and ``seed_store`` (an ingested golden store) exists, it is copied in first so the filings
    are not embedded again; whatever else the runs need (market data) is fetched on demand from the snapshot.
    """

    if not (cache_dir / "docstore.sqlite").exists() and seed_store is not None and \
            (seed_store / "docstore.sqlite").exists():
        shutil.copytree(seed_store, cache_dir, dirs_exist_ok=True)
    # first-answer indexing off: a question's score must not depend on which question fetched the filing first
    run_settings = settings.model_copy(update={"home": cache_dir, "snapshot": corpus_dir.resolve(),
                                               "provider": ProviderName.OFFLINE, "first_answer_indexing": False})
    return EquiMindEngine(open_services(run_settings))


def _product_seed(cache_dir: Path) -> Path:
    """The cached golden store embedded the way the product embeds (a store of another format would be refused by
    the product pipeline and flagged degraded by its search)."""

    return cache_dir.parent / "golden" / product_variant()


def _ensure_filings(engine: EquiMindEngine, corpus_dir: Path, questions: Sequence[GoldenQuestion]) -> None:
    have = {filing_key(engine.services.docstore.get_document(r.doc_id))
            for r in engine.services.docstore.list_documents(status="indexed")}
    need = {g.key for q in questions for g in q.gold}
    missing = sorted({k[0] for k in need - have})
    if missing:
        engine.services.pipeline().run(snapshot_documents(corpus_dir, missing))


def _run_one(engine: EquiMindEngine, q: GoldenQuestion, as_of: date, tally: AnswerTally,
             spans: dict[str, list[list[ResolvedSpan]]]) -> Recommendation | None:
    """One research run checked into ``tally``; a run that raises is a row with its ``error`` (None returned)."""
    t0 = time.perf_counter()
    try:
        rec = engine.research(q.tickers[0], q.question, as_of)
        bad = check_citations(rec, engine, tally)
        leaks = lookahead_violations(rec, engine)
    except Exception as exc:  # one question's failure is its row; the run goes on
        log.exception("research on %s raised", q.id)
        tally.rows.append({"id": q.id, "type": q.qtype, "ticker": q.tickers[0], "as_of": as_of, "refused": False,
                           "refusal_reason": None, "rating": None, "claims": 0, "invalid_citations": 0,
                           "lookahead_violations": 0, "degraded": [],
                           "gold_reached": False if q.id in spans else None,
                           "seconds": round(time.perf_counter() - t0, 2), "error": f"{type(exc).__name__}: {exc}"})
        return None
    tally.lookahead.extend(f"{q.id}: {v}" for v in leaks)
    tally.rows.append({"id": q.id, "type": q.qtype, "ticker": q.tickers[0], "as_of": as_of, "refused": rec.refused,
                       "refusal_reason": rec.refusal_reason, "rating": rec.rating,
                       "claims": len(rec.bull_case) + len(rec.bear_case), "invalid_citations": bad,
                       "lookahead_violations": len(leaks),
                       "degraded": sorted({d.capability for d in rec.degraded}),
                       "gold_reached": gold_reached(rec, spans[q.id]) if q.id in spans else None,
                       "seconds": round(time.perf_counter() - t0, 2), "error": None})
    return rec


def _repeats(engine: EquiMindEngine, q: GoldenQuestion) -> bool:
    """Two back-to-back runs over the same store state (the first pass may have fetched documents on demand,
    which legitimately changes what a later run sees) give the same recommendation; a run that raises does not."""
    try:
        a = stable_json(engine.research(q.tickers[0], q.question, AS_OF))
        return a == stable_json(engine.research(q.tickers[0], q.question, AS_OF))
    except Exception:  # the question's row already says why (``_run_one``)
        log.exception("repeated research on %s raised", q.id)
        return False


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


ANSWER_PARTS = ("research", "golden", "financebench")


def run_answers(settings: Settings, corpus_dir: Path, cache_dir: Path, *, tickers: Sequence[str] = (),
                per_ticker: int = 1, determinism_runs: int = 2, seed_store: Path | None = None,
                parts: Sequence[str] = ("research",), financebench: tuple[Path, Path] | None = None,
                leave_company_out: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the checks; returns ``{"config", "metrics", "corpus_signature"}`` for ``report.result_envelope``.

    ``parts``: ``research`` (the research pipeline's checks, this module's docstring), ``golden`` and
    ``financebench`` (answer correctness, ``evaluation.answer_quality``; ``financebench`` = (data folder, store cache
    folder): its context store is built there on first use, 20-40 min on 2 cores). ``leave_company_out``: the
    tunables to measure leave-company-out over the correctness parts (empty: every registered one; None: off),
    ``metrics.leave_company_out`` (``evaluation.lco_parts``)."""

    if leave_company_out is not None:
        chosen_tunables(leave_company_out)  # an unknown name fails before anything is answered
    engine = _open_engine(settings, corpus_dir, cache_dir, seed_store or _product_seed(cache_dir))
    part: dict[str, Any] = {"config": {"benchmark": "answers", "parts": list(parts)}, "metrics": {},
                            "corpus_signature": None}
    if "research" in parts:
        part = _research_checks(engine, corpus_dir, cache_dir, tickers, per_ticker, determinism_runs)
        part["config"]["parts"] = list(parts)
    correctness: dict[str, Any] = {}
    fb_engine: EquiMindEngine | None = None
    fb_data: Path | None = None
    if "golden" in parts:
        _ensure_filings(engine, corpus_dir, [q for q in load_golden() if not q.absent])
        correctness["golden"] = golden_answers(engine)
    if "financebench" in parts and financebench is not None:
        data_dir, fb_cache = financebench
        fb_engine, ingest = financebench_engine(settings, data_dir, fb_cache)
        fb_data = data_dir
        correctness["financebench"] = {"store": str(fb_cache), "ingest": ingest,
                                       **financebench_answers(fb_engine, data_dir)}
    if correctness:
        part["metrics"]["answer_correctness"] = correctness
    if leave_company_out is not None:
        part["metrics"]["leave_company_out"] = run_lco(leave_company_out, correctness, golden_engine=engine,
                                                       fb_engine=fb_engine, fb_data=fb_data)
    return part


def _research_checks(engine: EquiMindEngine, corpus_dir: Path, cache_dir: Path, tickers: Sequence[str],
                     per_ticker: int, determinism_runs: int) -> dict[str, Any]:
    """The research pipeline's checks over a sample of golden questions (module docstring)."""
    questions = sample_questions(load_golden(), per_ticker, tickers)
    _ensure_filings(engine, corpus_dir, [q for q in questions if not q.absent])
    docs = [engine.services.docstore.get_document(r.doc_id)
            for r in engine.services.docstore.list_documents(status="indexed")]
    spans = resolve([q for q in questions if not q.absent], docs)
    tally = AnswerTally()
    for q in questions:
        _run_one(engine, q, AS_OF, tally, spans)
    probe = AnswerTally()
    for q in [q for q in questions if not q.absent][:4]:
        _run_one(engine, q, EARLY_AS_OF, probe, spans)
    repeat = [q for q in questions if not q.absent][:determinism_runs]
    same = sum(_repeats(engine, q) for q in repeat)
    metrics = _summarise(tally, probe, same, len(repeat))
    signature = corpus_signature(d.id for d in docs)
    config = {"benchmark": "answers", "provider": "offline", "as_of": AS_OF, "early_as_of": EARLY_AS_OF,
              "per_ticker": per_ticker, "tickers": list(tickers), "questions": [q.id for q in questions],
              "cache": str(cache_dir), "corpus": str(corpus_dir)}
    return {"config": config, "metrics": metrics, "corpus_signature": signature}


def _summarise(tally: AnswerTally, probe: AnswerTally, same: int, repeats: int) -> dict[str, Any]:
    absent = [r for r in tally.rows if r["type"] == "absent"]
    answerable = [r for r in tally.rows if r["type"] != "absent"]
    reached = [r for r in answerable if r["gold_reached"] is not None]
    return {
        "runs": len(tally.rows) + len(probe.rows) + 2 * repeats,
        "errors": sum(1 for r in tally.rows + probe.rows if r.get("error")),
        "citations": tally.citations + probe.citations,
        "citation_validity_rate": _rate(tally.citations_valid + probe.citations_valid,
                                        tally.citations + probe.citations),
        "claims": tally.claims, "claims_without_quote": tally.claims_uncited,
        "absent_questions": len(absent),
        "refusal_rate_absent": _rate(sum(r["refused"] for r in absent), len(absent)),
        "answerable_questions": len(answerable),
        "false_refusal_rate_answerable": _rate(sum(r["refused"] for r in answerable), len(answerable)),
        "gold_evidence_reached_rate": _rate(sum(bool(r["gold_reached"]) for r in reached), len(reached)),
        "lookahead_violations": len(tally.lookahead) + len(probe.lookahead),
        "lookahead_details": (tally.lookahead + probe.lookahead)[:20],
        "early_as_of_runs": len(probe.rows),
        "determinism_identical": same, "determinism_repeats": repeats,
        "rows": tally.rows + probe.rows,
    }
