"""Pure text helpers over evidence and questions: sentence spans, financial-number counts, salient question terms.

Shared by the critic, the query rewriter and research memory (which scores summary sentences with them), and the
offline analyst (``split_prose_sentences``). Two sentence splitters, on purpose: ``split_sentences`` ends a sentence
at every ``. ! ?`` before a capital or digit (a summary sentence, a critic's quote); ``split_prose_sentences`` also
keeps abbreviations ("Inc.", "U.S.", "e.g.", "Sept."), initials and closing quotes / brackets inside the sentence and
trims each span, so a claim quotes the whole statement (debate cues, prompt-injection spans). Their spans differ on
such text, and both are kept so that neither caller's output moves.

Stopwords (``_STOPWORD_TEXT``): hand-written English function words plus the words of investment questions that
name no topic ("stock", "buy", "analysis").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from equimind.lexicon.calendar import MONTH_ABBREVIATIONS

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


def clip(text: str, limit: int, *, at_word: bool = False) -> str:
    """``text`` with its whitespace runs made single spaces, cut to at most ``limit`` characters with an ellipsis
    (the one way a quote, a summary or a heading is shortened for display). ``at_word``: cut at a space, so no word
    or number is left half-printed ("June 30, 202…")."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit - 1]
    if at_word and " " in cut:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip() + "…"


def wordset(text: str) -> frozenset[str]:
    """The white-space separated words of ``text``: how a word list is written in a module."""
    return frozenset(text.split())


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


def question_words(question: str) -> tuple[str, ...]:
    """The question's words minus stopwords, lower-cased, in order, unique (read once per question:
    ``query/parsed.ParsedQuestion.words``)."""
    out: list[str] = []
    for raw in re.split(r"[\s\-–—_,;:?!()\"“”]+", question):
        word = raw.strip(".'’").lower()
        word = word[:-2] if word.endswith(("'s", "’s")) else word
        if len(word) >= 2 and word not in _STOPWORDS and word not in out and not word.isdigit():
            out.append(word)
    return tuple(out)


def salient_terms(question: str | Sequence[str], exclude: Sequence[str] = (), limit: int = 6) -> list[str]:
    """Question words minus stopwords and ``exclude`` (ticker, company), lower-cased, in order, unique; ``question``
    may be the words ``question_words`` already read."""
    banned = {w.lower() for e in exclude for w in _WORD.findall(e)}
    words = question_words(question) if isinstance(question, str) else question
    return [w for w in words if w not in banned][:limit]


def topic_terms(question: str | Sequence[str], exclude: Sequence[str] = (), limit: int = 4) -> list[str]:
    """Salient terms minus evaluative words (growth, outlook, sustainable ...): what the question is about."""
    return [t for t in salient_terms(question, exclude, limit=12) if t not in _EVALUATIVE][:limit]


# Abbreviations a period does not end a sentence after (hand-written: legal forms, titles, Latin and SEC usage, and
# the month abbreviations of ``lexicon.calendar``)
_ABBREV = frozenset({"inc", "corp", "co", "ltd", "no", "nos", "mr", "mrs", "ms", "dr", "vs", "etc", "e.g", "i.e",
                     *MONTH_ABBREVIATIONS, "approx", "fig", "st", "u.s", "u.k", "s.a", "n.a"})
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+|\n\s*")
_NEXT_OK = re.compile(r"[\"'“‘(\[]?[A-Z0-9$•]")


def _is_boundary(text: str, m: re.Match[str]) -> bool:
    if m.group().startswith("\n"):
        return True
    if not _NEXT_OK.match(text, m.end()):
        return False
    if text[m.start()] != ".":
        return True
    word = text[max(0, m.start() - 12):m.start()].split()[-1:] or [""]
    token = word[0].lower().lstrip("(\"'“")
    return not (token in _ABBREV or len(token) == 1 or "." in token)


def split_prose_sentences(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence in ``text``, trimmed; paragraph breaks always end a sentence, a period after an
    abbreviation, an initial or a dotted token ("U.S.") does not (module docstring: vs ``split_sentences``)."""
    return list(_prose_spans(text))


@functools.lru_cache(maxsize=TEXT_CACHE)
def _prose_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if not _is_boundary(text, m):
            continue
        end = m.start() + (0 if m.group().startswith("\n") else len(m.group().rstrip()))
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg.rstrip())
        if trail > lead:
            out.append((s + lead, s + trail))
    return tuple(out)
