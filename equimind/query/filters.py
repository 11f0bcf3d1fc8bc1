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
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from equimind.core.documents import Document, FilterSpec
from equimind.core.search import DocumentRef
from equimind.lexicon.calendar import MONTH_ABBREVIATIONS, MONTHS
from equimind.lexicon.companies import LEGAL_FORMS

if TYPE_CHECKING:
    from equimind.store.docstore import DocStore

# Trailing words an alias drops: the legal forms, and the generic business words a name ends in ("Meta Platforms",
# "Cisco Systems", "Yum! Brands") that users leave out; a two-letter state tag ("/DE") and ".com" go too.
_ALIAS_SUFFIXES = LEGAL_FORMS | frozenset({"companies", "platforms", "technologies", "systems", "international",
                                           "brands", "enterprises", "the"})
_SUFFIXES = re.compile(
    rf"(?:[,\s&]+(?:{'|'.join(sorted(_ALIAS_SUFFIXES, key=lambda w: (-len(w), w)))})\.?)+$|/[a-z]{{2}}$|\.com\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<![\d$.,])(?:FY\s?|fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})(?!\d|[,.]\d)", re.IGNORECASE)
_DATE_BEFORE = re.compile(rf"\b(?:{'|'.join((*MONTHS, *MONTH_ABBREVIATIONS))})\.?\s+(?:\d{{1,2}},?\s+)?$",
                          re.IGNORECASE)
_SHORT_FY = re.compile(r"\bFY\s?'?(\d{2})\b", re.IGNORECASE)
_COMMON_WORDS = frozenset(
    ["block", "target", "apple", "visa", "gap", "square", "ball", "meta", "oracle", "general", "best", "shell",
     "ford", "progressive"]
)


_CLIPPED = re.compile(r"(?<![\w-])([A-Z][A-Za-z]{3,9})(?:'s)?(?![\w-])")
_NAME_FILLERS = frozenset(["of", "and", "the"])


def short_name(company: str | None) -> str:
    """The company's name without legal suffixes ("American Express" for "American Express Co"), else ""."""
    aliases = company_aliases(company)
    return aliases[1] if len(aliases) > 1 else aliases[0] if aliases else ""


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


@dataclass(frozen=True)
class DocFacts:
    """What the parser may know about one stored document."""

    doc_id: str
    company: str | None
    ticker: str | None
    fiscal_year: int | None

    @classmethod
    def of(cls, doc: Document) -> DocFacts:
        return cls.from_parts(doc.id, doc.company, doc.ticker, dict(doc.meta), doc.period_end, doc.filed_at)

    @classmethod
    def of_ref(cls, ref: DocumentRef, meta: dict[str, str]) -> DocFacts:
        return cls.from_parts(ref.doc_id, ref.company, ref.ticker, meta, ref.period_end, ref.filed_at)

    @classmethod
    def from_parts(cls, doc_id: str, company: str | None, ticker: str | None, meta: dict[str, str],
                   period_end: date | None, filed_at: date | None) -> DocFacts:
        year: int | None = None
        if meta.get("fiscal_year", "").isdigit():
            year = int(meta["fiscal_year"])
        elif period_end is not None:
            year = period_end.year
        elif filed_at is not None:
            year = filed_at.year
        return cls(doc_id, company, ticker, year)


def company_aliases(company: str | None) -> tuple[str, ...]:
    """Names a user would call the company by: the full name and the name without legal suffixes."""
    if not company:
        return ()
    name = " ".join(company.replace("\u2019", "'").split())
    short = name
    while (stripped := _SUFFIXES.sub("", short).strip(" ,.&")) != short:
        short = stripped
    out = [name]
    if short and short.lower() != name.lower():
        out.append(short)
    if short.isupper() and len(short) > 4:  # "NVIDIA", "WELLS FARGO" -> also "Wells Fargo"
        out.append(short.title())
    return tuple(dict.fromkeys(out))


def _alias_pattern(alias: str) -> re.Pattern[str]:
    # words may be separated by spaces or hyphens ("Coca-Cola" = "Coca Cola")
    body = r"[\s-]+".join(re.escape(w) for w in re.split(r"[\s-]+", alias) if w)
    pattern = rf"(?<![\w-]){body}(?:'s)?(?![\w-])"
    one_word_common = re.search(r"[\s-]", alias) is None and alias.lower() in _COMMON_WORDS
    if one_word_common:
        # a proper noun: "Block" or "BLOCK", never "block"
        return re.compile(rf"(?<![\w-])(?:{re.escape(alias[0].upper() + alias[1:])}|{re.escape(alias.upper())})"
                          rf"(?:'s)?(?![\w-])")
    return re.compile(pattern, re.IGNORECASE)


