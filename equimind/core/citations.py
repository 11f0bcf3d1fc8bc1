"""Quote verification against the stored canonical text, without an LLM.

A citation is valid when its quote occurs in the document: first verbatim, then after normalising whitespace, case,
quote marks and hyphen/dash variants (the match is mapped back to offsets in the ORIGINAL text, so the citation
records the document's own characters). When neither finds it, the closest passage and its similarity are reported
so a caller can show what the document actually says; a closest passage never counts as verified.

The closest-passage search anchors on word trigrams of the quote (then single words) and scores each anchored window
with ``difflib.SequenceMatcher.ratio`` (Ratcliff/Obershelp), so it stays fast on 2 MB filings.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Protocol, runtime_checkable

from equimind.core.documents import sha256_hex
from equimind.core.errors import NotFoundError
from equimind.core.lru import LRU
from equimind.core.research import Citation, Figure

__all__ = [
    "CitationCheck",
    "CitationVerifier",
    "MatchKind",
    "NormalisedText",
    "SpanCheck",
    "TextLookup",
    "check_figures",
    "normalise",
    "verify_citation",
    "verify_spans",
]

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width characters, BOM
_TABLE = str.maketrans({**{c: "'" for c in _SINGLE_QUOTES}, **{c: '"' for c in _DOUBLE_QUOTES},
                        **{c: "-" for c in _DASHES}})
_WORD = re.compile(rf"[^\s{_INVISIBLE}]+")
_MAX_ANCHOR_HITS = 40
_MAX_CANDIDATES = 300


@runtime_checkable
class TextLookup(Protocol):
    """Anything that returns a stored document's canonical text (the DocStore does); unknown ids raise NotFoundError."""

    def get_document_text(self, doc_id: str) -> str:
        ...


class MatchKind(StrEnum):
    EXACT = "exact"
    NORMALISED = "normalised"
    CLOSEST = "closest"
    NONE = "none"


@dataclass(frozen=True)
class CitationCheck:
    """Outcome of verifying one quote. ``start``/``end`` index the original canonical text."""

    doc_id: str
    quote: str
    match: MatchKind
    start: int | None
    end: int | None
    passage: str | None
    similarity: float
    doc_sha256: str

    @property
    def verified(self) -> bool:
        return self.match in (MatchKind.EXACT, MatchKind.NORMALISED)

    def citation(self) -> Citation:
        """The Citation for a verified quote; its ``quote`` is the document's own text at [start, end)."""
        if not self.verified or self.start is None or self.end is None or self.passage is None:
            raise ValueError(f"quote not found in {self.doc_id} (closest similarity {self.similarity:.2f}); "
                             "only verified checks become citations")
        return Citation(doc_id=self.doc_id, start=self.start, end=self.end, quote=self.passage,
                        doc_sha256=self.doc_sha256)


@dataclass(frozen=True)
class NormalisedText:
    """``text`` normalised, with a piecewise-linear map back to original offsets.

    Segment k covers normalised [seg_norm[k], seg_norm[k+1]) and starts at original offset seg_orig[k]; inside a
    segment offsets advance one-for-one (the translation table and ``lower`` keep lengths).
    """

    text: str
    seg_norm: tuple[int, ...]
    seg_orig: tuple[int, ...]

    def to_orig(self, i: int) -> int:
        k = bisect_right(self.seg_norm, i) - 1
        return self.seg_orig[k] + (i - self.seg_norm[k])

    def span_to_orig(self, start: int, end: int) -> tuple[int, int]:
        """Original [start, end) covering normalised [start, end) (end > start)."""
        return self.to_orig(start), self.to_orig(end - 1) + 1

    def from_orig(self, i: int) -> int:
        """Normalised offset of the first segment starting at or after original offset ``i`` (window search)."""
        k = bisect_right(self.seg_orig, i) - 1
        if k < 0:
            return 0
        inside = i - self.seg_orig[k]
        seg_len = (self.seg_norm[k + 1] if k + 1 < len(self.seg_norm) else len(self.text)) - self.seg_norm[k]
        return self.seg_norm[k] + min(inside, seg_len)


