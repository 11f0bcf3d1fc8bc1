"""Refusal accounting of the answerability check alone (ADR 0006), without running a debate per question.

The check is a function of (question, the subject's documents visible at the as-of date, retrieved evidence) and
its verdict depends only on the visible documents (evidence is a subset of them and is only logged), so it can be
measured over a store directly:

* **golden** — every golden question against a store that holds what the research runs fetched (e.g. the
  ``eval answers`` cache): absent questions should be refused, the 67 answerable ones should not;
* **FinanceBench dev** — every question against its own document in the FinanceBench store (all answerable; the
  company is the question's document), a held-out check for false refusals.

``equimind eval refusals --json benchmarks/results/eval_refusals.json`` runs both over the cached evaluation stores
(``.equimind_cache/eval/answers`` and ``.../financebench/base``). Stores are only read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.answer.answerability import AnswerabilityCheck, AnswerabilityVerdict
from equimind.core.errors import NotFoundError
from equimind.evaluation.golden import load_golden
from equimind.query.analysis import Subject, name_words
from equimind.query.parsed import QuestionParser
from equimind.store.docstore import DocStore

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore

AS_OF = date(2025, 9, 30)  # the as-of date of ``eval answers``


def _row(qid: str, qtype: str, v: AnswerabilityVerdict) -> dict[str, Any]:
    return {"id": qid, "type": qtype, "kind": v.analysis.kind.value, "refused": not v.answerable, "rule": v.rule,
            "focus_terms": [t.word for t in v.analysis.terms], "missing": [t.word for t in v.missing]}


def _rate(rows: Sequence[dict[str, Any]]) -> float | None:
    return round(sum(r["refused"] for r in rows) / len(rows), 4) if rows else None


def golden_refusals(docstore: DocStore, as_of: date = AS_OF) -> dict[str, Any]:
    check = AnswerabilityCheck(docstore)
    parser = QuestionParser(docstore, shaping=False)
    rows = [_row(q.id, q.qtype, check.run(parser.parse(q.question, as_of, q.tickers[0]))) for q in load_golden()]
    absent = [r for r in rows if r["type"] == "absent"]
    answerable = [r for r in rows if r["type"] != "absent"]
    return {"as_of": as_of.isoformat(), "absent_questions": len(absent), "refusal_rate_absent": _rate(absent),
            "answerable_questions": len(answerable), "false_refusal_rate_answerable": _rate(answerable),
            "rows": rows}


def financebench_refusals(docstore: DocStore, data_dir: Path) -> dict[str, Any]:
    check = AnswerabilityCheck(docstore)
    parser = QuestionParser(docstore, shaping=False)
    docs = {}
    for ref in docstore.list_documents(status="indexed"):
        key = docstore.get_document(ref.doc_id).source_key.split(":", 1)[-1].rsplit(".", 1)[0]
        docs[key] = ref
    companies: dict[str, list[str]] = {}
    for ref in docs.values():
        companies.setdefault(ref.company or ref.title, []).append(ref.doc_id)
    rows = []
    for line in (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        ref = docs[q["doc_name"]]
        company = ref.company or ref.title
        subject = Subject(company, name_words(company), (ref.doc_id,))
        others = [Subject(c, name_words(c), tuple(ids)) for c, ids in sorted(companies.items()) if c != company]
        parsed = parser.read(q["question"], subject.key, date.max, subject, others)
        rows.append(_row(q["financebench_id"], "answerable", check.verdict(parsed.ask, subject, others)))
    return {"questions": len(rows), "false_refusal_rate": _rate(rows), "rows": rows}


def run_refusals(golden_home: Path, financebench_home: Path | None = None,
                 financebench_data: Path | None = None) -> dict[str, Any]:
    """Both accountings as a result part (``config``, ``metrics``) for ``report.result_envelope``; stores are only
    read. ``financebench_home`` is skipped (with a note) when it holds no store."""

    golden_db = golden_home / "docstore.sqlite"
    if not golden_db.is_file():
        raise NotFoundError(f"no store at {golden_home}; run `equimind eval answers` first (it fills that store)")
    metrics: dict[str, Any] = {"golden": golden_refusals(DocStore(golden_db))}
    config: dict[str, Any] = {"benchmark": "refusals", "golden_home": str(golden_home), "as_of": AS_OF.isoformat()}
    if financebench_home is not None and (financebench_home / "docstore.sqlite").is_file() and financebench_data:
        metrics["financebench"] = financebench_refusals(DocStore(financebench_home / "docstore.sqlite"),
                                                        financebench_data)
        config["financebench_home"] = str(financebench_home)
    elif financebench_home is not None:
        metrics["financebench"] = {"skipped": f"no FinanceBench store at {financebench_home}; run "
                                              "`equimind eval retrieval --benchmark financebench` first"}
    return {"config": config, "metrics": metrics, "corpus_signature": None}
