"""Answer quality of the answer path (``Answerer``): the correctness blocks of ``equimind eval answers`` (issue 14).

* **golden** — every golden question answered over the ``eval answers`` store (all recorded filings ingested) and
  judged per type by ``evaluation.answer_probe`` (numeric: value equals the gold value after unit / scale
  normalisation, or a cited span overlaps a gold span; text: a cited span overlaps a gold span; comparison: every side
  answered; absent: refused), with Wilson intervals and false refusals.
* **FinanceBench dev** — every question asked the way a user asks ``equimind ask`` over the FinanceBench store
  (context variant: the product's store format): the product search (shared store, filter parsed from the question's
  own words, never gold data), the company taken from the same parse (or, for a question that names none, the
  company the search's top passages overwhelmingly come from, as ``equimind ask`` takes it: ``retrieval.subject``; a
  name two stored companies answer to is refused ``ambiguous_company``), no XBRL (the PDFs carry none: the answer path
  says so in ``degraded``), the offline answerer. Judged two ways, per question type:
  ``on_gold_page`` — a cited quote lies on a gold evidence page; ``numbers_found`` — every number of the gold answer
  is in the answer or in the passages its quotes come from (numbers compared after removing $ and commas and at
  every scale of thousands / millions / billions, at the precision the gold answer states). Questions whose gold
  answer is computed (``question_reasoning`` names numerical reasoning: ratios, changes) are reported apart: the
  answerer computes those it has a formula for (``answer/computed.py``) and can only quote the inputs of the others.
  Every question there is answerable, so every refusal is a false refusal. A question whose answering raises is a
  row with its ``error`` (``"<ExceptionType>: <message>"``), not refused, a miss (neither on a gold page nor with its
  numbers found), tallied as ``errors``; the run goes on.

No question text, company or year is special-cased; the questions are only read to be asked and judged.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.answer.answerer import Answerer
from equimind.answer.record import Answer
from equimind.app.engine import EquiMindEngine
from equimind.core.config import ProviderName, Settings
from equimind.core.documents import Document
from equimind.evaluation.answer_probe import AS_OF, gold_numbers, run_probe, wilson
from equimind.evaluation.financebench import open_store
from equimind.evaluation.golden import load_golden, resolve
from equimind.evaluation.runner import product_variant
from equimind.lexicon.calendar import MONTHS
from equimind.query.analysis import Subject, name_words
from equimind.retrieval.subject import company_of_hits

if TYPE_CHECKING:
    from equimind.app.services import Services

log = logging.getLogger(__name__)

FB_AS_OF = date(2100, 1, 1)  # every FinanceBench document is visible: the benchmark has no as-of date
SCALES = (1.0, 1e3, 1e6, 1e9)
_NUM = re.compile(r"(?<![\w.])\(?-?\$?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")


_STATED_DATE = re.compile(rf"\b(?:{'|'.join(m.capitalize() for m in MONTHS)})\s+\d{{1,2}},\s+\d{{4}}")


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` ($, commas and parentheses removed), as written (no scale applied)."""
    return [float(m.group(1).replace(",", "")) for m in _NUM.finditer(text or "")]


def number_found(gold: tuple[float, float], found: Sequence[float]) -> bool:
    """The gold number (value, half a unit of its last digit) equals a found number at some common scale."""
    value, tol = gold
    return any(abs(n * s - value) <= tol for n in found for s in SCALES)


def computed(row: dict[str, Any]) -> bool:
    return "numerical reasoning" in str(row.get("question_reasoning") or "").lower()


def _subjects(docs: Sequence[Document], companies: Sequence[str]) -> tuple[Subject, list[Subject]] | None:
    """The first company the question names (by the product's filter parse) with all its documents; the others."""
    by_company: dict[str, list[str]] = {}
    for d in docs:
        by_company.setdefault(d.company or d.title, []).append(d.id)
    if not companies or companies[0] not in by_company:
        return None
    own = companies[0]
    subject = Subject(own, name_words(own), tuple(by_company[own]))
    return subject, [Subject(c, name_words(c), tuple(ids)) for c, ids in sorted(by_company.items()) if c != own]


def _cited_text(ans: Answer, texts: dict[str, str]) -> str:
    """The answer's sentences plus each passage read that holds one of its quotes."""
    quotes = [q for s in ans.sentences for q in s.quotes]
    # the dates an answer adds ("fiscal 2023 (the year ended January 28, 2023)") are no figure it states
    parts = [_STATED_DATE.sub(" ", s.text) for s in ans.sentences]
    for p in ans.passages_searched:
        if any(q.doc_id == p.doc_id and p.start <= q.start and q.end <= p.end for q in quotes):
            parts.append(texts[p.doc_id][p.start:p.end])
    parts += [q.text for q in quotes]
    return "\n".join(parts)


def judge_fb(row: dict[str, Any], ans: Answer, docs: dict[str, Document]) -> dict[str, Any]:
    """One FinanceBench answer judged: refused, on a gold page, every gold number found."""
    gold_pages = {(e["doc_name"], int(e["evidence_page_num"])) for e in row.get("evidence", [])}
    on_page = False
    for q in (q for s in ans.sentences for q in s.quotes):
        doc = docs[q.doc_id]
        pages = doc.pages_for(q.start, q.end)
        name = dict(doc.meta).get("doc_name")
        if pages is not None and any((name, p) in gold_pages for p in range(pages[0], pages[1] + 1)):
            on_page = True
    golds = gold_numbers(str(row.get("answer") or ""))
    found = numbers_in(_cited_text(ans, {d: docs[d].text for d in docs}))
    all_found = bool(golds) and not ans.refused and all(number_found(g, found) for g in golds)
    return {"id": row["financebench_id"], "type": row["question_type"], "computed": computed(row),
            "refused": ans.refused, "refusal": ans.refusal.reason.value if ans.refusal else None,
            "support": ans.support.value, "on_gold_page": on_page, "gold_numbers": len(golds),
            "numbers_found": all_found, "answer": ans.text[:300], "gold": str(row.get("answer"))[:200]}


