"""Running EquiMind as a service: ``preflight`` (are the live sources usable), ``serve`` (REST API + dashboard) and
``mcp`` (the MCP server on stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from equimind.interfaces.cli.app import HomeOpt, SnapshotOpt, app, build_settings, run_guarded


@app.command()
def preflight(home: HomeOpt = None) -> None:
    """Exit 0 when the live sources can be used (SEC identity set and SEC reachable); else print why, exit 1."""

    def body() -> None:
        from equimind.sources.sec_edgar import SecEdgarClient

        settings = build_settings(home)
        client = SecEdgarClient(settings)  # raises ConfigError without EQUIMIND_SEC_IDENTITY
        try:
            client.resolve("AAPL")
        finally:
            client.close()
        typer.echo("live sources reachable")

    try:
        run_guarded(body)
    except typer.Exit as exc:
        raise typer.Exit(1) from exc


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    workers: Annotated[int, typer.Option(
        "--workers", help="API worker processes over the same stores; more than 1 needs a Chroma server "
                          "(EQUIMIND_CHROMA_URL; scripts/chroma_server.sh start).")] = 1,
    snapshot: SnapshotOpt = None,
    home: HomeOpt = None,
) -> None:
    """Serve the REST API, the SSE stream and the web dashboard."""

    def body() -> None:
        from equimind.interfaces.api.app import run_server  # refuses --workers > 1 without a Chroma server

        run_server(build_settings(home, snapshot), host=host, port=port, workers=workers)

    run_guarded(body)


@app.command()
def mcp(snapshot: SnapshotOpt = None, home: HomeOpt = None) -> None:
    """Run the MCP server on stdio (every tool call passes the gate and the audit log)."""

    def body() -> None:
        from equimind.interfaces.mcp_server import run_stdio

        run_stdio(build_settings(home, snapshot))

    run_guarded(body)
