"""The rating ledger for humans: a research result's "since" block and the ``equimind ledger`` history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.panel import Panel

from equimind.interfaces.cli.render import console

if TYPE_CHECKING:  # annotations only: importing this module stays as light as Rich
    from equimind.core.research import FigureChange, LedgerDelta, LedgerEvidence, LedgerFigure, Rating
    from equimind.memory.records import LedgerHistory

SHOW = 10  # lines per list; --json has them all
_STYLE = {"STRONG_BUY": "bold green", "BUY": "green", "HOLD": "yellow", "SELL": "red", "STRONG_SELL": "bold red"}
_PROVENANCE = ("concept", "accession", "form", "filed", "series_id", "observation_date", "bar_date", "last_bar",
               "figures", "source")  # what a figure line names of its provenance (--json has all of it)


def _rating(r: Rating | None) -> str:
    return r.value if r is not None else "no rating"


def _value(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:,.4g}"


def evidence_line(mark: str, e: LedgerEvidence) -> str:
    """``+ [bull] doc 6f2b3ae13da0 chars 182499-182635 (10-K filed 2025-02-26): "quote"``."""
    doc = f"{e.form} filed {e.filed_at}" if e.form and e.filed_at else e.form or "filing date not read"
    return (f"{mark} [{'/'.join(e.sides) or 'cited'}] doc {e.doc_id[:12]} chars {e.start}-{e.end} ({doc}): "
            f"\"{e.quote}\"")


def _provenance(f: LedgerFigure | None) -> str:
    if f is None:
        return ""
    prov = f.provenance

    def text(v: object) -> str:
        return "+".join(map(str, v)) if isinstance(v, list) else str(v)

    return ", ".join(f"{k}={text(prov[k])}" for k in _PROVENANCE if k in prov)


def figure_line(c: FigureChange) -> str:
    """``revenue_growth_yoy (Revenue growth ...): 0.692 → 0.556 ratio (as of 2025-05-28 → 2025-08-27; ...)``."""
    o, n = c.old, c.new
    ref = n or o
    unit = ref.unit if ref is not None else ""
    cited = " [cited]" if (o and o.cited) or (n and n.cited) else ""
    dates = f"as of {o.as_of if o else '—'} → {n.as_of if n else '—'}"
    prov = _provenance(n) or _provenance(o)
    values = f"{_value(o.value) if o else 'absent'} → {_value(n.value) if n else 'absent'}"
    return f"{c.id}{cited} ({c.name}): {values} {unit} ({dates}{'; ' + prov if prov else ''})"


def _capped(lines: list[str], what: str) -> list[str]:
    if len(lines) <= SHOW:
        return lines
    return [*lines[:SHOW], f"… and {len(lines) - SHOW} more {what} (all of them in --json)"]


def since(d: LedgerDelta) -> None:
    """The "since <date>: BUY → HOLD" block under a research result's rating."""
    body = [f"conviction {d.conviction_from:.2f} → {d.conviction_to:.2f}; compared with run #{d.previous_run_id} "
            f"(as of {d.since}, ran {d.previous_run_at:%Y-%m-%d %H:%M})"]
    if not d.previous_recorded:
        body.append("[dim]that run was stored before the rating ledger: its evidence and figures were not recorded, "
                    "so only the rating is compared[/dim]")
    else:
        cited = sum(1 for c in d.figures_changed if (c.old and c.old.cited) or (c.new and c.new.cited))
        body.append(f"evidence: {len(d.evidence_entered)} entered, {len(d.evidence_left)} left, {d.evidence_kept} "
                    f"kept; figures: {len(d.figures_changed)} changed ({cited} of them cited by a claim)")
        if d.evidence_entered:
            body += ["", "[bold]Evidence entered[/bold]"]
            body += _capped([escape(evidence_line("+", e)) for e in d.evidence_entered], "entered")
        if d.evidence_left:
            body += ["", "[bold]Evidence left[/bold]"]
            body += _capped([escape(evidence_line("−", e)) for e in d.evidence_left], "left")
        if d.figures_changed:
            body += ["", "[bold]Figures changed[/bold] (old → new)"]
            body += _capped([escape(figure_line(c)) for c in d.figures_changed], "figures")
    console.print(Panel("\n".join(body), title=d.headline))


def _change(d: LedgerDelta | None) -> str:
    if d is None:
        return "first entry"
    head = (f"{_rating(d.rating_from)} → {_rating(d.rating_to)}" if d.rating_from != d.rating_to
            else f"{_rating(d.rating_to)} unchanged")
    head += f", conviction {d.conviction_from:.2f} → {d.conviction_to:.2f}"
    if not d.previous_recorded:
        return head + "; evidence not comparable (the entry before predates the ledger)"
    return (f"{head}; evidence +{len(d.evidence_entered)} −{len(d.evidence_left)}; "
            f"{len(d.figures_changed)} figure(s) changed")


def history(h: LedgerHistory) -> None:
    """``equimind ledger TICKER``: one entry per rated run, oldest first, each with its change from the one before
    (two lines an entry, so it reads at any terminal width)."""
    console.print(f"[bold]Rating ledger: {h.ticker}[/bold]" + (f" as of {h.as_of}" if h.as_of else "")
                  + f" ({len(h.entries)} entr{'y' if len(h.entries) == 1 else 'ies'})")
    for row in h.entries:
        e = row.entry
        used = ("evidence and figures not recorded" if row.evidence_count is None
                else f"evidence {row.evidence_count}, figures {row.figures_count}")
        style = _STYLE.get(e.rating.value if e.rating else "", "bold")
        console.print(f"#{e.run_id}  as of [bold]{e.as_of}[/bold]  [{style}]{_rating(e.rating)}[/{style}]  "
                      f"conviction {e.conviction:.2f}  {used}")
        console.print(f"    [dim]ran {e.run_at:%Y-%m-%d %H:%M}[/dim] · {escape(_change(row.change))}")
    console.print(f"[dim]{escape(h.rule)}[/dim]")
