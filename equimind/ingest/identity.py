"""Who a filing says it is: the registrant's name on its cover page and the short names it defines for itself.

Read from the opening of a filing's canonical text (the first ``IDENTITY_CHARS`` characters: the cover page and,
usually, the first paragraphs of Item 1), so the same answer comes from a full Document at ingest and from a stored
text's first characters later (``query/filters.StoreFilterParser`` reads them for documents ingested before these
keys existed).

Rules:

1. Registrant: the line(s) just before "(Exact name of registrant as specified in its charter)" (any case, any
   spacing, "in charter" too). Rules of underscores and empty lines are skipped; a line that is only a legal form
   ("INC.") or that ends in "&" / ",", or one word after a line of one word, takes the line before it too (pdf text
   sometimes breaks a name, or puts one word on a line; at most four lines). A line that reads as cover-page
   furniture (a file number, "Commission", "(Mark One)", a date, "OR", mostly digits) is no name: the registrant is
   then unknown (a name printed as an image leaves only such lines). Split legal forms are rejoined ("CORP
   ORATION", "AMAZON. COM") and spaces before punctuation dropped ("Co .").
2. Short names: a parenthesis of quoted terms that defines the filer itself — it quotes a generic
   self-reference ("the Company", "we", "us", "our", "Registrant", "the Corporation", "the Firm") — gives its other
   quoted terms: ``3M Company (“3M” or the “Company”)`` → "3M"; ``("AT&T," "we" or "the Company")`` → "AT&T".
   A term must read as a name: a capital or a digit first, at most five words and 40 characters.

``filing_identity`` never raises: broken or empty text gives an empty identity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from equimind.lexicon.companies import LEGAL_FORMS

IDENTITY_CHARS = 20_000  # the opening read: the cover page and the first paragraphs
REGISTRANT_KEY = "registrant_name"
SHORT_NAMES_KEY = "short_names"
SHORT_NAMES_SEP = "; "
GENERIC_SELF = frozenset({"company", "the company", "we", "us", "our", "registrant", "the registrant", "corporation",
                          "the corporation", "firm", "the firm", "issuer", "the issuer"})

_EXACT_NAME = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant\s+as\s+specified\s+in\s+(?:its\s+)?"
                         r"charter\s*\)", re.IGNORECASE)
_RULE = re.compile(r"^[\s_\-=—–.*|]*$")
_FURNITURE = re.compile(r"commission|file\s+n(?:o|umber)|mark\s+one|transition|pursuant|for\s+the\s+|"
                        r"period|ended|securities\s+and\s+exchange|\bform\b|^\W*[☐☒xýo¨]\s|^\W*(?:or|and)\W*$",
                        re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]{2,240})\)")
_QUOTED = re.compile(r"[“\"]\s*([^“”\"]{1,60}?)\s*[”\"]")
_SPLIT_FORM = re.compile(r"\b(CORP|INCORP|COMP|HOLD)\s+(ORATION|ORATED|ANY|INGS)\b", re.IGNORECASE)
_NAME_CHARS = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class FilingIdentity:
    """The registrant's name as its cover page prints it ("" when not found) and its self-defined short names."""

    registrant: str = ""
    short_names: tuple[str, ...] = ()

    def meta_pairs(self) -> tuple[tuple[str, str], ...]:
        """Document meta pairs: only what was found (an empty identity adds none)."""
        pairs: list[tuple[str, str]] = []
        if self.registrant:
            pairs.append((REGISTRANT_KEY, self.registrant))
        if self.short_names:
            pairs.append((SHORT_NAMES_KEY, SHORT_NAMES_SEP.join(self.short_names)))
        return tuple(pairs)

    @classmethod
    def from_meta(cls, meta: dict[str, str]) -> FilingIdentity:
        shorts = tuple(s for s in meta.get(SHORT_NAMES_KEY, "").split(SHORT_NAMES_SEP.strip()) if s.strip())
        return cls(meta.get(REGISTRANT_KEY, "").strip(), tuple(s.strip() for s in shorts))


def has_identity_meta(meta: dict[str, str]) -> bool:
    return REGISTRANT_KEY in meta or SHORT_NAMES_KEY in meta


def filing_identity(text: object) -> FilingIdentity:
    """The identity the opening of ``text`` states (see the module rules); never raises."""
    try:
        if not isinstance(text, str) or not text:
            return FilingIdentity()
        head = text[:IDENTITY_CHARS].replace("\xa0", " ")
        return FilingIdentity(cover_registrant(head), self_defined_names(head))
    except Exception:  # a total function: odd text gives no identity, never a failed ingest
        return FilingIdentity()


def cover_registrant(head: str) -> str:
    """The registrant's name printed before the cover's "(Exact name of registrant ...)" line, else ""."""
    m = _EXACT_NAME.search(head)
    if m is None:
        return ""
    lines = [ln.strip() for ln in head[:m.start()].splitlines()]
    lines = [ln for ln in lines if not _RULE.match(ln)][-6:]
    taken: list[str] = []
    while lines and len(taken) < 4:
        line = lines.pop()
        if _FURNITURE.search(line) or _mostly_digits(line):
            break
        taken.insert(0, line)
        if not _needs_more(taken, lines):
            break
    return _tidy(" ".join(taken))


def _needs_more(taken: list[str], before: list[str]) -> bool:
    if not before:
        return False
    words = [w.strip(".,").lower() for w in " ".join(taken).split()]
    only_forms = bool(words) and all(w in LEGAL_FORMS or w in {"", "&", "and"} for w in words)
    one_word_lines = " " not in taken[0] and " " not in before[-1].strip()  # text with one word a line
    return only_forms or one_word_lines or before[-1].rstrip().endswith(("&", ",")) or taken[0][:1].islower()


def _mostly_digits(line: str) -> bool:
    digits = sum(c.isdigit() for c in line)
    return (digits > 0 and digits * 2 >= len(line.replace(" ", ""))) or not _NAME_CHARS.search(line)


def _tidy(name: str) -> str:
    name = re.sub(r"\s+([.,])", r"\1", " ".join(name.split()))
    name = re.sub(r"\.\s+(com)\b", r".\1", name, flags=re.IGNORECASE)
    name = _SPLIT_FORM.sub(lambda m: m[1] + (m[2] if m[1].isupper() else m[2].lower()), name)
    return name if 2 <= len(name) <= 120 else ""


def self_defined_names(head: str) -> tuple[str, ...]:
    """Short names the filer defines for itself in a parenthesis that also names it generically (module rule 2)."""
    out: list[str] = []
    for m in _PAREN.finditer(head):
        body = " ".join(m.group(1).split())
        terms = [t.strip(" ,;.").strip() for t in _QUOTED.findall(body)]
        if not terms or not _names_itself(terms):
            continue
        out += [t for t in terms if _reads_as_name(t) and t not in out]
        if len(out) >= 3:
            break
    return tuple(out[:3])


def _names_itself(terms: list[str]) -> bool:
    return any(t.lower() in GENERIC_SELF for t in terms)


def _reads_as_name(term: str) -> bool:
    words = term.split()
    return (bool(words) and len(words) <= 5 and len(term) <= 40 and (term[0].isupper() or term[0].isdigit())
            and term.lower() not in GENERIC_SELF and term.lower().removeprefix("the ") not in GENERIC_SELF)
