"""Parse the company and fiscal-period words of a question into a FilterSpec, as a user's own words would be.

The vocabulary comes only from the documents in the store: each document's company name (with legal suffixes such as
"Inc." or "Corp" dropped, so "NVIDIA CORP" answers to "NVIDIA"), its ticker, and its fiscal year (the ``fiscal_year``
metadata a local file carries, else the year of ``period_end``, else of ``filed_at``). Nothing is learned from gold
answers or evidence.

Rules (applied in order):

1. Companies: a document matches when one of its aliases occurs in the question as a whole word. A one-word alias
   that is also an ordinary word ("Block", "Target") must be written as a proper noun (capitalised or upper case);
   longer aliases and tickers match case-insensitively / as upper-case words respectively. A clipped compound of a
   name of two or more words ("AMEX" or "AmEx" for American Express, "FedEx" for Federal Express) matches too: a word
   of four to ten letters, written in upper case or with a capital inside, that is the words' leading letters (at
   least two of each word, every word in order; "of", "and", "the" skipped) run together.
2. Periods: four-digit years (``2018``, ``FY2018``, ``fiscal 2018``) and ``FY18``-style short years are read. When a
   company matched, its documents are narrowed to those whose fiscal year is mentioned, if any is; a question whose
   years match none of that company's documents keeps all of them (the user may be asking about a comparative year).
3. No company named: the filter is empty (a year alone is too weak to restrict a store of many companies).

The product applies it in ``EquiMindEngine.search`` when the caller gives no filter (``auto_filter``, on by default;
``--no-auto-filter`` / ``"auto_filter": false`` turn it off), and says in the result which words set which filter.
Measured on the FinanceBench dev split and the golden set: docs/evaluation.md.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from equimind.core.documents import Document, FilterSpec
from equimind.ingest.identity import IDENTITY_CHARS, FilingIdentity, filing_identity, has_identity_meta
from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS
from equimind.query.identity import (
    CompanyEntry,
    DocFacts,
    IdentityModel,
    Registrants,
    RegistrantTickers,
    alias_pattern,
    company_aliases,
    name_key,
    short_name,
)

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore

_YEAR = re.compile(r"(?<![\d$.,])(?:FY\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})(?!\d|[,.]\d)", re.IGNORECASE)
_DATE_BEFORE = re.compile(rf"\b(?:{'|'.join((*MONTHS, *MONTH_ABBREVIATIONS))})\.?\s+(?:\d{{1,2}},?\s+)?$",
                          re.IGNORECASE)
_SHORT_FY = re.compile(r"\bFY\s?'?(\d{2})\b", re.IGNORECASE)
_CLIPPED = re.compile(r"(?<![\w-])([A-Z][A-Za-z]{3,9})(?:'s)?(?![\w-])")
_NAME_FILLERS = frozenset(["of", "and", "the"])


def name_words(company: str | None) -> tuple[str, ...]:
    """The words of a company's name without legal suffixes, lower case, fillers dropped ("American Express")."""
    return tuple(w for w in re.findall(r"[a-z]+", short_name(company).lower()) if w not in _NAME_FILLERS)


def is_clipped_form(token: str, words: Sequence[str]) -> bool:
    """``token`` (lower case) is the leading letters of every word of ``words``, two or more of each, in order."""
    if not words:
        return not token
    head, rest = words[0], words[1:]
    return any(token[:n] == head[:n] and is_clipped_form(token[n:], rest)
               for n in range(2, min(len(head), len(token)) + 1))


def clipped_tokens(question: str) -> list[str]:
    """Words of ``question`` that may be a clipped company name: upper case, or with a capital inside."""
    return [t.lower() for t in _CLIPPED.findall(question) if t.isupper() or any(c.isupper() for c in t[1:])]


