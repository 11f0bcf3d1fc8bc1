"""The records of ``equimind snapshot record``: the request, what was written, what failed, the report (their own
module, so the recorder and its README writer do not import each other)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path

from equimind.core.errors import ConfigError

# The FRED series of the recorded corpus's macro block (../shared/corpus/macro), which the snapshot macro reader
# serves; ``--macro`` chooses others.
SNAPSHOT_MACRO_SERIES: tuple[str, ...] = ("CPIAUCSL", "FEDFUNDS", "UNRATE", "DGS10", "VIXCLS", "GDPC1",
                                          "A191RL1Q225SBEA")
NEWS_LIMIT = 100


class RecordKind(StrEnum):
    TICKER_MAP = "ticker_map"
    SUBMISSIONS = "submissions"
    COMPANYFACTS = "companyfacts"
    FILING = "filing"
    PRICES = "prices"
    NEWS = "news"
    MACRO = "macro"
    LEXICON = "lexicon"
    JOBS = "jobs"
    GITHUB = "github"


@dataclass(frozen=True)
class RecordRequest:
    tickers: tuple[str, ...]
    out: Path
    since: date
    prices_since: date
    forms: tuple[str, ...] = ("10-K", "10-Q")
    macro: tuple[str, ...] = SNAPSHOT_MACRO_SERIES
    news_limit: int = NEWS_LIMIT

    def __post_init__(self) -> None:
        today = datetime.now(UTC).date()
        if not self.tickers:
            raise ConfigError("no tickers to record; pass --tickers NVDA,AMD")
        for name, day in (("--since", self.since), ("--prices-since", self.prices_since)):
            if day > today:
                raise ConfigError(f"{name} {day} is in the future (today is {today} UTC); give a past date")
        if self.news_limit < 0:
            raise ConfigError(f"news limit must be >= 0 (got {self.news_limit})")


@dataclass(frozen=True)
class Recorded:
    kind: RecordKind
    ticker: str | None
    path: Path
    detail: str


@dataclass(frozen=True)
class RecordFailure:
    kind: RecordKind
    ticker: str | None
    what: str
    error: str


@dataclass(frozen=True)
class RecordNote:
    """Something worth saying that wrote no file and is no failure (e.g. a ticker with no news)."""

    ticker: str | None
    text: str


Event = Recorded | RecordFailure | RecordNote


@dataclass(frozen=True)
class RecordReport:
    request: RecordRequest
    started_at: datetime
    finished_at: datetime
    recorded: tuple[Recorded, ...]
    failures: tuple[RecordFailure, ...]
    notes: tuple[RecordNote, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures
