"""``equimind research`` (retrieval, critic, fetch, debate, cited rating) and ``equimind ask`` (a direct, cited
answer to a specific question)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from equimind.interfaces.cli import render_answer, render_report
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

if TYPE_CHECKING:
    from equimind.app.engine import EquiMindEngine


def finish_indexing(engine: EquiMindEngine) -> None:
    """After the answer is out: embed what first-answer indexing deferred, saying so on stderr (stdout keeps only
    the result). Interrupting is safe: the next run on the ticker, or `equimind complete`, finishes it."""
    left = sum(engine.services.docstore.deferred().values())
    if not left:
        return
    sys.stdout.flush()
    typer.echo(f"Embedding the {left} passages deferred for the first answer, so the next run sees the whole "
               "filing (interrupting is safe: the next run finishes it)…", err=True)
    t0 = time.perf_counter()
    report = engine.finish_indexing()
    typer.echo(f"… done: {report.embeddings_computed} embeddings in {time.perf_counter() - t0:.1f} s", err=True)


@app.command()
def research(
    ticker: Annotated[str, typer.Argument(help="Ticker, e.g. NVDA.")],
    question: Annotated[str, typer.Argument(help="Your question, e.g. \"Should I invest in NVIDIA?\"")],
    as_of: AsOfOpt = None,
    snapshot: SnapshotOpt = None,
    provider: Annotated[str | None, typer.Option("--provider", help="offline | openai | anthropic | gemini | "
                                                 "deepseek | ollama | openrouter | openai-compatible")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name for the provider.")] = None,
    rounds: Annotated[int | None, typer.Option("--rounds", help="Bull/Bear rebuttal rounds (0-5).")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Research a ticker: DB-first retrieval, critic, on-demand fetch, Bull/Bear/Judge debate, cited rating."""

    def body() -> None:
        settings = build_settings(home, snapshot, provider=provider, model=model, debate_rounds=rounds)
        engine = open_engine(settings)
        events = None if as_json else render_report.progress_printer()
        rec = engine.research(ticker, question, parse_day(as_of, "--as-of"), on_event=events)
        if as_json:
            emit_json(rec, settings)
        else:
            render_report.recommendation(rec)
        finish_indexing(engine)

    run_guarded(body)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A specific question, e.g. \"What was NVIDIA's data center revenue "
                                            "in fiscal 2025?\"")],
    ticker: Annotated[str | None, typer.Option("--ticker", help="The company's ticker (default: the company the "
                                               "question names).")] = None,
    as_of: AsOfOpt = None,
    snapshot: SnapshotOpt = None,
    provider: Annotated[str | None, typer.Option("--provider", help="offline | openai | anthropic | gemini | "
                                                 "deepseek | ollama | openrouter | openai-compatible")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name for the provider.")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a specific question with the exact filing spans or XBRL facts it rests on, or refuse and say why."""

    def body() -> None:
        settings = build_settings(home, snapshot, provider=provider, model=model)
        engine = open_engine(settings)
        events = None if as_json else render_report.progress_printer()
        ans = engine.ask(question, ticker, parse_day(as_of, "--as-of"), on_event=events)
        if as_json:
            emit_json(ans, settings)
        else:
            render_answer.answer(ans)
        finish_indexing(engine)

    run_guarded(body)
