"""Record a snapshot of one's own: the live clients' answers written in the layout ``--snapshot DIR`` replays.

``SnapshotRecorder.run(RecordRequest)`` asks, through the product's live clients only (``SecEdgarClient`` with the
declared identity, SEC's rate limit and the polite HTTP client; ``YahooFinance`` over yfinance; ``MacroClient`` for
FRED's keyless CSV), for: SEC's ticker map, each ticker's submissions and XBRL companyfacts, the primary documents of
its chosen filings filed since ``since``, its daily prices since ``prices_since`` and its latest news, plus the FRED
series of the snapshot's macro block; and writes them with ``recorder_files`` (atomic per file). A failure for one
ticker (unknown symbol, a filing that cannot be downloaded, no companyfacts) is reported and the rest still records;
a host that cannot be reached at all stops the run with an error naming the host and the fix.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from equimind.core.config import Settings
from equimind.core.documents import Origin
from equimind.core.errors import ConfigError, EquiMindError
from equimind.lexicon.lm_lists import Lexicon
from equimind.sources import recorder_files as files
from equimind.sources.base import FilingRef, normalise_ticker
from equimind.sources.github import record_github
from equimind.sources.http import UnreachableError, validate_json
from equimind.sources.jobs import record_board
from equimind.sources.macro import (
    WORLD_BANK_PANEL,
    MacroClient,
    parse_fred_csv,
    parse_lbma,
    parse_world_bank_panel,
)
from equimind.sources.recorder_readme import write_readme
from equimind.sources.recorder_records import (
    Event,
    Recorded,
    RecordFailure,
    RecordKind,
    RecordNote,
    RecordReport,
    RecordRequest,
)
from equimind.sources.sec_edgar import (
    DAY_S,
    SecEdgarClient,
    check_identity,
    older_pages,
    parse_filing_rows,
    parse_submissions,
    select_filings,
)
from equimind.sources.snapshot_macro import GOLD_FILE
from equimind.sources.yahoo import YahooFinance

if TYPE_CHECKING:
    from equimind.sources.macro import MacroClient
    from equimind.sources.sec_edgar import SecEdgarClient
    from equimind.sources.yahoo import YahooFinance

log = logging.getLogger(__name__)

@dataclass
class _Run:
    """The mutable tally of one run (local to ``SnapshotRecorder.run``)."""

    on_event: Callable[[Event], None]
    recorded: list[Recorded] = field(default_factory=list)
    failures: list[RecordFailure] = field(default_factory=list)
    notes: list[RecordNote] = field(default_factory=list)

    def ok(self, kind: RecordKind, ticker: str | None, path: Path, detail: str) -> None:
        self.recorded.append(e := Recorded(kind, ticker, path, detail))
        self.on_event(e)

    def fail(self, kind: RecordKind, ticker: str | None, what: str, error: Exception | str) -> None:
        self.failures.append(e := RecordFailure(kind, ticker, what, str(error)))
        self.on_event(e)

    def note(self, ticker: str | None, text: str) -> None:
        self.notes.append(e := RecordNote(ticker, text))
        self.on_event(e)


def unreachable(host_url: str, exc: Exception, fix: str) -> UnreachableError:
    host = urlsplit(host_url).netloc or host_url
    return UnreachableError(f"cannot reach {host} ({exc}); nothing more was recorded. Check the network or proxy, "
                       f"or {fix}")


class SnapshotRecorder:
    """Records tickers into a snapshot folder through the live clients (built from ``settings`` unless given)."""

    def __init__(self, settings: Settings, *, sec: SecEdgarClient | None = None, yahoo: YahooFinance | None = None,
                 macro: MacroClient | None = None) -> None:
        if settings.snapshot is not None:
            raise ConfigError("snapshot record downloads live data, but a snapshot is set (EQUIMIND_SNAPSHOT / "
                              "--snapshot); unset it to record")
        try:
            check_identity(settings.sec_identity)
        except ConfigError as e:
            raise ConfigError("snapshot record downloads from SEC EDGAR, which requires a declared identity: set "
                              'EQUIMIND_SEC_IDENTITY="Your Name you@example.com" and run it again') from e
        self.settings = settings
        self._sec, self._yahoo, self._macro = sec, yahoo, macro

    @property
    def sec(self) -> SecEdgarClient:
        if self._sec is None:
            self._sec = SecEdgarClient(self.settings)
        return self._sec

    @property
    def yahoo(self) -> YahooFinance:
        if self._yahoo is None:
            self._yahoo = YahooFinance(self.settings)
        return self._yahoo

    @property
    def macro(self) -> MacroClient:
        if self._macro is None:
            self._macro = MacroClient(self.settings)
        return self._macro

    def close(self) -> None:
        for client in (self._sec, self._macro):
            if client is not None:
                client.close()

    def run(self, request: RecordRequest, on_event: Callable[[Event], None] | None = None) -> RecordReport:
        """Record everything asked; raises only for a bad --out or an unreachable SEC (nothing to resolve with)."""
        out = files.prepare_out_dir(request.out)
        started = datetime.now(UTC)
        tally = _Run(on_event or (lambda _e: None))
        aborted: UnreachableError | None = None
        try:
            self._ticker_map(out, tally)
            for ticker in dict.fromkeys(normalise_ticker(t) for t in request.tickers):
                self._record_ticker(ticker, request, out, tally)
            self._record_macro(request, out, tally)
            self._lexicon(out, tally)
        except UnreachableError as e:  # no point asking the same host again for the next ticker
            tally.fail(RecordKind.TICKER_MAP, None, "SEC EDGAR", e)
            aborted = e
        report = RecordReport(request, started, datetime.now(UTC), tuple(tally.recorded), tuple(tally.failures),
                              tuple(tally.notes))

        write_readme(out, report, self.settings)
        if aborted is not None:
            raise aborted
        return report

    # ------------------------------------------------------------------------------------------------ SEC
    def _sec_bytes(self, url: str) -> bytes:
        try:
            return self.sec.http.get_bytes(url, validate=validate_json, max_age_s=DAY_S)
        except UnreachableError as e:
            raise unreachable(url, e, "point EQUIMIND_SEC_BASE_URL / EQUIMIND_SEC_DATA_URL at a reachable "
                              "SEC mirror") from e

    def _ticker_map(self, out: Path, tally: _Run) -> None:
        url = f"{self.sec.base_url}/files/company_tickers.json"
        path = files.write_atomic(out / "sec" / "company_tickers.json", self._sec_bytes(url))
        tally.ok(RecordKind.TICKER_MAP, None, path, f"{len(self.sec.ticker_map())} tickers")

    def _record_ticker(self, ticker: str, request: RecordRequest, out: Path, tally: _Run) -> None:
        try:
            info = self.sec.resolve(ticker)
        except EquiMindError as e:
            tally.fail(RecordKind.TICKER_MAP, ticker, f"ticker {ticker}", e)
            return
        try:
            refs = self._submissions(info.cik, ticker, request.since, out, tally)
        except UnreachableError:
            raise
        except EquiMindError as e:
            tally.fail(RecordKind.SUBMISSIONS, ticker, f"{ticker} submissions (CIK {info.cik})", e)
            refs = []
        chosen = sorted((r for r in select_filings(refs, request.forms, None) if r.filed >= request.since),
                        key=lambda r: (r.filed, r.accession))
        rows = [row for ref in chosen if (row := self._filing(ref, out, tally)) is not None]
        files.merge_manifest(out / "sec" / "filings" / "manifest.csv", rows)
        self._facts(ticker, info.cik, out, tally)
        self._prices(ticker, request, out, tally)
        self._news(ticker, request, out, tally)
        self._web(ticker, out, tally)

    def _web(self, ticker: str, out: Path, tally: _Run) -> None:
        """The ticker's job board and GitHub activity, when configured (``web/jobs``, ``web/github``)."""
        s = self.settings
        if ticker in s.job_boards:
            try:
                path = record_board(s, ticker, out)
                tally.ok(RecordKind.JOBS, ticker, path, f"job board {s.job_boards[ticker]}")
            except EquiMindError as e:
                tally.fail(RecordKind.JOBS, ticker, f"{ticker} job board {s.job_boards[ticker]}", e)
        if ticker in s.github_orgs:
            try:
                path = record_github(s, ticker, out)
                tally.ok(RecordKind.GITHUB, ticker, path, f"GitHub {', '.join(s.github_orgs[ticker])}")
            except EquiMindError as e:
                tally.fail(RecordKind.GITHUB, ticker, f"{ticker} GitHub {', '.join(s.github_orgs[ticker])}", e)
        if ticker not in s.job_boards and ticker not in s.github_orgs:
            tally.note(ticker, f"{ticker} web intelligence: no job board or GitHub organisation configured "
                       "(EQUIMIND_JOB_BOARDS, EQUIMIND_GITHUB_ORGS); not recorded")

    def _submissions(self, cik: str, ticker: str, since: date, out: Path, tally: _Run) -> list[FilingRef]:

        name = f"CIK{cik}.json"
        body = self._sec_bytes(f"{self.sec.data_url}/submissions/{name}")
        path = files.write_atomic(out / "sec" / "submissions" / name, body)
        obj = json.loads(body)
        refs = parse_submissions(obj, ticker=ticker, base_url=self.sec.base_url, origin=Origin.LIVE)
        tally.ok(RecordKind.SUBMISSIONS, ticker, path, f"{len(refs)} recent filings listed")
        oldest = min((r.filed for r in refs), default=since)
        for page, filing_to in older_pages(obj) if since < oldest else []:
            if filing_to is not None and filing_to < since:
                continue
            page_body = self._sec_bytes(f"{self.sec.data_url}/submissions/{page}")
            page_path = files.write_atomic(out / "sec" / "submissions" / page, page_body)
            older = parse_filing_rows(json.loads(page_body), cik=cik, ticker=ticker, company=obj.get("name"),
                                      base_url=self.sec.base_url, origin=Origin.LIVE)
            refs += older
            tally.ok(RecordKind.SUBMISSIONS, ticker, page_path, f"older page, {len(older)} filings")
        return refs

    def _filing(self, ref: FilingRef, out: Path, tally: _Run) -> dict[str, str] | None:
        what = f"{ref.ticker} {ref.form} filed {ref.filed} ({ref.accession})"
        if ref.url is None:
            tally.fail(RecordKind.FILING, ref.ticker, what, "no primary document URL in the submissions")
            return None
        try:
            body = self.sec.http.get_bytes(ref.url)  # archives are immutable: cached forever
        except UnreachableError as e:
            raise unreachable(ref.url, e, "point EQUIMIND_SEC_BASE_URL at a reachable SEC mirror") from e
        except EquiMindError as e:
            tally.fail(RecordKind.FILING, ref.ticker, what, e)
            return None
        rel = f"{ref.ticker}/{files.filing_file_name(ref)}"
        path = files.write_atomic(out / "sec" / "filings" / rel, body)
        tally.ok(RecordKind.FILING, ref.ticker, path, f"{ref.form} filed {ref.filed}, {len(body):,} bytes")
        return files.manifest_row(ref, rel)

    def _facts(self, ticker: str, cik: str, out: Path, tally: _Run) -> None:
        name = f"CIK{cik}.json"
        try:
            body = self._sec_bytes(f"{self.sec.data_url}/api/xbrl/companyfacts/{name}")
        except UnreachableError:
            raise
        except EquiMindError as e:
            tally.fail(RecordKind.COMPANYFACTS, ticker, f"{ticker} XBRL companyfacts (CIK {cik})", e)
            return
        path = files.write_atomic(out / "sec" / "companyfacts" / name, body)
        tally.ok(RecordKind.COMPANYFACTS, ticker, path, f"{len(body):,} bytes")

    # ------------------------------------------------------------------------------------------------ Yahoo, FRED
    def _prices(self, ticker: str, request: RecordRequest, out: Path, tally: _Run) -> None:
        today = datetime.now(UTC).date()
        try:
            frame = self.yahoo.history_frame(ticker, request.prices_since, today)
        except EquiMindError as e:
            tally.fail(RecordKind.PRICES, ticker, f"{ticker} daily prices", e)
            return
        path = files.write_atomic(out / "prices" / f"{ticker}.csv", files.price_csv_bytes(frame))
        first, last = _day(frame.index[0]), _day(frame.index[-1])
        tally.ok(RecordKind.PRICES, ticker, path, f"{len(frame)} daily bars {first} → {last}")

    def _news(self, ticker: str, request: RecordRequest, out: Path, tally: _Run) -> None:
        if request.news_limit == 0:
            return
        try:
            items = self.yahoo.news(ticker, limit=request.news_limit)
        except EquiMindError as e:
            tally.fail(RecordKind.NEWS, ticker, f"{ticker} news", e)
            return
        if not items:
            tally.note(ticker, "news: Yahoo Finance served no headlines; no news file written")
            return
        path, total = files.merge_news(out / "news" / "yahoo" / f"{ticker}_news.csv", items)
        tally.ok(RecordKind.NEWS, ticker, path, f"{len(items)} headlines fetched, {total} in the file")

    def _record_macro(self, request: RecordRequest, out: Path, tally: _Run) -> None:
        for series_id in request.macro:
            try:
                body = self.macro.fred_csv(series_id)

                n = len(parse_fred_csv(body))
            except UnreachableError as e:
                tally.fail(RecordKind.MACRO, None, f"FRED {series_id}",
                           unreachable(self.macro.graph_url, e, "set EQUIMIND_FRED_GRAPH_URL to a reachable mirror"))
                return
            except (EquiMindError, ValueError) as e:
                tally.fail(RecordKind.MACRO, None, f"FRED {series_id}", e)
                continue
            path = files.write_atomic(out / "macro" / f"{series_id}.csv", body)
            tally.ok(RecordKind.MACRO, None, path, f"{n} observations")
        self._record_gold_and_world_bank(out, tally)

    def _record_gold_and_world_bank(self, out: Path, tally: _Run) -> None:
        """LBMA's gold PM file and the World Bank panel (every country, so any company's markets replay)."""
        try:
            body = self.macro.gold_json()
            n = len(parse_lbma(json.loads(body)))
            path = files.write_atomic(out / "macro" / GOLD_FILE, body)
            tally.ok(RecordKind.MACRO, None, path, f"{n} LBMA gold prices")
        except (EquiMindError, ValueError) as e:
            tally.fail(RecordKind.MACRO, None, "LBMA gold PM", e)
        for ind in WORLD_BANK_PANEL:
            try:
                obj = self.macro.world_bank_panel_json(ind.code, ("all",))
                n = len(parse_world_bank_panel(obj))
                path = files.write_atomic(out / "macro" / "worldbank" / f"{ind.code}.json",
                                          json.dumps(obj).encode())
                tally.ok(RecordKind.MACRO, None, path, f"World Bank {ind.code}, {n} economies")
            except EquiMindError as e:
                tally.fail(RecordKind.MACRO, None, f"World Bank {ind.code}", e)

    def _lexicon(self, out: Path, tally: _Run) -> None:
        """The Loughran-McDonald lists this EquiMind reads in live mode (``shared/corpus/sentiment``): not live data,
        but the replay reads them from the snapshot folder (sentiment figures, debate tone)."""
        source = self.settings.shared / "corpus" / "sentiment"
        try:
            Lexicon.load(source)  # a missing or malformed list fails here, before anything is copied
        except EquiMindError as e:
            tally.fail(RecordKind.LEXICON, None, "Loughran-McDonald word lists", e)
            return
        for path in sorted(source.glob("LM_*.txt")):
            copied = files.write_atomic(out / "sentiment" / path.name, path.read_bytes())
            tally.ok(RecordKind.LEXICON, None, copied, f"copied from {source}")


def _day(ts: Any) -> date:
    return date.fromisoformat(str(ts)[:10])
