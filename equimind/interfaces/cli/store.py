"""The store's commands: ``ingest``, ``search`` and ``reindex``. Each body builds settings, opens services, calls one
engine/service function and renders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from equimind.core.errors import ConfigError, NotFoundError
from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import (
    HomeOpt,
    JsonOpt,
    SnapshotOpt,
    app,
    build_settings,
    emit_json,
    open_engine,
    open_store,
    parse_day,
    run_guarded,
    split_csv,
)


@app.command()
def ingest(
    snapshot: SnapshotOpt = None,
    tickers: Annotated[str | None, typer.Option("--tickers", help="Comma-separated tickers, e.g. NVDA,AAPL.")] = None,
    forms: Annotated[str | None, typer.Option("--forms", help="Comma-separated forms, e.g. 10-K,10-Q.")] = None,
    pdf_dir: Annotated[Path | None, typer.Option("--pdf-dir", help="Folder of PDF/HTML filings to ingest.")] = None,
    path: Annotated[list[Path] | None, typer.Option("--path", help="A PDF/HTML file (repeatable).")] = None,
    market: Annotated[bool, typer.Option("--market/--no-market",
                                         help="Also store prices and fundamentals as dated documents.")] = True,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ingest filings (snapshot, live SEC, or local PDF/HTML files) into the store. Idempotent."""

    def body() -> None:
        from equimind.ingest.collect import collect

        settings = build_settings(home, snapshot)
        services = open_store(settings)
        items, total, mode = collect(settings, services.sources, split_csv(tickers), split_csv(forms), pdf_dir,
                                     path or [], market=market)
        pipeline = services.pipeline()
        with render.IngestProgress(enabled=not as_json, total=total, mode=mode) as progress:
            report = pipeline.run(items, progress=progress.update, total=total)
        if as_json:
            emit_json(report, settings)
        else:
            render.ingest_report(report, mode)
        if report.documents_failed and not (report.documents_added or report.documents_skipped
                                            or report.documents_completed):
            raise typer.Exit(1)

    run_guarded(body)


@app.command()
def complete(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """Embed the passages that first-answer indexing deferred (a research or ask that fetched filings embeds what its
    answer needs first, the rest after it). Idempotent; a no-op when nothing is deferred."""

    def body() -> None:
        settings = build_settings(home, None)
        engine = open_engine(settings)
        left = engine.services.docstore.deferred()
        report = engine.finish_indexing()
        if as_json:
            emit_json(report, settings)
        else:
            typer.echo(f"{report.documents_completed} of {len(left)} deferred documents completed, "
                       f"{report.embeddings_computed} embeddings computed")

    run_guarded(body)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    ticker: Annotated[list[str] | None, typer.Option("--ticker", help="Restrict to ticker (repeatable).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Filed on/after YYYY-MM-DD.")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Filed on/before YYYY-MM-DD.")] = None,
    form: Annotated[list[str] | None, typer.Option("--form", help="Form, e.g. 10-K (repeatable).")] = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="sec_edgar | yahoo_finance | local.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="dense | bm25 | hybrid | hybrid+rerank.")] = None,
    k: Annotated[int | None, typer.Option("-k", "--top-k", help="Number of passages (default 10).")] = None,
    auto_filter: Annotated[bool, typer.Option(
        "--auto-filter/--no-auto-filter",
        help="With no filter option given, restrict to the companies and fiscal years the query names.")] = True,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid search over stored filings: top passages with parents, spans and every stage's score."""

    def body() -> None:
        from equimind.core.documents import (
            FilterSpec,
            Source,  # pydantic models: kept out of `equimind --help`
        )

        settings = build_settings(home)
        try:
            sources = tuple(Source(s) for s in source or [])
        except ValueError as exc:
            raise ConfigError(f"{exc}; valid sources: {', '.join(s.value for s in Source)}") from exc
        try:
            flt = FilterSpec(tickers=tuple(t.upper() for t in ticker or []), since=parse_day(since, "--since"),
                             until=parse_day(until, "--until"), sources=sources,
                             forms=tuple(f.upper() for f in form or []))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        engine = open_engine(settings)
        known = engine.stored_tickers()
        unknown = [t for t in flt.tickers if t not in known]
        if unknown:
            raise NotFoundError(f"no stored documents for ticker(s) {', '.join(unknown)}; stored: "
                                f"{', '.join(known) or 'none'}. Ingest first: equimind ingest --tickers "
                                f"{','.join(unknown)} [--snapshot DIR]")
        result = engine.search(query, flt, mode=mode, top_k=k, auto_filter=auto_filter)
        if as_json:
            emit_json(result, settings)
        else:
            render.search_result(result)

    run_guarded(body)


@app.command()
def reindex(
    home: HomeOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Re-embed even if the store is already up to date.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Re-embed every stored chunk with the current embedder and embedding-text format (after an upgrade)."""

    def body() -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        settings = build_settings(home)
        services = open_store(settings)
        bar = Progress(TextColumn("{task.description:<11}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=render.err_console, disable=as_json)
        with bar:
            tasks = {"documents": bar.add_task("documents", total=None),
                     "embeddings": bar.add_task("embeddings", total=None)}

            def progress(stage: str, advance: int, total: int | None) -> None:
                bar.update(tasks[stage], advance=advance, total=total)

            report = services.reindex(progress, force=force)
        if as_json:
            emit_json(report, settings)
            return
        before = report.previous or {}
        if not report.reindexed:
            state = "already" if before else "empty, so it is now stamped"
            render.console.print(f"nothing to re-embed: the store is {state} {report.text_format} "
                                 f"({report.embedder})")
            return
        timings = ", ".join(f"{k} {v:.1f}s" for k, v in report.timings_s.items())
        render.console.print(f"re-embedded {report.chunks} chunks of {report.documents} documents: "
                             f"{before.get('text_format')} ({before.get('embedder') or 'unknown embedder'}) -> "
                             f"{report.text_format} ({report.embedder}) in {report.seconds:.1f}s; {timings}")

    run_guarded(body)