def _lower_keep_length(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def normalise(text: str) -> NormalisedText:
    """Lower-case, unify quotes and dashes, drop invisible characters, collapse whitespace runs to one space and
    remove spaces next to a hyphen ("long- term" == "long-term")."""
    low = _lower_keep_length(text.translate(_TABLE))
    parts: list[str] = []
    seg_norm: list[int] = []
    seg_orig: list[int] = []
    pos = 0
    prev_end: int | None = None
    for m in _WORD.finditer(low):
        word = m.group()
        if prev_end is not None:
            gap = low[prev_end:m.start()]
            joined = not gap.strip(_INVISIBLE) or parts[-1].endswith("-") or word.startswith("-")
            if not joined:
                seg_norm.append(pos)
                seg_orig.append(prev_end)
                parts.append(" ")
                pos += 1
        seg_norm.append(pos)
        seg_orig.append(m.start())
        parts.append(word)
        pos += len(word)
        prev_end = m.end()
    return NormalisedText("".join(parts), tuple(seg_norm), tuple(seg_orig))


def _find_all(haystack: str, needle: str, limit: int) -> list[int]:
    hits: list[int] = []
    i = haystack.find(needle)
    while i >= 0 and len(hits) < limit:
        hits.append(i)
        i = haystack.find(needle, i + 1)
    return hits


def _prefer_window(hits: list[int], lo: int, hi: int) -> int:
    """First hit inside [lo, hi), else the first hit overall (hits is non-empty)."""
    return next((h for h in hits if lo <= h < hi), hits[0])


def _anchors(words: list[str]) -> Iterable[tuple[str, int]]:
    """(shingle, offset in the space-joined quote): word trigrams, then single words of 4+ characters."""
    offsets: list[int] = []
    pos = 0
    for w in words:
        offsets.append(pos)
        pos += len(w) + 1
    if len(words) >= 3:
        for i in range(len(words) - 2):
            yield " ".join(words[i:i + 3]), offsets[i]
    for i, w in enumerate(words):
        if len(w) >= 4:
            yield w, offsets[i]


def closest_passage(norm: NormalisedText, nquote: str) -> tuple[int, int, float] | None:
    """(norm_start, norm_end, similarity) of the best anchored window of the quote's length, or None."""
    words = nquote.split(" ")
    starts: set[int] = set()
    for shingle, off in _anchors(words):
        for hit in _find_all(norm.text, shingle, _MAX_ANCHOR_HITS):
            starts.add(max(0, hit - off))
        if len(starts) >= _MAX_CANDIDATES:
            break
    best: tuple[int, int, float] | None = None
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(nquote)
    for s in sorted(starts)[:_MAX_CANDIDATES]:
        e = min(len(norm.text), s + len(nquote))
        matcher.set_seq1(norm.text[s:e])
        if best is not None and matcher.quick_ratio() <= best[2]:
            continue
        ratio = matcher.ratio()
        if best is None or ratio > best[2]:
            best = (s, e, ratio)
    return best


_NORM_CACHE: LRU[tuple[str, int, int], NormalisedText] = LRU(16)


def _shared_normalised(doc_id: str, text: str) -> NormalisedText:
    """The normalised form of a document, kept for the process's last 16 documents: a document id
    is a hash of its text, and the key also holds the text's own hash and length (a lookup that reuses an id for other
    text is never served a stale form). Normalising a 10-K takes ~0.15 s; a warm research verifies dozens of quotes
    against the same few filings (measured: 40 % of a warm API research's time before this cache)."""
    key = (doc_id, hash(text), len(text))
    norm = _NORM_CACHE.get(key)
    if norm is None:
        norm = normalise(text)
        _NORM_CACHE.put(key, norm)
    return norm


class CitationVerifier:
    """Verifies quotes against a TextLookup, caching each document's text and normalised form for one run."""

    def __init__(self, text_lookup: TextLookup) -> None:
        self._lookup = text_lookup
        self._texts: dict[str, str] = {}
        self._norms: dict[str, NormalisedText] = {}
        self._digests: dict[str, str] = {}

    def text(self, doc_id: str) -> str:
        """The canonical text (raises NotFoundError for an unknown id, as the lookup does)."""
        if doc_id not in self._texts:
            self._texts[doc_id] = self._lookup.get_document_text(doc_id)
        return self._texts[doc_id]

    def normalised(self, doc_id: str) -> NormalisedText:
        if doc_id not in self._norms:
            self._norms[doc_id] = _shared_normalised(doc_id, self.text(doc_id))
        return self._norms[doc_id]

    def verify(self, doc_id: str, quote: str, *, within: tuple[int, int] | None = None) -> CitationCheck:
        """Check ``quote`` against document ``doc_id``.

        ``within`` (original offsets) is the passage the quote was taken from: a match inside it wins, exact before
        normalised; otherwise the first exact, then the first normalised match anywhere in the document.
        """
        text = self.text(doc_id)
        digest = self._digests.get(doc_id) or self._digests.setdefault(doc_id, sha256_hex(text))
        lo, hi = within if within is not None else (0, len(text))
        exact = _find_all(text, quote, 1_000) if quote.strip() else []
        if any(lo <= h < hi for h in exact):
            s = _prefer_window(exact, lo, hi)
            return CitationCheck(doc_id, quote, MatchKind.EXACT, s, s + len(quote), quote, 1.0, digest)
        nquote = normalise(quote).text
        if not nquote:
            return CitationCheck(doc_id, quote, MatchKind.NONE, None, None, None, 0.0, digest)
        norm = self.normalised(doc_id)
        hits = _find_all(norm.text, nquote, 1_000)
        nlo, nhi = norm.from_orig(lo), norm.from_orig(hi)
        if exact and not any(nlo <= h < nhi for h in hits):
            return CitationCheck(doc_id, quote, MatchKind.EXACT, exact[0], exact[0] + len(quote), quote, 1.0, digest)
        if hits:
            ns = _prefer_window(hits, nlo, nhi)
            s, e = norm.span_to_orig(ns, ns + len(nquote))
            return CitationCheck(doc_id, quote, MatchKind.NORMALISED, s, e, text[s:e], 1.0, digest)
        best = closest_passage(norm, nquote)
        if best is None:
            return CitationCheck(doc_id, quote, MatchKind.NONE, None, None, None, 0.0, digest)
        s, e = norm.span_to_orig(best[0], best[1])
        return CitationCheck(doc_id, quote, MatchKind.CLOSEST, s, e, text[s:e], round(best[2], 4), digest)


def verify_citation(text_lookup: TextLookup, doc_id: str, quote: str, *,
                    within: tuple[int, int] | None = None) -> CitationCheck:
    """One-shot verification (use a CitationVerifier to check many quotes against the same documents)."""
    return CitationVerifier(text_lookup).verify(doc_id, quote, within=within)


@dataclass(frozen=True)
class SpanCheck:
    """One quote of a batch with the span [start, end) it claims; ``check`` is None when the document is not stored
    (``error`` says so)."""

    doc_id: str
    start: int
    end: int
    quote: str
    check: CitationCheck | None
    error: str | None = None

    @property
    def in_claimed_span(self) -> bool:
        """Verified, and found inside the claimed span (not merely somewhere else in the document)."""
        c = self.check
        return (c is not None and c.verified and c.start is not None and c.end is not None
                and self.start <= c.start and c.end <= self.end)


def verify_spans(text_lookup: TextLookup, items: Iterable[tuple[str, int, int, str]]) -> list[SpanCheck]:
    """Check each (doc_id, start, end, quote), preferring a match inside its span; documents are read once each."""
    verifier = CitationVerifier(text_lookup)
    out: list[SpanCheck] = []
    for doc_id, start, end, quote in items:
        try:
            check = verifier.verify(doc_id, quote, within=(start, end))
        except NotFoundError as exc:
            out.append(SpanCheck(doc_id, start, end, quote, None, str(exc)))
            continue
        out.append(SpanCheck(doc_id, start, end, quote, check))
    return out


def check_figures(figure_ids: Iterable[str], figures: Mapping[str, Figure]) -> str | None:
    """None when every id names a figure with a value; otherwise the reason the citation fails."""
    for fid in figure_ids:
        fig = figures.get(fid)
        if fig is None:
            return f"figure {fid!r} is not among the computed figures"
        if fig.value is None:
            return f"figure {fid!r} ({fig.name}) has no value"
    return None
