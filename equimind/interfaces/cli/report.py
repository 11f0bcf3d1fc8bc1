"""``equimind report RUN_ID``: the printable report of a stored research run, as self-contained HTML and/or PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from equimind.core.errors import ConfigError
from equimind.interfaces.cli import render
from equimind.interfaces.cli.app import HomeOpt, SnapshotOpt, app, build_settings, open_engine, run_guarded


@app.command()
def report(
    run_id: Annotated[int, typer.Argument(help="A research run's id (`equimind memory TICKER` lists them).")],
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the report as one HTML file.")] = None,
    pdf_out: Annotated[Path | None, typer.Option("--pdf", help="Print it to PDF (headless Chromium).")] = None,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
) -> None:
    """The printable report of a stored research run: rating, conviction, thesis, bull and bear claims with their
    quotes, figures with provenance, the price chart and the degraded lines. Writes --html and/or --pdf; with
    neither, the HTML goes to standard output."""

    def body() -> None:
        from equimind.interfaces.report_html import html_to_pdf, report_page

        page = report_page(open_engine(build_settings(home, snapshot)), run_id)
        if html_out is None and pdf_out is None:
            typer.echo(page)
            return
        if html_out is not None:
            if html_out.is_dir():
                raise ConfigError(f"--html {html_out} is a directory; give a file name, e.g. report-{run_id}.html")
            html_out.parent.mkdir(parents=True, exist_ok=True)
            html_out.write_text(page, encoding="utf-8")
            render.err_console.print(f"report written to {html_out}")
        if pdf_out is not None:
            render.err_console.print(f"PDF written to {html_to_pdf(page, pdf_out)}")

    run_guarded(body)
