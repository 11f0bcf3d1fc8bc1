"""Pure text helpers over evidence and questions: sentence spans, financial-number counts, salient question terms.

Shared by the critic, the query rewriter and research memory (which scores summary sentences with them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

_STOPWORD_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its "
    "me my of on or our should so than that the their them then there these they this to was we were what when "
    "where which while who why will with would you your s vs versus about over under after before between "
    "stock stocks share shares company companies corp inc ltd investor investors invest investing investment "
    "buy sell hold rating recommend recommendation analysis analyze research question think view "
    "q1 q2 q3 q4 fy")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_EVALUATIVE_TEXT = (
    "growth grow growing sustainable sustainability outlook prospects prospect future strong weak good bad "
    "performance attractive valuation risk risks risky trend trends impact impacts current currently latest "
    "recent long short term next year years")
_EVALUATIVE = frozenset(_EVALUATIVE_TEXT.split())
_NUMBER = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|million\b|billion\b|thousand\b|bps\b)"
    r"|\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+\.\d+\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&/.'-]*")
# bm25s' default token pattern (store/sparse.tokenize): the one word pattern of question analysis, focus terms
# and the answer path
TOKEN = re.compile(r"(?u)\b\w\w+\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\s*\n\s*")  # end punctuation, or a line break


TEXT_CACHE = 4096  # passages (or sentences) whose derived features a process keeps; a research run reads ~70


@functools.lru_cache(maxsize=TEXT_CACHE)
def count_financial_numbers(text: str) -> int:
    return len(_NUMBER.findall(text))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """[start, end) offsets of the sentences of ``text``: split after . ! ? before a capital/digit, and at line
    breaks (parsed filings put paragraphs, headings and table rows on their own lines)."""
    return list(_sentence_spans(text))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return tuple((s, e) for s, e in spans if text[s:e].strip())


def salient_terms(question: str, exclude: Sequence[str] = (), limit: int = 6) -> list[str]:
    """Question words minus stopwords and ``exclude`` (ticker, company), lower-cased, in order, unique."""
    banned = _STOPWORDS | {w.lower() for e in exclude for w in _WORD.findall(e)}
    out: list[str] = []
    for raw in re.split(r"[\s\-–—_,;:?!()\"“”]+", question):
        word = raw.strip(".'’").lower()
        word = word[:-2] if word.endswith(("'s", "’s")) else word
        if len(word) >= 2 and word not in banned and word not in out and not word.isdigit():
            out.append(word)
    return out[:limit]


def topic_terms(question: str, exclude: Sequence[str] = (), limit: int = 4) -> list[str]:
    """Salient terms minus evaluative words (growth, outlook, sustainable ...): what the question is about."""
    return [t for t in salient_terms(question, exclude, limit=12) if t not in _EVALUATIVE][:limit]

