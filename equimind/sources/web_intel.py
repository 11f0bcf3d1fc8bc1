"""The contract of the web-intelligence sources (job postings, GitHub activity): what the market report asks of them.

A web-intelligence source turns what a company publishes about itself outside its filings (open roles on its public
job board, commits to its public GitHub organisations) into cited figures for one ticker at one as-of date. Each is
configured per ticker (``Settings.job_boards``, ``Settings.github_orgs``); nothing is guessed. ``report`` never raises
for a missing configuration, an unreachable host or a rate limit: each becomes a ``Degradation`` whose reason names the
fix, so a research run goes on and says what it lacks.

Every figure's provenance carries the URL it was read from and the time it was retrieved (``retrieved_at``, UTC ISO),
so a claim citing it can be checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol, runtime_checkable

from equimind.core.degraded import Degradation
from equimind.core.research import Figure


@dataclass(frozen=True)
class WebIntelResult:
    figures: tuple[Figure, ...]
    degraded: tuple[Degradation, ...]


@runtime_checkable
class WebIntelSource(Protocol):
    """``JobBoards`` / ``SnapshotJobBoards`` and ``GitHubActivity`` / ``SnapshotGitHub`` implement this."""

    name: str

    def report(self, ticker: str, as_of: date) -> WebIntelResult:
        """Figures known on ``as_of`` (nothing published or retrieved later counts); never raises."""
        ...

    def close(self) -> None:
        ...


def not_configured(capability: str, ticker: str, setting: str, example: str) -> WebIntelResult:
    """The result for a ticker with no configuration: one degraded line naming the setting to set."""
    return WebIntelResult((), (Degradation(capability=capability, reason=(
        f"unavailable (no {'board' if capability == 'web.jobs' else 'organisation'} configured for {ticker} — set "
        f"{setting}, e.g. {example})")),))
