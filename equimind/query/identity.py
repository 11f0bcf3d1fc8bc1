"""Company identity from data: every name a stored company answers to, and which company a question's words name.

One model for the three readers of company names (``query/filters`` for the search auto-filter,
``query/company`` for ``ask`` without a ticker, ``query/company_identity`` for the tickers of ticker-less documents).
A stored company's aliases come only from data:

1. its documents' company name, and that name without legal suffixes ("Lockheed Martin" for "Lockheed Martin
   Corporation"; ``company_aliases``);
2. the registrant's name on the cover page and the short names the filing defines for itself ("3M", "AT&T"), read
   at ingest into the Document meta (``ingest/identity.py``) or, for documents stored before, from the first
   characters of the stored text;
3. the SEC registrant its names match (``Registrants.ticker_of``: exact name, else the one registrant the name
   starts) gives its ticker and registrant name;
4. ampersand forms of any of these (``ampersand_forms``): "&" dropped between letters ("AT&T" → "ATT"), "and" for
   "&" ("AT and T"), and for a name of two words around "&" the initials joined by "&" or "n" ("Johnson & Johnson"
   → "J&J", "JnJ");
5. the leading word of a name of two or more words ("Lockheed"), only when no other SEC registrant's name and no
   other stored company's name starts with it (``Registrants.leads``; many registrants start with "American", so
   "American" never names one). Without the SEC map the leading word is never used.

An alias of one word that is not the documents' own company name (a leading word, a short name, an initials form)
must be written as a proper noun: capitalised or upper case ("Lockheed", "JnJ", "ATT"), never lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from equimind.core.documents import Document
from equimind.core.lru import LRU
from equimind.core.search import DocumentRef
from equimind.ingest.identity import GENERIC_SELF, FilingIdentity
from equimind.lexicon.companies import LEGAL_FORMS
from equimind.sources.base import TickerInfo

# Trailing words an alias drops: the legal forms, and the generic business words a name ends in ("Meta Platforms",
# "Cisco Systems", "Yum! Brands") that users leave out; a two-letter state tag ("/DE") and ".com" go too.
_ALIAS_SUFFIXES = LEGAL_FORMS | frozenset({"companies", "platforms", "technologies", "systems", "international",
                                           "brands", "enterprises", "the"})
_SUFFIXES = re.compile(
    rf"(?:[,\s&]+(?:{'|'.join(sorted(_ALIAS_SUFFIXES, key=lambda w: (-len(w), w)))})\.?)+$|/[a-z]{{2}}$|\.com\b",
    re.IGNORECASE,
)
_NON_WORD = re.compile(r"[^0-9a-z]+")
_TWO_WORDS_AMP = re.compile(r"([A-Za-z][A-Za-z'-]+)\s*&\s*([A-Za-z][A-Za-z'-]+)")


@dataclass(frozen=True)
class DocFacts:
    """What the parser may know about one stored document: its names, ticker, fiscal year and, when read, the
    registrant and short names its opening states."""

    doc_id: str
    company: str | None
    ticker: str | None
    fiscal_year: int | None
    registrant: str = ""
    short_names: tuple[str, ...] = ()

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
        ident = FilingIdentity.from_meta(meta)
        return cls(doc_id, company, ticker, year, ident.registrant, ident.short_names)

    def names(self) -> tuple[str, ...]:
        """The company's names this document knows: its company name, the registrant's, its short names."""
        return tuple(dict.fromkeys(n for n in (self.company or "", self.registrant, *self.short_names) if n))


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


def short_name(company: str | None) -> str:
    """The company's name without legal suffixes ("American Express" for "American Express Co"), else ""."""
    aliases = company_aliases(company)
    return aliases[1] if len(aliases) > 1 else aliases[0] if aliases else ""


def name_key(name: str) -> str:
    """A company name compared: legal suffixes dropped, lower case, punctuation and hyphens as spaces."""
    return " ".join(_NON_WORD.sub(" ", short_name(name).lower()).split())


def ampersand_forms(alias: str) -> tuple[str, ...]:
    """Other spellings of a name with "&" (rule 4): "AT&T" → "ATT", "AT and T"; "Procter & Gamble" → "Procter and
    Gamble", "P&G", "PnG"."""
    if "&" not in alias:
        return ()
    out = [re.sub(r"(?<=\w)&(?=\w)", "", alias), re.sub(r"\s*&\s*", " and ", alias)]
    two = _TWO_WORDS_AMP.fullmatch(alias.strip())
    if two and " " in alias and all(len(w) >= 2 for w in two.groups()):
        a, b = (w[0].upper() for w in two.groups())
        out += [f"{a}&{b}", f"{a}n{b}"]
    return tuple(dict.fromkeys(o for o in out if o != alias))


