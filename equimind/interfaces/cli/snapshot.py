"""``equimind snapshot record``: record live SEC / Yahoo / FRED data into a folder that ``--snapshot DIR`` replays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from equimind.core.errors import ConfigError
from equimind.interfaces.cli.app import (
    HomeOpt,
    JsonOpt,
    app,
    build_settings,
    emit_json,
    parse_day,
    run_guarded,
    split_csv,
)
from equimind.sources.recorder_records import SNAPSHOT_MACRO_SERIES, RecordFailure, RecordNote, RecordRequest

if TYPE_CHECKING:
    from equimind.sources.recorder_records import Event, RecordReport

snapshot_app = typer.Typer(no_args_is_help=True, help="Record snapshots of live data for offline replay.")
app.add_typer(snapshot_app, name="snapshot")

DEFAULT_SINCE_DAYS = 365


def _printer(event: Event) -> None:
    who = f"{event.ticker} " if event.ticker else ""
    if isinstance(event, RecordNote):
        typer.echo(f"  {who}{event.text}")
    elif isinstance(event, RecordFailure):
        typer.secho(f"  FAILED {event.what}: {event.error}", fg=typer.colors.RED, err=True)
    else:
        typer.echo(f"  {who}{event.kind.value}: {event.path} ({event.detail})")


def _summary(report: RecordReport) -> dict[str, object]:
    return {"out": str(report.request.out), "ok": report.ok,
            "started_at": report.started_at.isoformat(), "finished_at": report.finished_at.isoformat(),
            "recorded": [{"kind": r.kind.value, "ticker": r.ticker, "path": str(r.path), "detail": r.detail}
                         for r in report.recorded],
            "failures": [{"kind": f.kind.value, "ticker": f.ticker, "what": f.what, "error": f.error}
                         for f in report.failures],
            "notes": [{"ticker": n.ticker, "text": n.text} for n in report.notes]}


@snapshot_app.command("record")
def record(
    tickers: Annotated[str, typer.Option("--tickers", help="Comma-separated tickers, e.g. NVDA,AMD.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write (created; updated in place on a re-run).")],
    since: Annotated[str | None, typer.Option("--since", help="Filings filed on or after YYYY-MM-DD "
                                              f"(default: {DEFAULT_SINCE_DAYS} days ago).")] = None,
    prices_since: Annotated[str | None, typer.Option("--prices-since", help="Daily prices from YYYY-MM-DD "
                                                     "(default: two years before --since).")] = None,
    forms: Annotated[str, typer.Option("--forms", help="Filing forms to record.")] = "10-K,10-Q",
    macro: Annotated[str | None, typer.Option("--macro", help="FRED series ids (default: the snapshot's macro "
                                              "block: CPIAUCSL,FEDFUNDS,UNRATE,DGS10,VIXCLS,GDPC1,"
                                              "A191RL1Q225SBEA).")] = None,
    news_limit: Annotated[int, typer.Option("--news-limit", help="Latest headlines per ticker (0: none).")] = 100,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record SEC filings, submissions, XBRL facts, Yahoo prices and news, and FRED series for offline replay.

    Needs EQUIMIND_SEC_IDENTITY and network; exits 1 if anything failed (the rest is still recorded)."""

    def body() -> int:
        from equimind.sources.recorder import SnapshotRecorder  # httpx, the SEC and Yahoo clients
        from equimind.sources.yahoo import DEFAULT_LOOKBACK_DAYS

        start = parse_day(since, "--since") or datetime.now(UTC).date() - timedelta(days=DEFAULT_SINCE_DAYS)
        request = RecordRequest(
            tickers=split_csv(tickers), out=out, since=start,
            prices_since=parse_day(prices_since, "--prices-since") or start - timedelta(days=DEFAULT_LOOKBACK_DAYS),
            forms=split_csv(forms) or _no_forms(), macro=split_csv(macro) if macro is not None
            else SNAPSHOT_MACRO_SERIES, news_limit=news_limit)
        settings = build_settings(home)
        recorder = SnapshotRecorder(settings)
        try:
            if not as_json:
                typer.echo(f"recording {', '.join(request.tickers)} into {out} (filings since {request.since}, "
                           f"prices since {request.prices_since})")
            report = recorder.run(request, on_event=None if as_json else _printer)
        finally:
            recorder.close()
        if as_json:
            emit_json(_summary(report), settings)
        else:
            state = "ok" if report.ok else f"{len(report.failures)} failure(s)"
            typer.echo(f"recorded {len(report.recorded)} files into {out}, {state}; README: {out / 'README.md'}")
        return 0 if report.ok else 1

    code = run_guarded(body)
    if code:
        raise typer.Exit(code)


def _no_forms() -> tuple[str, ...]:
    raise ConfigError("--forms is empty; give e.g. 10-K,10-Q")
