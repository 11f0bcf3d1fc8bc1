"""The answerability check: refuse a specific ask that the visible documents do not answer
(docs/decisions/0006-answerability-check.md).

``AnswerabilityCheck.run(parsed_question, evidence)`` takes the question as parsed once (``query/parsed.py``: its
ask, and the documents the run can see — the indexed documents of the ticker, and of companies the question
compares it with, filed on or before the as-of date) and applies ``judge``:

A decision/outlook ask is always answerable (it gets a rating). A specific ask is **not answerable** when

* (a) a proper-noun focus term (capitalised inside the sentence: a place, a product, another company) occurs in
  none of the visible documents, or a multi-word proper name ("Arm Holdings") is written as adjacent words in none
  of them (a document that names the entity writes its name; one that says "Arm" elsewhere does not); or
* (b) at least ``MIN_MISSING`` (2) focus terms occur in none of them and they are at least ``MISSING_SHARE`` (1/3)
  of the focus terms; or
* (c) the ask has at least ``MIN_TERMS_FOR_PASSAGE`` (3) focus terms, one is missing, and no single passage holds
  ``PASSAGE_SHARE`` (half) of them.

A focus term counts as present where a phrase of its vocabulary group is (``vocabulary.GROUPS``: "repurchase" for
"buyback", "programme" for "program"). A missing acronym (EBITDA, DPO, ROA: usually the analyst's abbreviation of
words the filing spells out) is reported but counts for none of the rules. One missing common word alone never
refuses: questions paraphrase ("headcount" for "employees", "pour into" for "invest"), and the dense leg of retrieval
bridges paraphrase. Deterministic: sets, counts and document order only.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import Stemmer

from equimind.answer.exhibits import stored_exhibit_note, with_note
from equimind.answer.term_index import DocTerms, PassageMatch, ScopeStats, document_terms, scope_stats
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import filter_dated
from equimind.lexicon.vocabulary import stem_alternatives
from equimind.query.analysis import AskAnalysis, AskKind, FocusTerm, Subject, stem_sets
from equimind.query.parsed import ParsedQuestion

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore

log = logging.getLogger(__name__)

MIN_MISSING = 2
MISSING_SHARE = 1 / 3
MIN_TERMS_FOR_PASSAGE = 3
PASSAGE_SHARE = 0.5
FILING_FORMS_HINT = "10-K,10-Q,8-K"
MARKET_FORMS = frozenset({"prices", "fundamentals", "companyfacts", "news"})  # documents that are not filings


@dataclass(frozen=True)
class AnswerabilityVerdict:
    answerable: bool
    analysis: AskAnalysis
    rule: str
    scope: tuple[str, ...]
    missing: tuple[FocusTerm, ...] = ()
    doc_freq: dict[str, int] = field(default_factory=dict)  # focus word -> visible documents containing it
    documents: int = 0
    passages: int = 0
    forms: dict[str, int] = field(default_factory=dict)
    best: PassageMatch | None = None
    evidence_best: int | None = None  # most focus terms in one retrieved evidence passage
    reason: str | None = None

    def to_log(self) -> dict[str, Any]:
        best = self.best
        return {**self.analysis.to_log(), "answerable": self.answerable, "rule": self.rule,
                "scope": list(self.scope), "missing": [t.word for t in self.missing], "doc_freq": self.doc_freq,
                "documents_searched": self.documents, "passages_searched": self.passages, "forms": self.forms,
                "best_passage": None if best is None else {"doc_id": best.doc_id, "span": [best.start, best.end],
                                                           "terms": len(best.stems), "of": len(self.analysis.terms)},
                "evidence_best_terms": self.evidence_best, "reason": self.reason}


def judge(analysis: AskAnalysis, stats: ScopeStats, scope: Sequence[str]) -> AnswerabilityVerdict:
    """The refusal rule (module docstring) over the focus terms' document frequencies and best passage."""
    if analysis.kind is AskKind.DECISION:
        return AnswerabilityVerdict(True, analysis, f"decision ask ({analysis.cue}): always rated", tuple(scope))
    terms = analysis.terms
    freq = {t.word: stats.doc_freq.get(t.stem, 0) for t in terms}
    missing = tuple(t for t in terms if freq[t.word] == 0 and not t.acronym)
    base = {"analysis": analysis, "scope": tuple(scope), "missing": missing, "doc_freq": freq,
            "documents": stats.documents, "passages": stats.passages, "forms": dict(stats.forms), "best": stats.best}
    covered = len(stats.best.stems) if stats.best else 0
    checkable = [t for t in terms if not (t.acronym and freq[t.word] == 0)]
    unnamed = [n for n, k in stats.name_freq.items() if k == 0]
    rule = _failed_rule(checkable, missing, covered) or (
        f"(a) the name {', '.join(repr(n) for n in unnamed)} is written in no visible document" if unnamed else None)
    if rule is None:
        why = "no focus terms to check" if not terms else (
            f"{len(terms) - len(missing)} of {len(terms)} focus terms found; best passage holds {covered}")
        return AnswerabilityVerdict(True, rule=why, **base)  # type: ignore[arg-type]
    return AnswerabilityVerdict(False, rule=rule, reason=_reason(analysis, missing, stats, scope, covered, unnamed),
                                **base)  # type: ignore[arg-type]


