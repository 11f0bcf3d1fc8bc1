"""Readable Rich output of an ``Answer``: the direct answer first, then every quote and figure it rests on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.panel import Panel

from equimind.interfaces.cli.render import console

if TYPE_CHECKING:  # annotations only: importing this module stays as light as Rich
    from equimind.answer.record import Answer, AnswerSentence


def answer(ans: Answer, *, title: str | None = None) -> None:
    head = title or f"{ans.ticker} as of {ans.as_of}: {ans.question}"
    if ans.refused:
        msg = ans.refusal.message if ans.refusal else "no answer"
        missing = f"\nmissing: {', '.join(ans.refusal.missing)}" if ans.refusal and ans.refusal.missing else ""
        console.print(Panel(f"[bold red]NOT ANSWERED[/bold red] ({ans.refusal.reason.value if ans.refusal else ''})"
                            f": {escape(msg)}{escape(missing)}", title=escape(head)))
    else:
        style = "bold green" if ans.support.value == "supported" else "yellow"
        console.print(Panel(f"[{style}]{ans.support.value.upper()}[/{style}]\n\n{escape(ans.text)}",
                            title=escape(head)))
    found = str(ans.parsed_question.get("company_from") or "")
    if found.startswith("search:"):  # the question named no company: the guess is shown, with how to override it
        console.print(f"[yellow]company:[/yellow] the question names none; answered for {escape(ans.ticker)}, "
                      f"from {escape(found)}")
    for i, s in enumerate(ans.sentences, 1):
        _support(i, s)
    console.print(f"[dim]{len(ans.passages_searched)} passages searched; {ans.dropped_sentences} unverified "
                  f"sentence(s) dropped[/dim]")
    for d in ans.degraded:
        console.print(f"[yellow]degraded:[/yellow] {escape(d)}")


def _support(i: int, s: AnswerSentence) -> None:
    console.print(f"[bold][{i}][/bold] {escape(s.text)}  [dim]({s.method.value})[/dim]")
    for q in s.quotes:
        console.print(f"    “{escape(q.text)}”  [dim]{q.role} · doc {q.doc_id[:12]} chars {q.start}-{q.end} · "
                      f"sha256 {q.doc_sha256[:12]}[/dim]")
    for f in s.figures:
        # a computed figure's inputs are figures of their own, printed next: name them, not their dump
        prov = ", ".join(f"{k}={v}" for k, v in f.provenance.items() if k != "inputs")
        if f.period_start or f.period_end:
            period = f" ({f.period_start or ''}..{f.period_end or ''})"
        else:
            period = f" ({f.provenance['period']})" if f.provenance.get("period") else ""
        value = f"{f.value:,.2f}" if abs(f.value) < 1000 else f"{f.value:,.0f}"
        console.print(f"    {escape(f.name)} = {value} {f.unit}{escape(period)}  [dim]{escape(prov)}[/dim]")