def mentioned_years(text: str, today: date | None = None) -> set[int]:
    """Four-digit years and FY-prefixed two-digit years written in ``text``. A year that is part of a calendar date
    ("July 2025", "May 1, 2024") is not a fiscal year: NVIDIA's July 2025 quarter is in its fiscal 2026."""
    years = {int(m.group(1)) for m in _YEAR.finditer(text) if not _DATE_BEFORE.search(text, 0, m.start())}
    century = ((today or date.today()).year // 100) * 100
    years |= {century + int(m.group(1)) for m in _SHORT_FY.finditer(text)}
    return years


@dataclass(frozen=True)
class ParsedQuery:
    """A parsed filter and what set it: the named companies and the fiscal years that narrowed their documents.
    ``ambiguous``: groups of companies (as in ``companies``) that one name in the query names equally; the filter
    keeps them all, a caller that needs one company raises (``ambiguity_error``)."""

    spec: FilterSpec
    companies: tuple[str, ...]
    years: tuple[int, ...]
    ambiguous: tuple[tuple[str, ...], ...] = ()

    def describe(self) -> str:
        if self.spec.is_empty():
            return "no stored company named in the query; searched everything"
        period = f", fiscal {', '.join(map(str, self.years))}" if self.years else ""
        n = len(self.spec.doc_ids)
        return (f"filter parsed from the query: {'; '.join(self.companies)}{period} "
                f"({n} document{'s' if n != 1 else ''})")

    def ambiguity_error(self) -> str | None:
        """The message of the error a caller needing one company raises, or None when no name is ambiguous."""
        if not self.ambiguous:
            return None
        listed = "; ".join(" or ".join(g) for g in self.ambiguous)
        return f"the query could be about several stored companies: {listed}; pass --ticker to choose one"


def company_entries(facts: Sequence[DocFacts], tickers: Mapping[str, str]) -> dict[str, CompanyEntry]:
    """doc_id -> its company as the identity model reads it: keyed by ticker, else by name, else by document."""
    groups: dict[str, tuple[str | None, list[str]]] = {}
    doc_key: dict[str, str] = {}
    for f in facts:
        ticker = f.ticker or tickers.get(f.doc_id)
        key = (ticker.upper() if ticker else "") or name_key(f.company or "") or name_key(f.registrant) or f.doc_id
        doc_key[f.doc_id] = key
        names = groups.setdefault(key, (ticker, []))[1]
        names += [n for n in f.names() if n not in names]
    entries = {k: CompanyEntry(k, tuple(names), t) for k, (t, names) in groups.items()}
    return {doc: entries[k] for doc, k in doc_key.items()}


class QueryFilterParser:
    """Builds FilterSpecs from question text, using a fixed set of stored documents' facts. ``tickers`` (doc_id ->
    ticker) names the ticker of documents that carry none (``company_identity.registrant_tickers``);
    ``ticker_names`` (the SEC map, ticker -> registrant name; else the map ``tickers`` was joined from) gives the
    registrant names a leading word must not start (``query/identity.py``)."""

    def __init__(self, facts: Iterable[DocFacts], tickers: Mapping[str, str] | None = None,
                 ticker_names: Mapping[str, str] | None = None) -> None:
        self.facts = tuple(facts)
        registrants = Registrants(ticker_names) if ticker_names is not None else \
            tickers.registrants if isinstance(tickers, RegistrantTickers) else None
        self._entry = company_entries(self.facts, tickers or {})
        self.doc_tickers: dict[str, str] = dict(tickers or {})  # a ticker-less document -> its registrant's ticker
        self.identity = IdentityModel({e.key: e for e in self._entry.values()}.values(), registrants)
        self._words = {f.doc_id: words for f in self.facts if len(words := name_words(f.company)) >= 2}

    @classmethod
    def from_documents(cls, docs: Iterable[Document], ticker_names: Mapping[str, str] | None = None) -> \
            QueryFilterParser:
        return cls((DocFacts.of(d) for d in docs), ticker_names=ticker_names)

    def _named(self, question: str) -> tuple[list[DocFacts], tuple[tuple[str, ...], ...]]:
        keys, groups = self.identity.named(question)
        clipped = clipped_tokens(question)
        named = [f for f in self.facts if self._entry[f.doc_id].key in keys
                 or any(is_clipped_form(t, self._words.get(f.doc_id, ())) for t in clipped)]
        return named, groups

    def companies(self, question: str) -> list[DocFacts]:
        """Documents whose company (or ticker, or a clipped form of its name) the question names."""
        return self._named(question)[0]

    def parse(self, question: str) -> FilterSpec:
        """The filter the question's own words imply (empty when it names no stored company)."""
        return self.explain(question).spec

    def explain(self, question: str) -> ParsedQuery:
        """The filter with the companies and years that set it, and the names that name several companies."""
        named, groups = self._named(question)
        if not named:
            return ParsedQuery(FilterSpec(), (), ())
        years = mentioned_years(question)
        narrowed = [f for f in named if f.fiscal_year in years] if years else []
        chosen = narrowed or named
        companies = tuple(sorted({_label(f) for f in chosen}))
        used_years = tuple(sorted({f.fiscal_year for f in narrowed if f.fiscal_year is not None}))
        labels = {k: sorted({_label(f) for f in named if self._entry[f.doc_id].key == k}) for g in groups for k in g}
        ambiguous = tuple(tuple(sorted({lb for k in g for lb in labels[k][:1]})) for g in groups)
        return ParsedQuery(FilterSpec(doc_ids=tuple(sorted({f.doc_id for f in chosen}))), companies, used_years,
                           tuple(g for g in ambiguous if len(g) > 1))


def _label(f: DocFacts) -> str:
    return f.company or f.registrant or f.ticker or f.doc_id


class StoreFilterParser:
    """A QueryFilterParser over a docstore's indexed documents, rebuilt when the indexed set changes. ``tickers``
    gives ticker-less documents their registrant's ticker (``Services`` joins them with the SEC ticker map). A
    document stored before ingest recorded its identity (``registrant_name`` / ``short_names`` meta) has it read
    from the first characters of its text, once per document (ids name one text forever)."""

    def __init__(self, docstore: DocStore,
                 tickers: Callable[[Sequence[DocFacts]], Mapping[str, str]] | None = None) -> None:
        self.docstore = docstore
        self._tickers = tickers
        self._stamp: str | None = None
        self._parser: QueryFilterParser | None = None
        self._identities: dict[str, FilingIdentity] = {}
        self._lock = threading.Lock()

    def parser(self) -> QueryFilterParser:
        stamp = self.docstore.index_stamp()
        with self._lock:
            if self._parser is None or stamp != self._stamp:
                rows = self.docstore.list_documents_with_meta(status="indexed")
                facts = [self._with_identity(DocFacts.of_ref(ref, meta), meta) for ref, meta in rows]
                self._parser = QueryFilterParser(facts, self._tickers(facts) if self._tickers else None)
                self._stamp = stamp
            return self._parser

    def _with_identity(self, facts: DocFacts, meta: dict[str, str]) -> DocFacts:
        if has_identity_meta(meta):
            return facts
        if facts.doc_id not in self._identities:
            head = self.docstore.get_text_spans([(facts.doc_id, 0, IDENTITY_CHARS)])
            self._identities[facts.doc_id] = filing_identity(head[0] if head else "")
        ident = self._identities[facts.doc_id]
        return replace(facts, registrant=ident.registrant, short_names=ident.short_names)

    def explain(self, question: str) -> ParsedQuery:
        return self.parser().explain(question)

    def doc_tickers(self) -> dict[str, str]:
        """A ticker-less document -> the ticker its registrant's names name (a local PDF of "American Express
        Company" is AXP's)."""
        return dict(self.parser().doc_tickers)

    def registered(self) -> dict[str, tuple[str, ...]]:
        """Ticker -> its ticker-less documents (``doc_tickers`` turned round), so ``ask`` sees the documents
        ``search`` finds for the company."""
        out: dict[str, list[str]] = {}
        for doc_id, ticker in self.doc_tickers().items():
            out.setdefault(ticker, []).append(doc_id)
        return {t: tuple(ids) for t, ids in out.items()}


__all__ = ["DocFacts", "ParsedQuery", "QueryFilterParser", "StoreFilterParser", "alias_pattern", "clipped_tokens",
           "company_aliases", "is_clipped_form", "mentioned_years", "name_words", "short_name"]