def _share(k: int, n: int) -> dict[str, Any]:
    return {"k": k, "n": n, "share": round(k / n, 3) if n else None, "ci95": wilson(k, n)}


def fb_tally(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per question type and for computed vs extracted answers: refusals, on-gold-page share, numbers-found share
    (over questions whose gold answer has a number), answer-bearing share (either), and the questions whose
    answering raised (``errors``: each is a row with its ``error``, counted a miss)."""
    groups: dict[str, list[dict[str, Any]]] = {"all": list(rows)}
    for r in rows:
        groups.setdefault(f"type:{r['type']}", []).append(r)
        groups.setdefault("computed" if r["computed"] else "extracted", []).append(r)
    out: dict[str, Any] = {}
    for name, mine in groups.items():
        numeric = [r for r in mine if r["gold_numbers"]]
        out[name] = {"n": len(mine), "errors": sum(1 for r in mine if r.get("error")),
                     "refused": _share(sum(r["refused"] for r in mine), len(mine)),
                     "on_gold_page": _share(sum(r["on_gold_page"] for r in mine), len(mine)),
                     "numbers_found": _share(sum(r["numbers_found"] for r in numeric), len(numeric)),
                     "answer_bearing": _share(sum(r["on_gold_page"] or r["numbers_found"] for r in mine),
                                              len(mine))}
    return out


def golden_answers(engine: EquiMindEngine) -> dict[str, Any]:
    """Every golden question answered over ``engine``'s store (which must hold the recorded filings) and judged per
    type (``answer_probe``): ``by_type``, ``misses_by_cause`` and one row per question."""
    services = engine.services
    docs = [services.docstore.get_document(r.doc_id) for r in services.docstore.list_documents(status="indexed")]
    questions = load_golden()
    spans = resolve([q for q in questions if not q.absent], docs)
    return {"as_of": AS_OF.isoformat(), **run_probe(engine, services.answerer(), questions, spans, AS_OF)}


def financebench_engine(settings: Settings, data_dir: Path, cache_dir: Path) -> tuple[EquiMindEngine, Any]:
    """An engine over the FinanceBench product-format store under ``cache_dir/<variant>`` (ingested from the PDFs on
    first use), offline: the recorded corpus as its sources (the SEC ticker map that names the PDFs' registrants; no
    network), no LLM."""
    variant = product_variant()
    store_settings = settings.model_copy(update={"home": cache_dir / variant, "provider": ProviderName.OFFLINE,
                                                 "snapshot": settings.corpus_dir})
    services: Services
    services, ingest = open_store(store_settings, data_dir, variant)
    return EquiMindEngine(services), ingest


def financebench_answers(engine: EquiMindEngine, data_dir: Path) -> dict[str, Any]:
    """Ask every FinanceBench dev question through the product search and the offline answerer; judged rows and
    tallies (module docstring)."""
    services = engine.services
    docs = {d.id: d for d in (services.docstore.get_document(r.doc_id)
                              for r in services.docstore.list_documents(status="indexed"))}
    answerer = Answerer(services.docstore, facts=None, terms_cache=services.answerability_terms,
                        similarity=services.unit_similarity)
    parser = services.filter_parser()
    rows: list[dict[str, Any]] = []
    for line in (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        try:
            rows.append({**_fb_answer(engine, answerer, parser, row, docs), "error": None})
        except Exception as exc:  # one question's failure is its row; the run goes on
            log.exception("FinanceBench question %s raised", row.get("financebench_id"))
            rows.append(_fb_row(row, refused=False, refusal=None, support=None, error=error_text(exc)))
    return {"by_type": fb_tally(rows), "rows": rows}


def error_text(exc: BaseException) -> str:
    """How a row names the exception its question raised: ``"<ExceptionType>: <message>"``."""
    return f"{type(exc).__name__}: {exc}"


def _fb_row(row: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The row of a question that got no answer to judge (no company recognised, or its answering raised)."""
    return {"id": row["financebench_id"], "type": row["question_type"], "computed": computed(row),
            "refused": fields["refused"], "refusal": fields["refusal"], "support": fields["support"],
            "on_gold_page": False, "gold_numbers": len(gold_numbers(str(row.get("answer") or ""))),
            "numbers_found": False, "answer": "", "gold": str(row.get("answer"))[:200], "error": fields["error"]}


def _fb_answer(engine: EquiMindEngine, answerer: Answerer, parser: Any, row: dict[str, Any],
               docs: dict[str, Document]) -> dict[str, Any]:
    """One FinanceBench question asked and judged (``financebench_answers``)."""
    services = engine.services
    question = row["question"]
    named = parser.explain(question)
    if named.ambiguity_error():  # the product's ask refuses a name two stored companies answer to
        return _fb_row(row, refused=True, refusal="ambiguous_company", support="refused", error=None)
    hits = engine.search(question).hits
    companies, company_from = list(named.companies), "the question's words"
    if not companies:  # as ``equimind ask`` does: the company the search's top passages overwhelmingly come from
        found = company_of_hits(question, hits)
        if found is not None and found.company:
            companies, company_from = [found.company], found.describe()
    scope = _subjects(list(docs.values()), companies)
    if scope is None:
        return _fb_row(row, refused=True, refusal="no_company", support="refused", error=None)
    pq = services.question_parser.read(question, scope[0].key, FB_AS_OF, scope[0], scope[1],
                                       company_from=company_from)
    return {**judge_fb(row, answerer.answer(pq, hits), docs), "company_from": company_from}
