"""``equimind changes``: what changed between two filings of a company, each change cited on both sides."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import (
    AsOfOpt,
    HomeOpt,
    JsonOpt,
    SnapshotOpt,
    app,
    build_settings,
    emit_json,
    open_engine,
    parse_day,
    run_guarded,
)
from equimind.lexicon.text import clip

if TYPE_CHECKING:
    from equimind.changes.model import Change, ChangeReport, Side


@app.command()
def changes(
    ticker: Annotated[str, typer.Argument(help="Ticker (e.g. NVDA), or the company name of stored local PDFs.")],
    form: Annotated[str | None, typer.Option("--form", help="10-K or 10-Q: the latest two of that form.")] = None,
    from_: Annotated[str | None, typer.Option(
        "--from", help="The old filing: filing date, accession number, fiscal year (2019, 2024Q2) or document id.")
    ] = None,
    to: Annotated[str | None, typer.Option("--to", help="The new filing (same forms as --from).")] = None,
    section: Annotated[list[str] | None, typer.Option(
        "--section", help="Only these sections (repeatable): risk_factors, mdna, business, notes, market_risk, "
                          "legal.")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Changes to print (the JSON holds all).")] = 10,
    as_of: AsOfOpt = None,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What changed from one filing to the next: new and dropped risk factors, changed figures, rewordings,
    ranked by a stated materiality rule, each cited on both sides."""

    def body() -> None:
        settings = build_settings(home, snapshot)
        engine = open_engine(settings)
        report = engine.changes(ticker, form=form, from_=from_, to=to, sections=tuple(section or ()),
                                as_of=parse_day(as_of, "--as-of"))
        if as_json:
            emit_json(report, settings)
        else:
            show(report, top)

    run_guarded(body)


def _where(side: Side) -> str:
    return f"{side.doc_id[:12]}:{side.start}-{side.end}"


def _quote(text: str, n: int = 300) -> str:
    return clip(text, n)


def _change(c: Change) -> None:
    head = f"[bold]{c.rank}. {c.kind.value}[/bold] · {c.section}"
    if c.risk_factor and not c.is_risk_factor:
        head += f" · under “{_quote(c.risk_factor, 90)}”"
    render.console.print(head)
    render.console.print(f"   {c.summary}", highlight=False)
    for run in c.inserted[:3]:
        render.console.print(f"   [green]+ {_quote(run, 160)}[/green]", highlight=False)
    for run in c.deleted[:3]:
        render.console.print(f"   [red]- {_quote(run, 160)}[/red]", highlight=False)
    if c.old is not None:
        render.console.print(f"   [red]old[/red] [{_where(c.old)}] “{_quote(c.old.quote)}”", highlight=False)
    if c.new is not None:
        render.console.print(f"   [green]new[/green] [{_where(c.new)}] “{_quote(c.new.quote)}”", highlight=False)


def show(report: ChangeReport, top: int = 10) -> None:
    o, n = report.old, report.new
    render.console.print(f"[bold]{report.company or report.ticker}[/bold]: {o.title} → {n.title}")
    render.console.print(f"   {report.pairing}")
    counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in report.counts.items() if v)
    render.console.print(f"   {len(report.changes)} changes ({counts or 'none'}); {report.dates_only} sentences "
                         f"changed only a year; {report.citations_checked} cited spans checked, "
                         f"{report.citations_failed} failed")
    for s in report.sections:
        note = f" — {s.note}" if s.note else ""
        render.console.print(f"   · {s.key}: {s.mode}, {s.old_paragraphs} → {s.new_paragraphs} paragraphs, "
                             f"{s.unchanged} unchanged{note}", highlight=False)
    render.console.print(f"[dim]Ranking: {report.ranking_rule}[/dim]")
    for c in report.changes[:top]:
        _change(c)
    if len(report.changes) > top:
        render.console.print(f"[dim]… {len(report.changes) - top} more (--top N, or --json for all)[/dim]")
    for d in report.degraded:
        render.console.print(f"[yellow]degraded:[/yellow] {d}", highlight=False)