def _failed_rule(terms: Sequence[FocusTerm], missing: Sequence[FocusTerm], covered: int) -> str | None:
    if not terms or not missing:
        return None
    if any(t.proper for t in missing):
        return "(a) a proper-noun focus term occurs in no visible document"
    if len(missing) >= MIN_MISSING and len(missing) >= MISSING_SHARE * len(terms):
        return f"(b) {len(missing)} of {len(terms)} focus terms occur in no visible document"
    if len(terms) >= MIN_TERMS_FOR_PASSAGE and covered < PASSAGE_SHARE * len(terms):
        return f"(c) no single passage holds half of the {len(terms)} focus terms (best: {covered})"
    return None


def _reason(analysis: AskAnalysis, missing: Sequence[FocusTerm], stats: ScopeStats, scope: Sequence[str],
            covered: int, unnamed: Sequence[str] = ()) -> str:
    who = " and ".join(scope)
    forms = ", ".join(f"{n} {f}" for f, n in sorted(stats.forms.items())) or "none"
    terms = ", ".join(f"'{t.word}'" for t in analysis.terms)
    if unnamed and not missing:
        what = (f"the question's specific ask ({terms}) is not answered by the evidence: the name "
                f"{', '.join(repr(n) for n in unnamed)} is written in none of the {stats.documents} documents visible "
                f"for {who} ({forms}; {stats.passages} passages searched)")
    elif missing:
        what = (f"the question's specific ask ({terms}) is not answered by the evidence: "
                f"{', '.join(repr(t.word) for t in missing)} occur{'s' if len(missing) == 1 else ''} in none of the "
                f"{stats.documents} documents visible for {who} ({forms}; {stats.passages} passages searched)")
    else:
        what = (f"the question's specific ask ({terms}) is not answered by the evidence: no single passage of the "
                f"{stats.documents} documents visible for {who} ({forms}; {stats.passages} passages) holds more "
                f"than {covered} of those terms")
    if not any(f not in MARKET_FORMS for f in stats.forms):
        what += f"; no filing of {who} dated on or before the as-of date is stored, only market data"
    return (f"{what}. For a rating, ask a decision question such as \"Should I buy {scope[0]}?\"; to answer this "
            f"question, ingest the filing that reports it (e.g. `equimind ingest --tickers {scope[0]} --forms "
            f"{FILING_FORMS_HINT}`) and ask again")


class AnswerabilityCheck:
    """Builds the run's scope from the docstore and judges the question. ``cache`` (doc id -> DocTerms) may be
    shared across runs: document ids are content hashes."""

    def __init__(self, docstore: DocStore, cache: MutableMapping[str, DocTerms] | None = None) -> None:

        self.docstore = docstore
        self.cache: MutableMapping[str, DocTerms] = {} if cache is None else cache
        self._stem = Stemmer.Stemmer("english")  # the BM25 index's stemmer (store.sparse.STEMMER_LANGUAGE)

    def verdict(self, analysis: AskAnalysis, subject: Subject, others: Sequence[Subject],
                evidence: Sequence[EvidenceNode] = ()) -> AnswerabilityVerdict:
        """The verdict for the parsed ask over ``subject`` (plus compared ``others``): usable without a research
        run, e.g. on a benchmark's own documents."""
        scope = [subject, *[o for o in others if o.key in analysis.co_subjects]]
        if analysis.kind is AskKind.DECISION:  # always rated: the documents' term sets would go unused
            return judge(analysis, scope_stats([], []), [s.key for s in scope])
        docs = [document_terms(self.docstore, d, self._stem, self.cache) for s in scope for d in s.doc_ids]
        stems = [t.stem for t in analysis.terms]
        alternatives = stem_alternatives(stems, self._stem)
        verdict = judge(analysis, scope_stats(docs, stems, analysis.names, alternatives), [s.key for s in scope])
        if not verdict.answerable:  # the filing's substance in an exhibit not stored (answer/exhibits.py)
            verdict = replace(verdict, reason=with_note(verdict.reason or verdict.rule,
                                                        stored_exhibit_note(self.docstore, subject.doc_ids)))
        if evidence and stems:
            sets = stem_sets([n.text for n in evidence], self._stem)
            verdict = _with_evidence(verdict, max(len(set(stems) & s) for s in sets))
        return verdict

    def run(self, pq: ParsedQuestion, evidence: Sequence[EvidenceNode] = ()) -> AnswerabilityVerdict:
        """The verdict for the parsed question over its subjects (``pq`` rescoped to the documents visible now)."""
        verdict = self.verdict(pq.ask, pq.subject, pq.others, filter_dated(list(evidence), pq.as_of))
        log.info("answerability %s: %s (%s)", pq.ticker, "answerable" if verdict.answerable else "refused",
                 verdict.rule)
        return verdict


def _with_evidence(v: AnswerabilityVerdict, best: int) -> AnswerabilityVerdict:

    return replace(v, evidence_best=best)
