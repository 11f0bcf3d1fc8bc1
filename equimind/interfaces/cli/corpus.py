"""What is stored, from the terminal: ``documents`` (the list), ``status`` (counts, models, backends, degradations)
and ``verify-citations`` (a batch of quotes against their claimed spans) — the CLI forms of ``GET /api/v1/documents``,
``GET /api/v1/health`` and ``POST /api/v1/citations/verify-batch`` (MCP: list_documents, corpus_status,
verify_citations), with the same limits and the same JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from equimind.core.errors import ConfigError
from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import (
    HomeOpt,
    JsonOpt,
    app,
    build_settings,
    emit_json,
    open_engine,
    parse_day,
    run_guarded,
)


@app.command()
def documents(
    ticker: Annotated[str | None, typer.Option("--ticker", help="Only this ticker, e.g. NVDA.")] = None,
    form: Annotated[str | None, typer.Option("--form", help="Only this form, e.g. 10-K.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Filed on/after YYYY-MM-DD.")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Filed on/before YYYY-MM-DD.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many (1-1000).")] = 100,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The indexed documents (metadata only, newest filing first), optionally for a ticker, form and date range."""

    def body() -> None:
        from equimind.core.documents import FilterSpec  # pydantic models: kept out of `--help`
        from equimind.store.open import open_docstore

        if not 1 <= limit <= 1000:
            raise ConfigError(f"--limit must be between 1 and 1000, got {limit}")
        first, last = parse_day(since, "--since"), parse_day(until, "--until")
        if first and last and first > last:
            raise ConfigError(f"--until ({last}) is before --since ({first}); swap them or drop one")
        settings = build_settings(home)
        flt = FilterSpec(tickers=(ticker.upper(),) if ticker else (), forms=(form.upper(),) if form else (),
                         since=first, until=last)
        docs = open_docstore(settings).list_documents(flt, status="indexed")
        if as_json:
            emit_json({"documents": [d.model_dump(mode="json") for d in docs[:limit]],
                       "count": min(limit, len(docs)), "total": len(docs)}, settings)
            return
        table = Table("doc_id", "ticker", "form", "filed", "period end", "title", title=(
            f"{min(limit, len(docs))} of {len(docs)} indexed document(s)"))
        for d in docs[:limit]:
            table.add_row(d.doc_id[:12], d.ticker or "-", d.form, str(d.filed_at or "-"), str(d.period_end or "-"),
                          d.title[:60])
        render.console.print(table)

    run_guarded(body)


@app.command()
def status(home: HomeOpt = None, as_json: JsonOpt = False) -> None:
    """What the store holds and how it is served: counts, embedder and stored-vector stamp, reranker, backends
    (docstore, vectors, the change feed on a shared store), mode, and every degradation with its fix."""

    def body() -> None:
        settings = build_settings(home)
        health = open_engine(settings).health()
        if as_json:
            emit_json(health, settings)
            return
        render.console.print(f"[bold]{health.status}[/bold] · {health.mode} · provider {health.provider}")
        render.console.print("store: " + ", ".join(f"{k} {v}" for k, v in health.store.items()))
        render.console.print("backend: " + ", ".join(f"{k} {v}" for k, v in health.backend.items()))
        render.console.print(f"embedder: {health.embedder.get('name')} (available: {health.embedder.get('available')})")
        render.console.print(f"reranker: {health.reranker.get('name')} (available: {health.reranker.get('available')})")
        for line in health.degraded:
            render.console.print(f"[yellow]degraded[/yellow] {line}")

    run_guarded(body)


@app.command("verify-citations")
def verify_citations(
    path: Annotated[str, typer.Argument(help="A JSON file (or - for stdin): a list of {doc_id, start, end, quote}, "
                                             "or {\"citations\": [...]}; at most 50.")],
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check up to 50 quotes at once, each against the span [start, end) it claims (inside the span first, then
    anywhere in the document; no LLM). Exit 1 when any is not verified."""

    def body() -> None:
        from pydantic import ValidationError

        from equimind.core.citations import verify_spans
        from equimind.interfaces.api.models import CitationBatchRequest, SpanCheckOut
        from equimind.store.open import open_docstore

        try:
            raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
            data = json.loads(raw)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read citations from {path}: {exc}; give a JSON file of "
                              "[{\"doc_id\", \"start\", \"end\", \"quote\"}, ...]") from exc
        try:
            batch = CitationBatchRequest.model_validate(data if isinstance(data, dict) else {"citations": data})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{path}: {where}: {first['msg']} ({exc.error_count()} problem(s)); each citation is "
                              "{\"doc_id\": <64 hex>, \"start\": int, \"end\": int > start, \"quote\": text}, at "
                              "most 50") from exc
        settings = build_settings(home)
        spans = verify_spans(open_docstore(settings), [(c.doc_id, c.start, c.end, c.quote) for c in batch.citations])
        results = [SpanCheckOut.of(s) for s in spans]
        verified = sum(1 for r in results if r.check is not None and r.check.verified)
        if as_json:
            emit_json({"results": [r.model_dump(mode="json") for r in results], "verified": verified,
                       "total": len(results)}, settings)
        else:
            for i, r in enumerate(results, 1):
                if r.check is None:
                    render.console.print(f"{i}. [red]error[/red] {r.doc_id[:12]}: {r.error}")
                    continue
                state = "[green]verified[/green]" if r.check.verified else "[red]NOT verified[/red]"
                where = "inside its claimed span" if r.in_claimed_span else "outside its claimed span"
                render.console.print(f"{i}. {state} ({r.check.match}) {r.doc_id[:12]} chars "
                                     f"{r.check.start}-{r.check.end}, {where}")
            render.console.print(f"{verified} of {len(results)} verified")
        if verified < len(results):
            raise typer.Exit(1)

    run_guarded(body)
