"""The acronyms a filing defines, as interchangeable phrases for the extractive answerer's term coverage.

A 10-K defines its own short names once ("daily active people (DAP)", "Remaining Performance Obligations
("RPO")") and then writes only the short name: "less than 3% of our worldwide DAP consisted solely of violating
accounts". A question in the long words ("what fraction of daily active people ...") would miss that sentence, and a
question in the short name would miss the defining one. ``defined_acronyms`` reads the definitions a text makes: a
run of words followed by a parenthesised, optionally quoted, all-capitals short name whose letters are the words'
initials in order (small words such as "of", "and", "the" may be skipped). Each becomes a group of the answerer's
vocabulary (``answerability.vocabulary.expand_terms``): the long phrase and the short name. A short name of a
lower-case phrase ("content delivery networks ("CDN")") names a common noun, not a proper name
(``common_noun_acronyms``): it does not answer a which / what ask. Nothing is learned from
any question; only the filings' own definitions are read.
"""

from __future__ import annotations

import functools
import re

SKIPPABLE = frozenset(["of", "and", "the", "for", "to", "in", "on", "a", "an", "&"])
DEFINITION = re.compile(r"((?:[A-Za-z][\w&\-]*\s+){1,7}?)\(\s*(?:the\s+)?[\"“']?([A-Z][A-Z&]{1,7})s?[\"”']?\s*\)")
MAX_GROUPS = 400


def _initials_match(words: list[str], acronym: str) -> str | None:
    """The shortest tail of ``words`` whose initials spell ``acronym`` (skippable words may be passed over), as a
    phrase; None when no tail does."""
    letters = acronym.replace("&", "").lower()
    for start in range(len(words) - 1, -1, -1):
        tail = words[start:]
        if tail[0].lower() in SKIPPABLE:
            continue
        initials = [w[0].lower() for w in tail if w.lower() not in SKIPPABLE]
        if "".join(initials) == letters:
            return " ".join(tail)
        if len(initials) > len(letters):
            return None
    return None


@functools.lru_cache(maxsize=16)  # keyed by whole filing texts: a few per answer
def defined_acronyms(text: str) -> tuple[tuple[str, str], ...]:
    """(long phrase, short name) for each acronym ``text`` defines, first definition of each short name, in text
    order (at most ``MAX_GROUPS``)."""
    out: dict[str, str] = {}
    for m in DEFINITION.finditer(text):
        short = m.group(2)
        if short in out or len(short.replace("&", "")) < 2:
            continue
        words = re.findall(r"[A-Za-z][\w&\-]*", m.group(1))
        phrase = _initials_match(words, short)
        if phrase is not None and len(phrase.split()) >= 2:
            out[short] = phrase
        if len(out) >= MAX_GROUPS:
            break
    return tuple((phrase, short) for short, phrase in out.items())


def acronym_groups(texts: list[str]) -> list[tuple[str, str]]:
    """The definitions of every text, each short name once (the first text's definition wins)."""
    seen: dict[str, tuple[str, str]] = {}
    for t in texts:
        for phrase, short in defined_acronyms(t):
            seen.setdefault(short, (phrase.lower(), short.lower()))
    return list(seen.values())


def common_noun_acronyms(texts: list[str]) -> frozenset[str]:
    """Short names the texts define for lower-case phrases ("content delivery networks ("CDN")"): capitalised, yet
    not proper names, so a which / what ask is not answered by one."""
    return frozenset(short for t in texts for phrase, short in defined_acronyms(t) if phrase == phrase.lower())
