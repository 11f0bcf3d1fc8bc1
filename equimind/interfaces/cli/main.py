"""The ``equimind`` console script: import every command module (which registers its commands on the app) and run.

The import order below is the order of the commands in ``equimind --help``.
"""

from __future__ import annotations

# isort: off
from equimind.interfaces.cli.app import app
from equimind.interfaces.cli import (  # noqa: F401
    backtest, store, research, changes, read, corpus, report, system, audit, eval, models, snapshot)
# isort: on

__all__ = ["app", "main"]


def main() -> None:
    app()


if __name__ == "__main__":
    main()
