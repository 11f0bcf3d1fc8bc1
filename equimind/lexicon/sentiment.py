"""Financial tone of market reports with the Loughran-McDonald word lists (``lexicon.lm_lists``: the lists, their
source, the one ``Lexicon`` type and its loaders; ``Lexicon.load`` reads the five scored lists, all required).

- ``score_text``: counts of negative / positive / uncertainty / litigious / constraining words; a positive word
  preceded within three words by a negation (no, not, none, neither, never, nobody) counts as negative, as in LM.
  ``tone`` = (positive - negative) / (positive + negative) in [-1, 1] (0 when neither occurs);
  ``negative_per_1000`` = negative words per 1,000 words.
- ``headline_tone``: per-headline scores and their mean.
- ``extract_risk_factors``: the "Item 1A. Risk Factors" section of a 10-K/10-Q in plain text (the longest span
  between an Item 1A heading and the next Item 1B/1C/2 heading, so the table of contents is skipped).
- ``compare_sections``: what got more negative between the same section of two filings: the change in negative
  density, the negative words whose frequency rose most, and new sentences heavy in negative words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from equimind.lexicon.lm_lists import NEGATION_WINDOW, NEGATIONS, SCORED, WORD, Lexicon

CATEGORIES = tuple(c.value for c in SCORED)
_CLAUSE = re.compile(r"[.!?;:]+(?:\s|$)|\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")
_ITEM_1A = re.compile(r"^item\s*1a\.?\s*[-–—:]?\s*risk\s+factors\s*$", re.I | re.M)
_NEXT_ITEM = re.compile(r"^item\s*(?:1b|1c|2)\b", re.I | re.M)


@dataclass(frozen=True)
class ToneScore:
    words: int
    counts: dict[str, int]
    negative_words: dict[str, int]  # word -> count (after negation handling)

    @property
    def tone(self) -> float:
        pos, neg = self.counts["positive"], self.counts["negative"]
        return 0.0 if pos + neg == 0 else (pos - neg) / (pos + neg)

    @property
    def negative_per_1000(self) -> float:
        return 0.0 if self.words == 0 else 1000.0 * self.counts["negative"] / self.words


def tokens(text: str) -> list[str]:
    return [w.upper() for w in WORD.findall(text)]


def score_text(text: str, lex: Lexicon) -> ToneScore:
    """Category counts; a negation reaches back at most three words and never across a sentence/clause break."""
    counts = dict.fromkeys(CATEGORIES, 0)
    negs: Counter[str] = Counter()
    total = 0
    for clause in _CLAUSE.split(text):
        toks = tokens(clause)
        total += len(toks)
        for i, w in enumerate(toks):
            negated = any(t in NEGATIONS for t in toks[max(0, i - NEGATION_WINDOW):i])
            for c in lex.category(w):
                if c == "positive" and negated:
                    counts["negative"] += 1
                    negs[f"NOT {w}"] += 1
                else:
                    counts[c] += 1
                    if c == "negative":
                        negs[w] += 1
    return ToneScore(words=total, counts=counts, negative_words=dict(negs))


@dataclass(frozen=True)
class HeadlineScore:
    title: str
    published: str
    tone: float
    negative: int
    positive: int


def headline_tone(headlines: Iterable[tuple[str, str]], lex: Lexicon) -> tuple[list[HeadlineScore], float | None]:
    """(title, published ISO date) pairs → per-headline scores and the mean tone (None if no headline)."""
    scores = []
    for title, published in headlines:
        s = score_text(title, lex)
        scores.append(HeadlineScore(title=title, published=published, tone=s.tone,
                                    negative=s.counts["negative"], positive=s.counts["positive"]))
    mean = sum(s.tone for s in scores) / len(scores) if scores else None
    return scores, mean


def extract_risk_factors(text: str) -> str | None:
    """The body of "Item 1A. Risk Factors" (plain text with one heading a line), or None if not found."""
    best: tuple[int, int] | None = None
    for m in _ITEM_1A.finditer(text):
        nxt = _NEXT_ITEM.search(text, m.end())
        end = nxt.start() if nxt else len(text)
        if best is None or end - m.end() > best[1] - best[0]:
            best = (m.end(), end)
    if best is None or best[1] - best[0] < 200:
        return None
    return text[best[0]:best[1]].strip()


@dataclass(frozen=True)
class SectionShift:
    current: ToneScore
    previous: ToneScore
    rising_negative_words: list[tuple[str, float, float]]  # word, per-10k before, per-10k now
    new_negative_sentences: list[str]

    @property
    def negative_per_1000_change(self) -> float:
        return self.current.negative_per_1000 - self.previous.negative_per_1000

    @property
    def tone_change(self) -> float:
        return self.current.tone - self.previous.tone


def _per_10k(count: int, words: int) -> float:
    return 0.0 if words == 0 else 10_000.0 * count / words


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.replace("\n", " ")) if s.strip()]


def compare_sections(current: str, previous: str, lex: Lexicon, *, top: int = 10) -> SectionShift:
    """How the same section changed between two filings, from the negative-word point of view."""
    cur, prev = score_text(current, lex), score_text(previous, lex)
    rising = []
    for w in set(cur.negative_words) | set(prev.negative_words):
        now = _per_10k(cur.negative_words.get(w, 0), cur.words)
        before = _per_10k(prev.negative_words.get(w, 0), prev.words)
        if now > before:
            rising.append((w, round(before, 3), round(now, 3)))
    rising.sort(key=lambda r: (r[1] - r[2], r[0]))
    old = _normalise(previous)  # a sentence is new unless its words appear, in order, in the previous section
    new_sentences = [s for s in _sentences(current) if _normalise(s) not in old]
    heavy = sorted(new_sentences, key=lambda s: -score_text(s, lex).counts["negative"])
    worst = [s for s in heavy if score_text(s, lex).counts["negative"] >= 2][:top]
    return SectionShift(current=cur, previous=prev, rising_negative_words=rising[:top],
                        new_negative_sentences=worst)


def _normalise(sentence: str) -> str:
    return " ".join(tokens(sentence))


def top_words(score: ToneScore, n: int = 10) -> Sequence[tuple[str, int]]:
    return Counter(score.negative_words).most_common(n)
