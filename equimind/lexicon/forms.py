"""SEC form types the product reads, by what they report.

Source: the SEC's form names (EDGAR): Form 10-K (annual report), 10-Q (quarterly report), 20-F and 40-F (annual
reports of foreign private issuers), 8-K / 6-K (current reports), and an amendment of each (``/A``).
"""

from __future__ import annotations

ANNUAL_FORMS = frozenset({"10-K", "10-K/A", "20-F", "40-F"})
QUARTERLY_FORMS = frozenset({"10-Q", "10-Q/A"})
# The periodic reports of a domestic registrant: the forms with an "Item 1A. Risk Factors" section.
DOMESTIC_PERIODIC_FORMS: tuple[str, ...] = ("10-K", "10-Q", "10-K/A", "10-Q/A")
# Every annual and quarterly report, in this order: the default form filter of the filing lists.
PERIODIC_FORMS: tuple[str, ...] = (*DOMESTIC_PERIODIC_FORMS, "20-F", "40-F")
CURRENT_REPORT_FORMS = frozenset({"8-K", "8-K/A", "6-K"})


def is_annual(form: str | None) -> bool:
    """An annual report: a form of ``ANNUAL_FORMS`` or a 10-K variant (10-K405, 10-KT), in any case."""
    f = (form or "").strip().upper()
    return f in ANNUAL_FORMS or f.startswith("10-K")


def is_quarterly(form: str | None) -> bool:
    """A quarterly report: a form of ``QUARTERLY_FORMS`` or a 10-Q variant (10-QT), in any case."""
    f = (form or "").strip().upper()
    return f in QUARTERLY_FORMS or f.startswith("10-Q")
