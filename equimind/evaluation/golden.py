"""The golden set: analyst questions over the recorded ``../shared/corpus`` filings, judged at span level.

``data/golden.json`` stores each gold item as (ticker, form, filed date, short quote) — never offsets, never whole
passages. At load time every quote is resolved into the parsed canonical text of its filing by exact search; every
occurrence becomes a gold span of that item (a table row repeated in two statements counts wherever it is found).
A retrieved chunk hits gold item *i* when its [start, end) overlaps any span of item *i* in the same document.

Question types: ``factual``, ``comparison`` (gold in two filings), ``numeric_xbrl`` (the number is also in the SEC
XBRL companyfacts, recorded with the question) and ``absent`` (no gold: the answer is not in the corpus; used for
refusal checks, excluded from retrieval metrics).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from equimind.core.documents import Document, FilterSpec
from equimind.core.errors import NotFoundError, ParseError
from equimind.core.search import SearchHit
from equimind.evaluation.metrics import Judgement
from equimind.evaluation.product import add_product
from equimind.evaluation.report import corpus_signature
from equimind.evaluation.runner import (
    EvalQuery,
    cross_comparisons,
    evaluate,
    fusion_sweep,
    open_variant_store,
    stored_documents,
)
from equimind.ingest.documents import to_document
from equimind.query.filters import QueryFilterParser
from equimind.sources.snapshot import SnapshotFilingsSource

log = logging.getLogger(__name__)

QTYPES: tuple[str, ...] = ("factual", "comparison", "numeric_xbrl", "absent")
SETTINGS: tuple[str, ...] = ("shared", "shared_parsed", "single")
FilingKey = tuple[str, str, date]  # (ticker, form, filed)


@dataclass(frozen=True)
class GoldQuote:
    ticker: str
    form: str
    filed: date
    quote: str

    @property
    def key(self) -> FilingKey:
        return (self.ticker, self.form, self.filed)


@dataclass(frozen=True)
class GoldenQuestion:
    id: str
    qtype: str
    question: str
    answer: str | None
    tickers: tuple[str, ...]
    gold: tuple[GoldQuote, ...]
    xbrl: Mapping[str, Any] | None = None

    @property
    def absent(self) -> bool:
        return self.qtype == "absent"


@dataclass(frozen=True)
class ResolvedSpan:
    """One occurrence of a gold quote: [start, end) of document ``doc_id``."""

    doc_id: str
    start: int
    end: int


def default_path() -> Path:
    return Path(str(resources.files("equimind.evaluation") / "data" / "golden.json"))


def _question(row: Mapping[str, Any]) -> GoldenQuestion:
    if row["type"] not in QTYPES:
        raise ParseError(f"golden question {row['id']}: unknown type {row['type']!r}; valid: {', '.join(QTYPES)}")
    gold = tuple(GoldQuote(g["ticker"], g["form"], date.fromisoformat(g["filed"]), g["quote"]) for g in row["gold"])
    if (row["type"] == "absent") != (not gold):
        raise ParseError(f"golden question {row['id']}: absent questions have no gold and others need some")
    return GoldenQuestion(row["id"], row["type"], row["question"], row.get("answer"), tuple(row["tickers"]), gold,
                          row.get("xbrl"))


def load_golden(path: Path | None = None) -> list[GoldenQuestion]:
    """The golden questions (from the packaged data/golden.json by default)."""
    p = path or default_path()
    if not p.is_file():
        raise NotFoundError(f"golden set {p} is missing; reinstall the package or pass --golden PATH")
    questions = [_question(r) for r in json.loads(p.read_text(encoding="utf-8"))["questions"]]
    ids = [q.id for q in questions]
    if len(ids) != len(set(ids)):
        raise ParseError(f"golden set {p} has duplicate question ids")
    return questions


def filing_key(doc: Document) -> FilingKey | None:
    if doc.ticker is None or doc.filed_at is None:
        return None
    return (doc.ticker, doc.form, doc.filed_at)


def find_all(text: str, quote: str) -> list[int]:
    """Start offsets of every exact occurrence of ``quote`` in ``text``."""
    out: list[int] = []
    pos = text.find(quote)
    while pos >= 0:
        out.append(pos)
        pos = text.find(quote, pos + 1)
    return out


def resolve(questions: Iterable[GoldenQuestion], docs: Iterable[Document]) -> dict[str, list[list[ResolvedSpan]]]:
    """question id -> per gold item, its spans. Raises ParseError naming the first quote that is not found."""
    by_key = {k: d for d in docs if (k := filing_key(d)) is not None}
    out: dict[str, list[list[ResolvedSpan]]] = {}
    for q in questions:
        items: list[list[ResolvedSpan]] = []
        for g in q.gold:
            doc = by_key.get(g.key)
            if doc is None:
                raise NotFoundError(f"{q.id}: filing {g.ticker} {g.form} filed {g.filed} is not among the given "
                                    "documents; ingest the recorded corpus (--snapshot ../shared/corpus)")
            starts = find_all(doc.text, g.quote)
            if not starts:
                raise ParseError(f"{q.id}: quote {g.quote[:60]!r} is not in the canonical text of {doc.title}")
            items.append([ResolvedSpan(doc.id, s, s + len(g.quote)) for s in starts])
        out[q.id] = items
    return out


def judge_hits(hits: Sequence[tuple[str, int, int]], items: Sequence[Sequence[ResolvedSpan]]) -> Judgement:
    """Judge retrieved (doc_id, start, end) spans: rank r hits item i when it overlaps any span of item i."""
    matches = []
    for doc_id, start, end in hits:
        matches.append({i for i, spans in enumerate(items)
                        if any(s.doc_id == doc_id and min(end, s.end) > max(start, s.start) for s in spans)})
    return Judgement.of(matches, len(items))


def _judge(items: list[list[ResolvedSpan]]) -> Callable[[list[SearchHit]], Judgement]:
    def judge(hits: list[SearchHit]) -> Judgement:
        return judge_hits([(h.document.doc_id, h.start, h.end) for h in hits], items)

    return judge


def build_queries(questions: Sequence[GoldenQuestion], docs: Sequence[Document], setting: str) -> list[EvalQuery]:
    """EvalQueries for the answerable questions whose filings are all in ``docs``.

    ``shared``: no filter; ``shared_parsed``: the filter the question's company / year words imply; ``single``: the
    question's tickers (what a user researching those companies would pass).
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; valid: {', '.join(SETTINGS)}")
    keys = {filing_key(d) for d in docs}
    usable = [q for q in questions if not q.absent and all(g.key in keys for g in q.gold)]
    spans = resolve(usable, docs)
    parser = QueryFilterParser.from_documents(docs) if setting == "shared_parsed" else None
    out: list[EvalQuery] = []
    for q in usable:
        flt: FilterSpec | None = None
        if setting == "single":
            flt = FilterSpec(tickers=q.tickers)
        elif parser is not None:
            flt = parser.parse(q.question)
        out.append(EvalQuery(q.id, q.question, q.qtype, flt, _judge(spans[q.id])))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Running the golden set