def mentioned_years(text: str, today: date | None = None) -> set[int]:
    """Four-digit years and FY-prefixed two-digit years written in ``text``. A year that is part of a calendar date
    ("July 2025", "May 1, 2024") is not a fiscal year: NVIDIA's July 2025 quarter is in its fiscal 2026."""
    years = {int(m.group(1)) for m in _YEAR.finditer(text) if not _DATE_BEFORE.search(text, 0, m.start())}
    century = ((today or date.today()).year // 100) * 100
    years |= {century + int(m.group(1)) for m in _SHORT_FY.finditer(text)}
    return years


@dataclass(frozen=True)
class ParsedQuery:
    """A parsed filter and what set it: the named companies and the fiscal years that narrowed their documents."""

    spec: FilterSpec
    companies: tuple[str, ...]
    years: tuple[int, ...]

    def describe(self) -> str:
        if self.spec.is_empty():
            return "no stored company named in the query; searched everything"
        period = f", fiscal {', '.join(map(str, self.years))}" if self.years else ""
        n = len(self.spec.doc_ids)
        return (f"filter parsed from the query: {'; '.join(self.companies)}{period} "
                f"({n} document{'s' if n != 1 else ''})")


class QueryFilterParser:
    """Builds FilterSpecs from question text, using a fixed set of stored documents' facts. ``tickers`` (doc_id ->
    ticker) names the ticker of documents that carry none (``company_identity.registrant_tickers``)."""

    def __init__(self, facts: Iterable[DocFacts], tickers: Mapping[str, str] | None = None) -> None:
        self.facts = tuple(facts)
        patterns: dict[str, list[re.Pattern[str]]] = {}
        for f in self.facts:
            pats = [_alias_pattern(a) for a in company_aliases(f.company)]
            ticker = f.ticker or (tickers or {}).get(f.doc_id)
            if ticker:
                pats.append(re.compile(rf"(?<![\w$-]){re.escape(ticker.upper())}(?![\w-])"))
            patterns[f.doc_id] = pats
        self._patterns = patterns
        self._words = {f.doc_id: words for f in self.facts if len(words := name_words(f.company)) >= 2}

    @classmethod
    def from_documents(cls, docs: Iterable[Document]) -> QueryFilterParser:
        return cls(DocFacts.of(d) for d in docs)

    def companies(self, question: str) -> list[DocFacts]:
        """Documents whose company (or ticker, or a clipped form of its name) the question names."""
        clipped = clipped_tokens(question)
        return [f for f in self.facts if any(p.search(question) for p in self._patterns[f.doc_id])
                or any(is_clipped_form(t, self._words.get(f.doc_id, ())) for t in clipped)]

    def parse(self, question: str) -> FilterSpec:
        """The filter the question's own words imply (empty when it names no stored company)."""
        return self.explain(question).spec

    def explain(self, question: str) -> ParsedQuery:
        """The filter with the companies and years that set it."""
        named = self.companies(question)
        if not named:
            return ParsedQuery(FilterSpec(), (), ())
        years = mentioned_years(question)
        narrowed = [f for f in named if f.fiscal_year in years] if years else []
        chosen = narrowed or named
        companies = tuple(sorted({f.company or f.ticker or f.doc_id for f in chosen}))
        used_years = tuple(sorted({f.fiscal_year for f in narrowed if f.fiscal_year is not None}))
        return ParsedQuery(FilterSpec(doc_ids=tuple(sorted({f.doc_id for f in chosen}))), companies, used_years)


class StoreFilterParser:
    """A QueryFilterParser over a docstore's indexed documents, rebuilt when the indexed set changes. ``tickers``
    gives ticker-less documents their registrant's ticker (``Services`` joins them with the SEC ticker map)."""

    def __init__(self, docstore: DocStore,
                 tickers: Callable[[Sequence[DocFacts]], Mapping[str, str]] | None = None) -> None:
        self.docstore = docstore
        self._tickers = tickers
        self._stamp: str | None = None
        self._parser: QueryFilterParser | None = None
        self._lock = threading.Lock()

    def parser(self) -> QueryFilterParser:
        stamp = self.docstore.index_stamp()
        with self._lock:
            if self._parser is None or stamp != self._stamp:
                rows = self.docstore.list_documents_with_meta(status="indexed")
                facts = [DocFacts.of_ref(ref, meta) for ref, meta in rows]
                self._parser = QueryFilterParser(facts, self._tickers(facts) if self._tickers else None)
                self._stamp = stamp
            return self._parser

    def explain(self, question: str) -> ParsedQuery:
        return self.parser().explain(question)
