"""Readable Rich reports: the recommendation (with its rating ledger "since" block), the market report and the memory
snapshot."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from equimind.interfaces.cli import render_ledger
from equimind.interfaces.cli.render import console, err_console
from equimind.interfaces.cli.render_answer import answer  # same package, Rich only

if TYPE_CHECKING:  # annotations only: importing this module stays as light as Rich
    from equimind.analytics.market import MarketReport
    from equimind.core.research import Claim, Figure, Recommendation
    from equimind.memory.records import MemorySnapshot
    from equimind.research.events import ResearchEvent

_RATING_STYLE = {"STRONG_BUY": "bold green", "BUY": "green", "HOLD": "yellow", "SELL": "red",
                 "STRONG_SELL": "bold red"}


def progress_printer() -> Callable[[ResearchEvent], None]:
    def show(ev: ResearchEvent) -> None:
        it = f"[{ev.iteration}] " if ev.iteration else ""
        err_console.print(f"[dim]{ev.stage:>8}[/dim] {it}{ev.message}")

    return show


def recommendation(rec: Recommendation) -> None:
    if rec.answer is not None:  # a specific ask's answer, or a decision ask's topic answered above its rating
        answer(rec.answer)  # type: ignore[arg-type]
    if rec.rating is None:
        if rec.answer is None:
            console.print(Panel(f"[bold red]REFUSED[/bold red]: {rec.refusal_reason}",
                                title=f"{rec.ticker} as of {rec.as_of}"))
    else:
        style = _RATING_STYLE.get(rec.rating.value, "bold")
        head = (f"[{style}]{rec.rating.value}[/{style}]  conviction {rec.conviction:.2f}  "
                f"provider {rec.provider}\n\n{escape(rec.thesis)}")
        console.print(Panel(head, title=f"{rec.ticker} as of {rec.as_of}: {rec.question}"))
        if rec.since is not None:  # the rating ledger: what changed since the previous rated run
            render_ledger.since(rec.since)
    notes: list[str] = []
    _cases(rec, notes)
    _judge(rec)
    _figures(rec.figures, rec)
    _agentic(rec)
    if notes:
        console.print("[bold]Cited sources[/bold]")
        for line in notes:
            console.print(escape(line))
    _degraded(rec)


def _cases(rec: Recommendation, notes: list[str]) -> None:
    if not (rec.bull_case or rec.bear_case):  # a refusal: there was no debate to show
        return
    table = Table(title="Bull vs Bear", show_lines=True, expand=True)
    table.add_column("Bull", ratio=1)
    table.add_column("Bear", ratio=1)
    bull = [_claim(c, notes) for c in rec.bull_case]
    bear = [_claim(c, notes) for c in rec.bear_case]
    for i in range(max(len(bull), len(bear))):
        table.add_row(bull[i] if i < len(bull) else "", bear[i] if i < len(bear) else "")
    console.print(table)
    if rec.dropped_claims:
        console.print(f"[yellow]{rec.dropped_claims} claim(s) dropped: their citations did not verify[/yellow]")


def _claim(c: Claim, notes: list[str]) -> str:
    marks = []
    for cit in c.citations:
        notes.append(f"[{len(notes) + 1}] doc {cit.doc_id[:12]} chars {cit.start}-{cit.end}: "
                     f"\"{' '.join(cit.quote.split())[:300]}\"")
        marks.append(f"[{len(notes)}]")
    marks += [f"(fig: {f})" for f in c.figure_ids]
    return f"{escape(c.text)} {escape(' '.join(marks))} [dim](strength {c.strength:.2f})[/dim]"


def _judge(rec: Recommendation) -> None:
    j = rec.judge
    if j is None:
        return
    # filing text and the thesis's citation markers ("[figure pe_ttm]") are text, never Rich markup
    body = [f"winning side: {j.winning_side.value if j.winning_side else 'none'}",
            f"thesis: {escape(j.winning_thesis)}"]
    body += [f"risk: {escape(r)}" for r in j.key_risks] + [f"catalyst: {escape(c)}" for c in j.key_catalysts]
    body += [f"[dim]· {escape(r)}[/dim]" for r in j.reasoning]
    console.print(Panel("\n".join(body), title="Judge"))


def _figures(figures: list[Figure], rec: Recommendation | None = None, title: str = "Figures") -> None:
    if not figures:
        return
    table = Table(title=title)
    for col in ("figure", "value", "unit", "as of", "formula / provenance"):
        table.add_column(col)
    for f in figures:
        prov = f.provenance
        src = ", ".join(f"{k}={prov[k]}" for k in ("concept", "accession", "filed", "source", "bar") if k in prov)
        table.add_row(f.name, _fmt(f.value), f.unit, str(f.as_of or ""), f"{f.formula}; {src}"[:120])
    console.print(table)


def _fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:,.4g}"


def _agentic(rec: Recommendation) -> None:
    a = rec.agentic_rag
    if a is None:
        return
    lines = [f"iterations {a.iterations}, converged {a.converged}, coverage {a.coverage:.2f}, "
             f"curated {a.curated_nodes}, discarded {a.discarded_nodes}"]
    for it in a.log:
        crit = it.critic or {}
        fetched = "; ".join(f"{f.get('kind')}: {f.get('outcome')}" for f in it.fetched) or "nothing"
        lines.append(f"[{it.iteration}] {len(it.queries)} queries, {len(it.hits)} hits; critic "
                     f"{'sufficient' if crit.get('sufficient') else 'insufficient'} "
                     f"(missing: {', '.join(map(str, crit.get('missing', []))) or 'none'}); fetched: {fetched}")
    if a.answerability:
        ans = a.answerability
        lines.append(f"answerability: {'answerable' if ans.get('answerable') else 'NOT answered'} "
                     f"({ans.get('rule')}; {ans.get('documents_searched', 0)} documents searched)")
    console.print(Panel("\n".join(lines), title="Agentic RAG"))


def _degraded(rec: Any) -> None:
    for d in rec.degraded:
        console.print(f"[yellow]degraded:[/yellow] {d.capability}: {d.reason}")


def market(report: MarketReport) -> None:
    lc = report.last_close
    console.print(Panel(f"last close {_fmt(lc.value)} on {lc.as_of} ({report.mode})",
                        title=f"{report.ticker} {report.company or ''} as of {report.as_of}"))
    _figures(report.indicators, title="Indicators")
    _figures(report.fundamentals, title="Fundamentals")
    if report.sentiment:
        _figures(report.sentiment.figures, title="Sentiment")
    _figures(report.macro, title="Macro")
    _figures(report.geography, title="Revenue by country (10-K inline XBRL)")
    _figures(report.web, title="Web intelligence (job postings, GitHub)")
    _degraded(report)


def memory(snap: MemorySnapshot) -> None:
    console.print(Panel(f"{snap.evidence_count} evidence entries, {len(snap.summaries)} summaries, "
                        f"{len(snap.runs)} research runs", title=f"Memory: {snap.ticker}"))
    for s in snap.summaries[:20]:
        console.print(s.model_dump_json()[:300])
    for r in snap.runs[:20]:
        console.print(r.model_dump_json())
