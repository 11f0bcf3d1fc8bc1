"""Which two filings a ``changes`` request compares, or the error that names why none can be chosen.

The candidates are a company's periodic filings (10-K and 10-Q families, ``lexicon.forms``) visible at the as-of
date, in filing order (a local PDF without a filing date sorts by the fiscal year and quarter it states).

- **Default**: the latest filing against the one before it of the same form; when there is none (a first 10-Q after
  a 10-K), the 10-Q against the 10-K before it, through its "Risk Factors" update.
- ``form``: only that form's filings (the latest two).
- ``from_`` / ``to`` (``--from`` / ``--to``): a filing date (YYYY-MM-DD), an accession number, a document id (or a
  prefix of at least 8 characters), or a fiscal year ("2019", "FY2019", "2024Q2") for filings without a filing
  date. ``to`` alone compares it with the filing before it; ``from_`` alone compares the latest with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from equimind.core.errors import ConfigError, NotFoundError
from equimind.core.search import DocumentRef
from equimind.lexicon.forms import is_annual, is_quarterly

_FISCAL = re.compile(r"^(?:FY)?(?P<year>(?:19|20)\d{2})(?:\s*Q(?P<q>[1-4]))?$", re.IGNORECASE)
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ACCESSION = re.compile(r"^\d{10}-\d{2}-\d{6}$")


@dataclass(frozen=True)
class Candidate:
    ref: DocumentRef
    meta: dict[str, str]

    @property
    def fiscal(self) -> tuple[int, int] | None:
        y = self.meta.get("fiscal_year", "")
        if not y.isdigit():
            return None
        q = self.meta.get("fiscal_period", "") or ""
        m = re.search(r"Q([1-4])", q) or re.search(r"Q([1-4])", self.ref.title)
        return int(y), int(m.group(1)) if m else (5 if is_annual(self.ref.form) else 0)

    @property
    def order(self) -> tuple[date, int]:
        """Filing date, else the period end, else the fiscal year's end (a PDF without dates)."""
        d = self.ref.filed_at or self.ref.period_end
        if d is None and (f := self.fiscal) is not None:
            d = date(f[0], 12, 31)
        return (d or date.min, (self.fiscal or (0, 0))[1])

    def label(self) -> str:
        when = self.ref.filed_at.isoformat() if self.ref.filed_at else (
            f"FY{self.meta['fiscal_year']}" if self.meta.get("fiscal_year") else "undated")
        return f"{self.ref.form} {when} ({self.ref.doc_id[:12]})"


def periodic(refs: Sequence[tuple[DocumentRef, dict[str, str]]], ticker: str, as_of: date | None
             ) -> list[Candidate]:
    """The company's 10-K / 10-Q filings, oldest first. A document matches by ticker, or, with no ticker (a local
    PDF), by its company name. Filings after ``as_of`` are not visible."""
    want = ticker.strip().upper()
    out = []
    for ref, meta in refs:
        if not (is_annual(ref.form) or is_quarterly(ref.form)):
            continue
        names = {(ref.ticker or "").upper()} if ref.ticker else {
            (ref.company or "").upper(), (ref.company or "").upper().replace(" ", "")}
        if want not in names:
            continue
        c = Candidate(ref, meta)
        if as_of is not None and c.order[0] > as_of:
            continue
        out.append(c)
    out.sort(key=lambda c: c.order)
    return out


def _matches(c: Candidate, spec: str) -> bool:
    s = spec.strip()
    if _ISO.match(s):
        return c.ref.filed_at is not None and c.ref.filed_at.isoformat() == s
    if _ACCESSION.match(s):
        return c.meta.get("accession") == s
    m = _FISCAL.match(s.replace(" ", ""))
    if m:
        f = c.fiscal
        if f is None or f[0] != int(m.group("year")):
            return False
        q = m.group("q")
        return is_annual(c.ref.form) if q is None else f[1] == int(q)
    return len(s) >= 8 and c.ref.doc_id.startswith(s.lower())


