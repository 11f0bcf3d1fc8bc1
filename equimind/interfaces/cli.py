"""Typer CLI: a thin adapter over the services and the engine. Rendering lives in ``render.py``."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from equimind.config import Settings
from equimind.errors import ConfigError, EquiMindError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="EquiMind: evidence-first equity research over SEC filings and market data.")
audit_app = typer.Typer(no_args_is_help=True, help="Tamper-evident audit log of tool calls.")
eval_app = typer.Typer(no_args_is_help=True, help="Evaluation harness (retrieval and answers).")
app.add_typer(audit_app, name="audit")
app.add_typer(eval_app, name="eval")

T = TypeVar("T")

HomeOpt = Annotated[Path | None, typer.Option(
    "--home", help="State directory (default: EQUIMIND_HOME or .equimind_cache).")]
SnapshotOpt = Annotated[Path | None, typer.Option(
    "--snapshot", help="Recorded corpus dir (e.g. ../shared/corpus): no network.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def build_settings(home: Path | None = None, snapshot: Path | None = None, **overrides: Any) -> Settings:
    """The one place settings are built (environment + command-line overrides)."""
    values: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    if home is not None:
        values["home"] = home
    if snapshot is not None:
        if not snapshot.is_dir():
            raise ConfigError(f"--snapshot {snapshot} is not a directory; point it at the recorded corpus "
                              "(e.g. ../shared/corpus)")
        values["snapshot"] = snapshot.resolve()
    try:
        return Settings(**values)
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        raise ConfigError(f"invalid setting: {exc}") from exc


def run_guarded(fn: Callable[[], T]) -> T:
    """Run a command body; EquiMind errors become a one-line message and exit code 2 (nothing is half-written)."""
    try:
        return fn()
    except EquiMindError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc


def emit_json(obj: Any) -> None:
    if hasattr(obj, "model_dump_json"):
        sys.stdout.write(obj.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def parse_day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ConfigError(f"{name} {value!r} is not a date; use YYYY-MM-DD") from exc


def split_csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip().upper() for v in (value or "").split(",") if v.strip())


@app.callback()
def _main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log to stderr.")] = False) -> None:
    level = logging.INFO if verbose else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)  # libraries that force their own logger to DEBUG (bm25s) stay quiet
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)


def _register() -> None:
    from equimind.interfaces import (  # noqa: F401  (register commands)
        cli_backtest,
        cli_commands,
        cli_eval,
        cli_research,
        cli_snapshot,
    )


def main() -> None:
    _register()
    app()
