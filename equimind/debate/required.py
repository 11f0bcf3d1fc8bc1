"""The figures every research states (issue 32): valuation, revenue and earnings growth, the margins' trend and
leverage. Each is stated with the figure it rests on, or named as missing with the reason, never silently absent.

A requirement is met by the first of its figure ids that has a value. Valuation is P/E (TTM) while trailing earnings
are positive; with earnings at or below zero P/E has no value and EV/sales (TTM) states it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from equimind.core.research import Figure


@dataclass(frozen=True)
class Requirement:
    key: str  # "valuation"
    label: str
    figures: tuple[tuple[str, str], ...]  # (figure id, how it is stated: "pct" | "x" | "pts")


REQUIREMENTS: tuple[Requirement, ...] = (
    Requirement("valuation", "valuation", (("pe_ttm", "x"), ("ev_to_sales_ttm", "x"))),
    Requirement("revenue_growth", "revenue growth", (("revenue_growth_yoy", "pct"), ("revenue_growth_ttm", "pct"))),
    Requirement("earnings_growth", "earnings growth", (("net_income_growth_yoy", "pct"),
                                                       ("net_income_growth_ttm", "pct"),
                                                       ("eps_diluted_growth_ttm", "pct"))),
    Requirement("margin_trend", "margin trend", (("operating_margin_change_ttm", "pts"),
                                                 ("gross_margin_change_ttm", "pts"),
                                                 ("net_margin_change_ttm", "pts"))),
    Requirement("leverage", "leverage", (("debt_to_equity", "x"),)),
)


@dataclass(frozen=True)
class RequiredCheck:
    stated: tuple[str, ...]  # "valuation: P/E (TTM) 53.2 [figure pe_ttm]"
    missing: tuple[tuple[str, str], ...]  # (capability, reason)


def _fmt(value: float, how: str) -> str:
    if how == "pct":
        return f"{value:+.1%}"
    if how == "pts":
        return f"{value * 100:+.1f} points of revenue"
    return f"{value:.2f}"


def check_required(figures: Sequence[Figure]) -> RequiredCheck:
    by_id = {f.id: f for f in figures}
    stated: list[str] = []
    missing: list[tuple[str, str]] = []
    for req in REQUIREMENTS:
        hit = next(((by_id[i], how) for i, how in req.figures if i in by_id and by_id[i].value is not None), None)
        if hit is not None:
            fig, how = hit
            stated.append(f"{req.label}: {fig.name} {_fmt(float(fig.value or 0.0), how)} [figure {fig.id}]")
            continue
        present = [by_id[i] for i, _ in req.figures if i in by_id]
        notes = "; ".join(str(f.provenance.get("note")) for f in present if f.provenance.get("note"))
        if present:
            reason = f"{', '.join(f.id for f in present)} computed without a value ({notes or 'no value'})"
        else:
            reason = (f"none of {', '.join(i for i, _ in req.figures)} could be computed: see the fundamentals "
                      "lines (no XBRL facts or too few periods)")
        missing.append((f"required.{req.key}", reason))
    return RequiredCheck(tuple(stated), tuple(missing))


# ---- aspect coverage ------------------------------------------------------------------------------------------

# The aspects every research covers (issue 32), each by the claim themes that argue it. Macro has no theme: no rule
# argues the macro panel's figures, so a research says so rather than implying it weighed them.
ASPECT_THEMES: tuple[tuple[str, frozenset[str]], ...] = (
    ("growth", frozenset({"growth", "demand"})), ("margins", frozenset({"profitability"})),
    ("valuation", frozenset({"valuation"})), ("balance sheet", frozenset({"leverage"})),
    ("capital return", frozenset({"capital_return"})), ("concentration", frozenset({"concentration"})),
    ("regulation and legal", frozenset({"regulation", "legal"})), ("supply", frozenset({"supply"})),
    ("competition", frozenset({"competition"})), ("guidance", frozenset({"guidance"})), ("macro", frozenset()),
)


def uncovered_aspects(themes: Sequence[str]) -> list[str]:
    """The aspects (in ASPECT_THEMES order) no theme of ``themes`` argues; macro, which no rule argues, left out."""
    return [aspect for aspect, wanted in ASPECT_THEMES if wanted and not any(t in wanted for t in themes)]


def aspect_coverage(themes: Sequence[str], read: str, searched: Mapping[str, str] | None = None) -> list[str]:
    """One line per aspect: how many verified claims argue it, or "no evidence found in" what was read (named
    once, on the first such line). ``searched``: aspect -> what the aspect search did for it (the query it searched,
    or why it searched nothing), said beside the aspect's count or its "no evidence found"."""
    lines: list[str] = []
    named = False
    searched = searched or {}
    for aspect, wanted in ASPECT_THEMES:
        n = sum(1 for t in themes if t in wanted)
        how = searched.get(aspect)
        if n:
            lines.append(f"{aspect}: {n} claim(s)" + (f" ({how})" if how else ""))
        elif aspect == "macro":
            lines.append("macro: no claim (the macro panel's figures are context: no rule of the analyst argues "
                         "them)")
        else:
            lines.append(f"{aspect}: no evidence found {'there either' if named else f'in {read}'}"
                         + (f" ({how})" if how else ""))
            named = True
    return lines