def leading_word(name: str) -> str:
    """The first word of a name of two or more words, without legal suffixes ("Lockheed"), else ""."""
    words = [w for w in re.split(r"[\s-]+", short_name(name)) if w]
    if len(words) < 2 or words[0].lower() == "the":
        return ""
    word = words[0].strip(",.")
    return word if len(word) >= 3 and word[0].isalpha() and word.lower() not in GENERIC_SELF else ""


class Registrants:
    """The SEC ticker map read for identity: registrant name keys → tickers, and the registrant names each leading
    word starts. A registrant listed under several tickers gives its first (the map lists the common stock first);
    one-character tickers are never joined (too easily an ordinary capital letter)."""

    def __init__(self, ticker_names: Mapping[str, str]) -> None:
        self.ticker_names = ticker_names
        self.by_key: dict[str, list[str]] = {}
        self.leads: dict[str, set[str]] = {}
        seen: set[str] = set()
        for ticker, name in ticker_names.items():
            if name in seen or not (key := name_key(name)):
                continue
            seen.add(name)
            self.leads.setdefault(key.split()[0], set()).add(key)
            if len(ticker) >= 2:
                self.by_key.setdefault(key, []).append(ticker.upper())

    def ticker_of(self, names: Iterable[str]) -> str | None:
        """The ticker of the registrant the first name that names one names: its exact key, else the one registrant
        whose name starts with it as whole words (an exact key of two registrants, or a prefix of two, names none;
        the next name is tried)."""
        for name in names:
            key = name_key(name)
            exact = self.by_key.get(key, []) if key else []
            prefix = [] if exact or not key else [t for k, ts in self.by_key.items() if k.startswith(key + " ")
                                                  for t in ts]
            if len(exact or prefix) == 1:
                return (exact or prefix)[0]
        return None

    def lead_is_distinct(self, word: str, own: set[str]) -> bool:
        """No registrant name other than the company's own (``own``: name keys) starts with ``word`` (a
        ``lead_key``)."""
        return bool(word) and not (self.leads.get(word, set()) - own)


class RegistrantTickers(dict[str, str]):
    """doc_id → the ticker joined from the SEC map, carrying the map it was read from (for leading words)."""

    def __init__(self, joined: Mapping[str, str], registrants: Registrants) -> None:
        super().__init__(joined)
        self.registrants = registrants


_REGISTRANTS: LRU[int, tuple[object, Registrants]] = LRU(4)  # by map object: the search filter's and ask's maps


def registrants_of(ticker_map: Mapping[str, str] | Mapping[str, TickerInfo]) -> Registrants:
    """``Registrants`` of a map (ticker → registrant name, or the SEC map's ``TickerInfo`` entries), built once per
    map object."""
    hit = _REGISTRANTS.get(id(ticker_map))
    if hit is not None and hit[0] is ticker_map:
        return hit[1]
    reg = Registrants({t: v if isinstance(v, str) else v.name for t, v in ticker_map.items()})
    _REGISTRANTS.put(id(ticker_map), (ticker_map, reg))
    return reg


@dataclass(frozen=True)
class CompanyEntry:
    """One stored company as the identity model reads it: its key (ticker, else name key), names and ticker."""

    key: str
    names: tuple[str, ...]
    ticker: str | None = None


@dataclass(frozen=True)
class Alias:
    text: str
    proper: bool  # one word that must be written as a proper noun (capitalised or upper case)


def lead_key(word: str) -> str:
    """A leading word compared: lower case, up to its first punctuation ("Dick's" → "dick")."""
    parts = _NON_WORD.sub(" ", word.lower()).split()
    return parts[0] if parts else ""


