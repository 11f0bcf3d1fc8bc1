"""Which company a question is about, when the caller gives no ticker.

Two vocabularies, in order: the companies of the stored documents (their ticker and company name), then the SEC
ticker map (every ticker with its registrant name). A company matches when its ticker stands in the question as an
upper-case word, or when its name — less legal suffixes ("Inc.", "Corp", "Holdings" ...) — stands in the question as
consecutive words, or one of its ampersand forms does ("ATT" / "AT and T" for AT&T, "J&J" / "JnJ" for Johnson &
Johnson: ``query/identity.ampersand_forms``). A stored company also answers to the aliases of the identity model
(``query/identity.company_names``: the names its documents state — ``aliases`` — and the leading word of its name
when no other registrant's or stored company's name starts with it, "Lockheed"). A longer matching name beats a
shorter one it contains ("Apple Hospitality" vs "Apple"). A stored company wins over a map entry matched by the same
words; several remaining candidates are an ambiguity the caller settles with a ticker, unless the question compares
them (then the first named is the subject).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from equimind.core.errors import ConfigError, NotFoundError
from equimind.lexicon.companies import LEGAL_FORMS
from equimind.lexicon.questions import COMPARE_WORDS
from equimind.query.identity import CompanyEntry, ampersand_forms, company_names, registrants_of
from equimind.sources.base import TickerInfo

_WORD = re.compile(r"[A-Za-z0-9&][A-Za-z0-9&.\-']*")
# Trailing words a core name drops: the legal forms, their dotted spellings, and the other words that end SEC
# registrant titles without naming the company: "SE", "Holding", a share class ("Class A Common Stock"), the state tag
# "/DE" and "com" once their punctuation is gone, a dangling "&" or "and" ("WELLS FARGO & COMPANY").
_SUFFIXES = LEGAL_FORMS | frozenset({"inc.", "corp.", "co.", "ltd.", "l.p.", "n.v.", "s.a.", "se", "holding", "class",
                                     "common", "stock", "de", "com", "&", "and"})
# Lower-case words inside a proper name ("Bank of America", "AT and T", "Procter and Gamble").
_JOINERS = frozenset({"and", "of", "&", "the", "for", "de"})
# Words that make a question name several companies on purpose (the first named is then the subject).
COMPARISON_WORDS = COMPARE_WORDS | frozenset({"relative", "both"})


@dataclass(frozen=True)
class Candidate:
    ticker: str
    name: str
    stored: bool
    matched: str  # the words of the question it matched


def _words(text: str, *, lower: bool = True) -> list[str]:
    out = [re.sub(r"'s$", "", w.strip(".'")) for w in _WORD.findall(text)]
    return [w.lower() for w in out] if lower else out


def core_name(name: str) -> tuple[str, ...]:
    """'NVIDIA CORP' -> ('nvidia',); 'Apple Inc.' -> ('apple',); 'Netflix, Inc.' -> ('netflix',)."""
    words = _words(re.sub(r"/[A-Za-z]+/?$", "", name).replace(",", " "))
    while words and words[-1] in _SUFFIXES:
        words.pop()
    while words and words[0] == "the":
        words.pop(0)
    return tuple(words)


def _contains(seq: list[str], sub: tuple[str, ...]) -> bool:
    n = len(sub)
    return n > 0 and any(tuple(seq[i:i + n]) == sub for i in range(len(seq) - n + 1))


@lru_cache(maxsize=32768)
def name_forms(name: str) -> tuple[tuple[str, ...], ...]:
    """The word sequences a name is written as: its core name and the core of its ampersand forms."""
    core = core_name(name)
    if not core:
        return ()
    return tuple(dict.fromkeys([core, *(f for a in ampersand_forms(" ".join(core)) if (f := core_name(a)))]))


# a period as a question writes one ("Q2", "H1", "FY2023", "2022"): a name of one such word names the period, not
# the company, unless another name word follows it (Q2 Holdings' core name is "Q2": "In 2022 Q2, which of JPM's
# segments ..." names JPMorgan alone; "Q2 Holdings' revenue" names Q2 Holdings)
_PERIOD_WORD = re.compile(r"^(?:q[1-4]|h[12]|fy\d{0,4}|\d{4})$")


def _as_name(proper: list[str], form: tuple[str, ...]) -> bool:
    if len(form) != 1 or not _PERIOD_WORD.match(form[0]):
        return _contains(proper, form)
    return any(w == form[0] and i + 1 < len(proper) and proper[i + 1] and not _PERIOD_WORD.match(proper[i + 1])
               for i, w in enumerate(proper))


def _match(proper: list[str], upper: set[str], ticker: str, forms: Sequence[tuple[str, ...]]) -> str | None:
    """``proper``: the question's words, lower-cased where written capitalised (or a joining word such as "and"),
    else blanked: a company name is a proper noun, so "paid" never matches PAID INC while "Apple" matches Apple Inc.
    A name that is one period word ("Q2") matches only followed by another name word (``_as_name``)."""
    hits: list[tuple[str, ...]] = sorted((f for f in forms if _as_name(proper, f)), key=len, reverse=True)
    if hits:
        return " ".join(hits[0])
    if len(ticker) >= 2 and ticker in upper:
        return ticker
    return None


def stored_forms(stored: Sequence[tuple[str, str | None]], ticker_map: Mapping[str, TickerInfo],
                 aliases: Mapping[str, Sequence[str]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """ticker -> the word sequences of every alias of a stored company (``query/identity.company_names``)."""
    registrants = registrants_of(ticker_map) if ticker_map else None
    names: dict[str, list[str]] = {}
    for t, name in stored:
        names.setdefault(t, []).extend(n for n in (name, *aliases.get(t, ())) if n)
    entries = [CompanyEntry(t, tuple(dict.fromkeys(ns)), t) for t, ns in names.items()]
    leads = {e.key: {core_name(n)[0] for n in e.names if core_name(n)} for e in entries}
    out: dict[str, tuple[tuple[str, ...], ...]] = {}
    for e in entries:
        taken = {w for k, ws in leads.items() if k != e.key for w in ws}
        forms = [f for a in company_names(e, registrants, taken) for f in name_forms(a.text)]
        out[e.key] = tuple(dict.fromkeys(forms))
    return out


def candidates(question: str, stored: Iterable[tuple[str, str | None]], ticker_map: Mapping[str, TickerInfo],
               aliases: Mapping[str, Sequence[str]] | None = None) -> list[Candidate]:
    """Every company the question names, stored or in the SEC map (a stored company wins over a map entry matched
    by the same words). ``aliases``: other names a stored company's documents state (ticker -> names: the cover
    page's registrant name, the filing's own short names)."""
    stored = list(dict.fromkeys(stored))
    proper = [w.lower() if w[:1].isupper() or w[:1].isdigit() or w in _JOINERS else ""
              for w in _words(question, lower=False)]
    upper = {w for w in _words(question, lower=False) if w.isupper()}
    forms = stored_forms(stored, ticker_map, aliases or {})
    found = [Candidate(t, n or t, True, m) for t, n in stored
             if (m := _match(proper, upper, t, forms.get(t, ()))) is not None]
    held = {c.ticker for c in found}
    found += [Candidate(info.ticker, info.name, False, m) for info in ticker_map.values()
              if info.ticker not in held and (m := _match(proper, upper, info.ticker, name_forms(info.name)))
              is not None]
    named = {c.matched for c in found if c.stored}  # a stored company's words name it, not a namesake in the map
    found = [c for c in found if c.stored or c.matched not in named]
    order = {t: i for i, t in enumerate(ticker_map)}  # SEC lists the primary share class first
    longest = max((len(c.matched.split()) for c in found), default=0)
    best = [c for c in found if len(c.matched.split()) == longest]
    by_name: dict[str, Candidate] = {}
    for c in sorted(best, key=lambda c: (not c.stored, order.get(c.ticker, len(order)), c.ticker)):
        by_name.setdefault(c.name.lower(), c)  # share classes (GOOGL/GOOG) of one registrant: the one SEC lists first
    return sorted(by_name.values(), key=lambda c: c.ticker)


def resolve_company(question: str, stored: Iterable[tuple[str, str | None]],
                    ticker_map: Mapping[str, TickerInfo], aliases: Mapping[str, Sequence[str]] | None = None) -> \
        Candidate:
    """The one company the question is about, or a clear error naming the candidates and the fix."""
    found = candidates(question, stored, ticker_map, aliases)
    if not found:
        raise NotFoundError("the question names no company the store or the SEC ticker map knows; name the company "
                            "(e.g. \"NVIDIA\") or pass --ticker")
    if len(found) > 1 and COMPARISON_WORDS & set(_words(question)):
        low = question.lower()  # a comparison: the company named first is the subject, the answerer adds the other
        return min(found, key=lambda c: low.find(c.matched.lower()) % (len(low) + 1))
    if len(found) > 1:
        listed = ", ".join(f"{c.ticker} ({c.name})" for c in found[:10])
        raise ConfigError(f"the question could be about several companies: {listed}; pass --ticker to choose one")
    return found[0]