def filings_needed(questions: Iterable[GoldenQuestion]) -> set[FilingKey]:
    return {g.key for q in questions for g in q.gold}


def snapshot_documents(corpus_dir: Path, tickers: Sequence[str] | None = None,
                       filings: Collection[FilingKey] | None = None) -> Iterable[Document]:
    """The recorded 10-K / 10-Q filings (of ``tickers``, and only ``filings`` when given) as Documents, read by the
    snapshot source and parsed now by ``ingest.documents`` (~2 s a filing; a filing that fails raises)."""

    source = SnapshotFilingsSource(corpus_dir)
    for entry in source.list_entries(tickers=tickers or None, forms=("10-K", "10-Q")):
        if filings is None or (entry.ticker, entry.form, entry.filed_at) in filings:
            yield to_document(source.load(entry))


def run_golden(base: Any, corpus_dir: Path, cache_dir: Path, *, variants: Sequence[str] = ("base",),
               arms: Sequence[str] = ("dense", "bm25", "hybrid", "hybrid+rerank"),
               settings_names: Sequence[str] = SETTINGS, tickers: Sequence[str] | None = None,
               filings: Collection[FilingKey] | None = None, questions: Sequence[GoldenQuestion] | None = None,
               embedder: Any = None, reranker: Any = None, tokenizer: Any = None) -> dict[str, Any]:
    """Score every (variant, setting, arm) over the golden questions whose filings are ingested.

    ``tickers`` restricts the store to those companies (the CI subset); questions needing other filings are skipped.
    Returns ``{"config", "metrics", "corpus_signature"}`` for :func:`report.result_envelope`.
    """

    qs = list(questions) if questions is not None else load_golden()
    wanted = {k for k in filings_needed(qs) if (not tickers or k[0] in tickers) and (filings is None or k in filings)}
    metrics: dict[str, Any] = {}
    ingest: dict[str, Any] = {}
    runs: dict[tuple[str, str], Any] = {}
    sweeps: dict[tuple[str, str], Any] = {}
    signature: str | None = None
    opened: dict[str, Any] = {}
    for variant in variants:
        settings = base.model_copy(update={"home": cache_dir / variant})

        def complete(docs: list[Document]) -> bool:
            return wanted <= {filing_key(d) for d in docs}

        services, ingest[variant] = open_variant_store(
            settings, variant, lambda: snapshot_documents(corpus_dir, tickers, filings), complete,
            embedder=embedder, reranker=reranker, tokenizer=tokenizer)
        opened[variant], docs = services, stored_documents(services)
        signature = corpus_signature(d.id for d in docs)
        for setting in settings_names:
            queries = build_queries(qs, docs, setting)
            summary, runs[(variant, setting)] = evaluate(services.searcher(), queries, arms)
            if "hybrid" in runs[(variant, setting)]:
                summary["fusion"] = fusion_sweep(services, queries, runs[(variant, setting)]["hybrid"],
                                                 keep=sweeps.setdefault((variant, setting), {}))
            metrics[f"{variant}/{setting}"] = summary
    metrics.update(cross_comparisons(runs, sweeps, variants, arms))
    counts = {t: sum(1 for q in qs if q.qtype == t) for t in QTYPES}
    config = {"benchmark": "golden", "corpus": str(corpus_dir), "cache": str(cache_dir), "tickers": list(tickers or []),
              "filings": sorted(f"{t} {f} {d}" for t, f, d in filings) if filings is not None else None,
              "variants": list(variants), "settings": list(settings_names), "arms": list(arms), "k": 10,
              "questions_by_type": counts, "relevance": "span overlap (>= 1 character) with any occurrence of a "
              "gold quote", "rrf_weights": {"dense": base.rrf_dense_weight, "bm25": base.rrf_bm25_weight},
              "collapse_parents": base.collapse_parents, "ingest": ingest}
    add_product(metrics, config, opened, lambda docs: build_queries(qs, docs, "shared"), runs)
    return {"config": config, "metrics": metrics, "corpus_signature": signature}
