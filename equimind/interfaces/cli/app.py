"""The Typer app and what every command module shares: the options, settings from options, the engine from settings,
JSON output and the error guard.

Command modules (``store``, ``research``, ``read``, ``system``, ``audit``, ``backtest``, ``eval``) import only this
module; ``main`` imports them all (which registers their commands) and runs the app. Rendering for humans lives in
``render`` / ``render_report``.

Every ``--json`` output is one JSON object with a ``trace`` key (request id, version, corpus signature of the home's
indexed documents, config hash: ``equimind.security.trace``), the same trace the API and MCP results carry for the
same data and settings; a command whose result is a list prints ``{"items": [...], "trace": {...}}``.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from equimind.core.config import Settings
from equimind.core.errors import ConfigError, EquiMindError

if TYPE_CHECKING:
    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import Services

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
AsOfOpt = Annotated[str | None, typer.Option("--as-of", help="Decide as of YYYY-MM-DD (nothing later is used).")]


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


def open_store(settings: Settings) -> Services:
    """The services (stores, models) for ``settings`` (imported here, as the engine is: ``--help`` stays light)."""
    from equimind.app.services import open_services

    return open_services(settings)


def open_engine(settings: Settings) -> EquiMindEngine:
    """The engine over freshly opened services."""
    from equimind.app.engine import EquiMindEngine

    return EquiMindEngine(open_store(settings))


def run_guarded(fn: Callable[[], T]) -> T:
    """Run a command body; EquiMind errors become a one-line message and exit code 2 (nothing is half-written)."""
    try:
        return fn()
    except EquiMindError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc


def emit_json(obj: Any, settings: Settings) -> None:
    """Print ``obj`` (a Pydantic model, a dict or a list) as one JSON object with the ``trace`` of ``settings``'s
    home; a list becomes ``{"items": [...]}``."""
    from equimind.interfaces.cli.home_trace import home_trace  # the docstore: numpy, kept out of `--help`

    payload = obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj
    if not isinstance(payload, dict):
        payload = {"items": payload}
    payload = {**payload, "trace": home_trace(settings).model_dump(mode="json")}
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


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