def check_spec(spec: str, which: str) -> str:
    """``spec`` stripped, or a ConfigError naming the forms a filing can be named by."""
    s = spec.strip()
    if not (_ISO.match(s) or _ACCESSION.match(s) or _FISCAL.match(s.replace(" ", "")) or
            (len(s) >= 8 and re.fullmatch(r"[0-9a-fA-F]+", s))):
        raise ConfigError(f"{which} {spec!r} is not a filing date (YYYY-MM-DD), an accession number "
                          "(0001045810-25-000023), a fiscal year (2019, 2024Q2) or a document id")
    return s


def check_form(form: str | None) -> str | None:
    if form is None:
        return None
    f = form.strip().upper()
    if f not in ("10-K", "10-Q"):
        raise ConfigError(f"form {form!r}: use 10-K or 10-Q")
    return f


def of_form(cands: list[Candidate], form: str | None) -> list[Candidate]:
    f = check_form(form)
    return cands if f is None else [c for c in cands if (is_annual(c.ref.form) if f == "10-K"
                                                       else is_quarterly(c.ref.form))]


def found(cands: list[Candidate], spec: str) -> bool:
    """Whether a stored candidate matches a (checked) filing spec."""
    return any(_matches(c, spec.strip()) for c in cands)


def _find(cands: list[Candidate], spec: str, which: str) -> Candidate:
    s = check_spec(spec, which)
    hits = [c for c in cands if _matches(c, s)]
    if not hits:
        listed = ", ".join(c.label() for c in cands) or "none"
        raise NotFoundError(f"no stored filing matches {which} {spec!r}; the filings are: {listed}")
    return hits[-1]


def choose(cands: list[Candidate], ticker: str, *, form: str | None = None, from_: str | None = None,
           to: str | None = None) -> tuple[Candidate, Candidate, str]:
    """(old, new, why this pair). Raises ConfigError / NotFoundError naming the fix."""
    cands = of_form(cands, form)
    if not cands:
        raise NotFoundError(f"no {form or '10-K or 10-Q'} filing of {ticker} is stored or could be fetched; "
                            f"run `equimind ingest --tickers {ticker}` (or ingest its PDFs with `--local`)")
    new = _find(cands, to, "to") if to else None
    old = _find(cands, from_, "from") if from_ else None
    if old is not None and new is not None:
        if old.ref.doc_id == new.ref.doc_id:
            raise ConfigError("from and to name the same filing; name two different filings")
        if old.order > new.order:
            raise ConfigError(f"from ({old.label()}) is later than to ({new.label()}); swap them")
        return old, new, "the two filings asked for (from, to)"
    if new is None:
        new = cands[-1]
    if old is not None:
        if old.order >= new.order:
            raise ConfigError(f"from ({old.label()}) is not earlier than the latest filing ({new.label()}); "
                              "name a later one as to")
        return old, new, "the latest filing against from"
    before = [c for c in cands if c.order < new.order and c.ref.doc_id != new.ref.doc_id]
    if not before:
        raise NotFoundError(f"only one {form or 'periodic'} filing of {ticker} is available ({new.label()}); "
                            "a comparison needs two: ingest an earlier one (e.g. `equimind ingest --tickers "
                            f"{ticker} --forms 10-K,10-Q`)" + (", or leave out the form to compare across forms" if form
                                                                else ""))
    same = [c for c in before if is_annual(c.ref.form) == is_annual(new.ref.form)]
    if same:
        return same[-1], new, f"the latest {new.ref.form} against the {same[-1].ref.form} before it"
    annual = [c for c in before if is_annual(c.ref.form)]
    old = annual[-1] if annual else before[-1]
    return old, new, (f"the latest {new.ref.form} against the {old.ref.form} before it (no earlier "
                      f"{new.ref.form}): its Item 1A risk-factor update is compared")


def check_same_company(old: DocumentRef, new: DocumentRef) -> None:
    """Two filings of different companies are not a change."""
    a = (old.ticker or old.company or "").upper()
    b = (new.ticker or new.company or "").upper()
    if a and b and a != b:
        raise ConfigError(f"the two filings are of different companies ({a} and {b}); compare filings of one company")
