"""Term statistics of the documents a research run can see, for the answerability check.

For each visible document (indexed, filed on or before the as-of date, of the run's subjects) the passages are the
parent spans the agents read (``Parent``: ~800 tokens), tokenised and stemmed exactly as the BM25 index does
(``answerability.stem_sets``). Per-document results are cached by document id (ids are content hashes, so a cached
entry can never go stale) in a dict the caller owns, e.g. ``Services._cache``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from equimind.lexicon.text import TOKEN
from equimind.query.analysis import NamePhrase, stem_sets

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore


@dataclass(frozen=True)
class DocTerms:
    """The stemmed token sets of one document's passages ([start, end) spans into its canonical text)."""

    doc_id: str
    form: str
    spans: tuple[tuple[int, int], ...]
    passages: tuple[frozenset[str], ...]
    vocabulary: frozenset[str]
    bigrams: frozenset[tuple[str, str]] = frozenset()  # adjacent stemmed tokens, for multi-word names


@dataclass(frozen=True)
class PassageMatch:
    doc_id: str
    start: int
    end: int
    stems: tuple[str, ...]  # the focus stems this passage contains


@dataclass(frozen=True)
class ScopeStats:
    """What the visible documents say about a set of focus stems."""

    documents: int
    passages: int
    forms: dict[str, int]  # documents per form (10-K, 10-Q, prices, ...)
    doc_freq: dict[str, int]  # stem -> number of visible documents containing it
    best: PassageMatch | None  # the passage containing the most focus stems (first such passage on ties)
    name_freq: dict[str, int] = field(default_factory=dict)  # name phrase -> visible documents writing it


def document_terms(docstore: DocStore, doc_id: str, stem: Any,
                   cache: MutableMapping[str, DocTerms] | None = None) -> DocTerms:
    if cache is not None and doc_id in cache:
        return cache[doc_id]
    doc = docstore.get_document(doc_id)
    spans = tuple(sorted({(c.parent_start, c.parent_end) for c in docstore.chunks_for_document(doc_id)}))
    if not spans:
        spans = ((0, len(doc.text)),)
    passages = tuple(stem_sets([doc.text[a:b] for a, b in spans], stem))
    seq = [str(w) for w in stem.stemWords(TOKEN.findall(doc.text.lower()))]
    terms = DocTerms(doc_id, doc.form, spans, passages, frozenset().union(*passages),
                     frozenset(pairwise(seq)))
    if cache is not None:
        cache[doc_id] = terms
    return terms


Alternatives = Mapping[str, Sequence[frozenset[str]]]


def _held(stems: Sequence[str], words: frozenset[str], alternatives: Alternatives) -> set[str]:
    """The stems ``words`` hold, itself or by one of its alternatives (every stem of it)."""
    if not alternatives:
        return set(words.intersection(stems))
    return {s for s in stems if s in words or any(a <= words for a in alternatives.get(s, ()))}


def scope_stats(docs: Sequence[DocTerms], stems: Sequence[str], names: Sequence[NamePhrase] = (),
                alternatives: Alternatives | None = None) -> ScopeStats:
    """Document frequency of each stem (and of each multi-word name, as adjacent words) over ``docs`` and the passage
    holding most of the stems (ties: first in order); ``alternatives``: stem -> the stem sets a document may hold
    instead (``vocabulary.stem_alternatives``: "repurchase" for "buyback")."""
    alts = alternatives or {}
    best: PassageMatch | None = None
    best_n = 0
    forms: dict[str, int] = {}
    for d in docs:
        forms[d.form] = forms.get(d.form, 0) + 1
        if not _held(stems, d.vocabulary, alts):
            continue
        for (a, b), p in zip(d.spans, d.passages, strict=True):
            hit = _held(stems, p, alts)
            if len(hit) > best_n:
                best_n = len(hit)
                best = PassageMatch(d.doc_id, a, b, tuple(s for s in stems if s in hit))
    freq = {s: sum(1 for d in docs if _held([s], d.vocabulary, alts)) for s in stems}
    name_freq = {n.text: sum(1 for d in docs if all(b in d.bigrams for b in n.bigrams)) for n in names}
    return ScopeStats(documents=len(docs), passages=sum(len(d.spans) for d in docs), forms=forms,
                      doc_freq=freq, best=best, name_freq=name_freq)