def company_names(entry: CompanyEntry, registrants: Registrants | None, taken_leads: Iterable[str] = ()) -> \
        tuple[Alias, ...]:
    """Every alias of one stored company (module rules 1-5). ``taken_leads``: the leading words (``lead_key``) of the
    other stored companies' names, never distinctive."""
    own_words = {a.lower() for a in company_aliases(entry.names[0] if entry.names else "")}
    sec = registrants.ticker_names.get(entry.ticker or "", "") if registrants is not None else ""
    texts = [a for n in (*entry.names, sec) for a in company_aliases(n)]
    texts += [f for t in list(texts) for f in ampersand_forms(t)]
    out = [Alias(t, re.search(r"[\s-]", t) is None and t.lower() not in own_words) for t in dict.fromkeys(texts)]
    if registrants is not None:
        own = {name_key(n) for n in (*entry.names, sec)} - {""}
        taken = set(taken_leads)
        for name in entry.names:
            word = leading_word(name)
            known = word.lower() in {a.text.lower() for a in out}
            if word and not known and lead_key(word) not in taken and registrants.lead_is_distinct(lead_key(word), own):
                out.append(Alias(word, True))
    return tuple(dict.fromkeys(out))


_COMMON_WORDS = frozenset(
    ["block", "target", "apple", "visa", "gap", "square", "ball", "meta", "oracle", "general", "best", "shell",
     "ford", "progressive"]
)


def alias_pattern(alias: str, proper: bool = False) -> re.Pattern[str]:
    """The alias as whole words (spaces and hyphens interchangeable: "Coca Cola" = "Coca-Cola"; a possessive "'s"
    allowed). A proper one (``Alias.proper``), or a one-word alias that is an ordinary word ("Block", "Target"),
    matches only capitalised or in upper case."""
    if proper or (re.search(r"[\s-]", alias) is None and alias.lower() in _COMMON_WORDS):
        return re.compile(rf"(?<![\w&-])(?:{re.escape(alias[0].upper() + alias[1:])}|{re.escape(alias.upper())})"
                          rf"(?:'s)?(?![\w&-])")
    body = r"[\s-]+".join(re.escape(w) for w in re.split(r"[\s-]+", alias) if w)
    return re.compile(rf"(?<![\w&-]){body}(?:'s)?(?![\w&-])", re.IGNORECASE)


Span = tuple[int, int]


class IdentityModel:
    """The aliases of a set of stored companies and which of them a question names."""

    def __init__(self, entries: Iterable[CompanyEntry], registrants: Registrants | None = None) -> None:
        self.entries = {e.key: e for e in entries}
        owners: dict[str, set[str]] = {}
        for e in self.entries.values():
            for n in e.names:
                if k := lead_key(short_name(n)):
                    owners.setdefault(k, set()).add(e.key)
        self.aliases: dict[str, tuple[Alias, ...]] = {}
        self._patterns: dict[str, list[re.Pattern[str]]] = {}
        for key, e in self.entries.items():
            taken = [w for w, keys in owners.items() if keys - {key}]
            self.aliases[key] = company_names(e, registrants, taken)
            pats = [alias_pattern(a.text, a.proper) for a in self.aliases[key]]
            if e.ticker and len(e.ticker) >= 2:
                pats.append(re.compile(rf"(?<![\w$-]){re.escape(e.ticker.upper())}(?![\w-])"))
            self._patterns[key] = pats

    def spans(self, question: str) -> dict[str, set[Span]]:
        """Company key → the spans of the question its aliases (or ticker) match."""
        found: dict[str, set[Span]] = {}
        for key, pats in self._patterns.items():
            hits = {m.span() for p in pats for m in p.finditer(question)}
            if hits:
                found[key] = hits
        return found

    def named(self, question: str) -> tuple[dict[str, set[Span]], tuple[tuple[str, ...], ...]]:
        """The companies named (a name inside a longer name of another company names only the longer one) and the
        groups of companies one name names equally (``ambiguous_groups``)."""
        return resolve_spans(self.spans(question))


def resolve_spans(found: Mapping[str, set[Span]]) -> tuple[dict[str, set[Span]], tuple[tuple[str, ...], ...]]:
    def inside(span: Span, key: str) -> bool:  # strictly inside another company's longer span
        return any(o != key and a <= span[0] and span[1] <= b and (a, b) != span
                   for o, spans in found.items() for a, b in spans)

    kept = {k: {s for s in spans if not inside(s, k)} for k, spans in found.items()}
    kept = {k: s for k, s in kept.items() if s}
    groups: set[tuple[str, ...]] = set()
    for key, spans in kept.items():
        sharers = {o for o, other in kept.items() if o != key and spans & other}
        if sharers and all(any(s in kept[o] for o in sharers) for s in spans):
            groups.add(tuple(sorted({key, *sharers})))
    return kept, tuple(sorted(groups))
