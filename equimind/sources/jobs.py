"""Open roles on a company's public job board (Greenhouse or Lever), recorded over time, as cited hiring figures.

Each ticker names its board in ``Settings.job_boards`` (``"greenhouse:BOARD"`` or ``"lever:COMPANY"``); nothing is
guessed. Two public, keyless APIs are read through ``PoliteHttpClient`` (rate limit, retries on 429 honouring
``Retry-After`` and on 5xx, named errors), identifying as ``equimind/0.1 (job boards)``:

- Greenhouse Job Board API, ``GET {greenhouse_base_url}/v1/boards/{board}/jobs?content=true``: the whole board in one
  response ``{"jobs": [...], "meta": {"total": n}}``. A role's date is ``first_published``; old boards lack it, and
  then ``updated_at`` (the last edit) stands in and the provenance says so.
- Lever Postings API, ``GET {lever_base_url}/v0/postings/{company}?mode=json&skip=N&limit=M``: a JSON list, read page
  by page until a page is shorter than the limit, or repeats ids already read (a server that ignores ``skip``).
  A role's date is ``createdAt`` (ms since the epoch); its function is ``categories.department`` (else ``team``).

Parsing is total: a posting without a title or with an unreadable date is skipped and counted
(``BoardRetrieval.skipped``), never an exception that loses the board; only a response of the wrong shape raises
``ParseError`` naming the board.

The recording layout, the same for a snapshot and for the live history, one file per retrieval:
``<root>/web/jobs/<TICKER>/<kind>-<board>-<YYYYMMDDTHHMMSSZ>.json`` holding ``{"ticker", "kind", "board", "url",
"retrieved_at" (ISO UTC), "pages": [the API's JSON responses, as served]}``, written atomically (temp file and
``os.replace``), so a failed fetch leaves no file. Live runs store each retrieval under ``settings.home`` (the
history that changes are computed from); ``equimind snapshot record`` stores them under a snapshot.

The as-of rule. A job board publishes only the roles open at the moment it is read: nothing says what was open on an
earlier day. So a retrieval can stand for the as-of date only if it was retrieved on or before that date: the
figures use the latest retrieval with ``retrieved_at.date() <= as_of``. Live, today's retrieval also serves an as-of
date of yesterday (UTC; one day of allowance for time zones); an earlier as-of date reads only the stored history,
and with none the figures are ``web.jobs: unavailable (...)``. A posting first published after the as-of date never
counts. A relative change compares against the stored retrieval nearest to ``as_of - d`` within ±7 days. A figure's
``as_of`` is the date of the retrieval it was computed from (the as-of date itself when today's read serves
yesterday); its provenance gives the exact ``retrieved_at``.

Figures (ids fixed): ``jobs_open_roles``, ``jobs_function_<slug>`` and ``jobs_location_<slug>`` (top 5 each),
``jobs_new_30d``, ``jobs_new_90d``, ``jobs_change_30d``, ``jobs_change_90d`` (ratio, with a Poisson-noise ``z``),
``jobs_product_roles`` (roles naming a configured product or segment term, ``Settings.product_terms``).

The records and the figure code are ``sources.jobs_figures`` (pure functions), beside the sources as the macro
figures are: the import rule (scripts/layers.py) puts ``sources`` below ``analytics``.
"""

from __future__ import annotations

import html
import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import httpx

from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.errors import ConfigError, NotFoundError, ParseError, RateLimitedError, SourceError
from equimind.sources.http import HttpPolicy, PoliteHttpClient, RateLimiter, atomic_write, redact
from equimind.sources.jobs_figures import (
    BoardRetrieval,
    JobPosting,
    Recordings,
    board_result,
    choose_retrieval,
    parse_board_spec,
    unavailable_before,
)
from equimind.sources.web_intel import WebIntelResult, not_configured

log = logging.getLogger(__name__)

USER_AGENT = "equimind/0.1 (job boards)"
LEVER_PAGE_LIMIT = 100
MAX_LEVER_PAGES = 500  # 50,000 postings: far beyond any real board; a guard against a server that never ends
UNSPECIFIED = "Unspecified"
Kind = Literal["greenhouse", "lever"]
PublishedField = Literal["first_published", "updated_at", "createdAt"]
KINDS: tuple[str, ...] = ("greenhouse", "lever")
_STAMP = "%Y%m%dT%H%M%SZ"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


# ---------------------------------------------------------------------------------------------------- parsing
class _TextExtractor(HTMLParser):
    """Collects an HTML fragment's text (entities converted, script/style dropped, a space at every tag)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(fragment: str, *, escaped: bool = False) -> str:
    """Plain text of an HTML fragment, whitespace collapsed. ``escaped``: the HTML itself is entity-escaped (as
    Greenhouse serves ``content``: ``&lt;p&gt;...``), so it is unescaped once before the tags are stripped."""
    if escaped:
        fragment = html.unescape(fragment)
    parser = _TextExtractor()
    try:
        parser.feed(fragment)
        parser.close()
    except Exception:  # HTMLParser is lenient; never lose a posting to its markup
        return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", fragment)).split())
    return " ".join("".join(parser.parts).split())


def _iso_utc(value: Any) -> datetime | None:
    """An ISO-8601 timestamp as aware UTC; None when absent; ValueError when present but unreadable."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"not a timestamp: {value!r}")
    d = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return (d if d.tzinfo is not None else d.replace(tzinfo=UTC)).astimezone(UTC)


def _ms_utc(value: Any) -> datetime | None:
    """Milliseconds since the epoch as aware UTC; None when absent; ValueError when unreadable."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a millisecond timestamp: {value!r}")
    return datetime.fromtimestamp(value / 1000.0, tz=UTC)


def _name(value: Any) -> str:
    return value.strip() if isinstance(value, str) and value.strip() else ""


def _greenhouse_posting(job: Any) -> JobPosting:
    """One Greenhouse ``jobs[]`` entry; ValueError/KeyError/TypeError when it is malformed."""
    if not isinstance(job, dict) or job.get("id") is None:
        raise ValueError("not a job object with an id")
    title = _name(job.get("title"))
    if not title:
        raise ValueError("no title")
    published = _iso_utc(job.get("first_published"))
    source: PublishedField = "first_published"
    if published is None:  # an old board: the last edit stands in, and the provenance says so
        fallback = _iso_utc(job.get("updated_at"))
        if fallback is not None:
            published, source = fallback, "updated_at"
    departments = job.get("departments") or []
    function = next((_name(d.get("name")) for d in departments if isinstance(d, dict) and _name(d.get("name"))), "")
    location = _name((job.get("location") or {}).get("name")) if isinstance(job.get("location"), dict) else ""
    if not location:
        offices = job.get("offices") or []
        location = next((_name(o.get("name")) for o in offices if isinstance(o, dict) and _name(o.get("name"))), "")
    content = job.get("content")
    return JobPosting(id=str(job["id"]), title=title, function=function or UNSPECIFIED,
                      location=location or UNSPECIFIED, first_published=published,
                      url=_name(job.get("absolute_url")),
                      text=html_to_text(content, escaped=True) if isinstance(content, str) else "",
                      published_field=source)


def _lever_posting(p: Any) -> JobPosting:
    """One Lever posting; ValueError/KeyError/TypeError when it is malformed."""
    if not isinstance(p, dict) or not _name(p.get("id")):
        raise ValueError("not a posting object with an id")
    title = _name(p.get("text"))
    if not title:
        raise ValueError("no title")
    raw_cats = p.get("categories")
    cats: dict[str, Any] = raw_cats if isinstance(raw_cats, dict) else {}
    raw_locations = cats.get("allLocations")
    locations: list[Any] = raw_locations if isinstance(raw_locations, list) else []
    location = _name(cats.get("location")) or next((_name(x) for x in locations if _name(x)), "")
    parts = [p.get("descriptionPlain"), p.get("additionalPlain")]
    text = " ".join(" ".join(x.split()) for x in parts if isinstance(x, str) and x.strip())
    if not text and isinstance(p.get("description"), str):
        text = html_to_text(p["description"])
    return JobPosting(id=str(p["id"]), title=title,
                      function=_name(cats.get("department")) or _name(cats.get("team")) or UNSPECIFIED,
                      location=location or UNSPECIFIED, first_published=_ms_utc(p.get("createdAt")),
                      url=_name(p.get("hostedUrl")), text=text, published_field="createdAt")


def parse_greenhouse_page(obj: Any, board: str) -> tuple[list[JobPosting], int]:
    """A Greenhouse ``/v1/boards/{board}/jobs`` response → (postings, malformed postings skipped).
    ParseError naming the board when the response is not ``{"jobs": [...]}``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("jobs"), list):
        raise ParseError(f"greenhouse board {board!r}: the response is not {{\"jobs\": [...]}} "
                         f"(got {type(obj).__name__}); check the board name in EQUIMIND_JOB_BOARDS")
    return _parse_all(obj["jobs"], _greenhouse_posting, f"greenhouse board {board!r}")


def parse_lever_page(obj: Any, company: str) -> tuple[list[JobPosting], int]:
    """A Lever ``/v0/postings/{company}?mode=json`` page → (postings, malformed postings skipped).
    ParseError naming the company when the page is not a JSON list."""
    if not isinstance(obj, list):
        raise ParseError(f"lever company {company!r}: the response is not a JSON list of postings "
                         f"(got {type(obj).__name__}); check the company name in EQUIMIND_JOB_BOARDS")
    return _parse_all(obj, _lever_posting, f"lever company {company!r}")


def _parse_all(items: list[Any], one: Callable[[Any], JobPosting], where: str) -> tuple[list[JobPosting], int]:
    out: list[JobPosting] = []
    skipped = 0
    for i, item in enumerate(items):
        try:
            out.append(one(item))
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError, OSError) as e:
            skipped += 1
            log.warning("%s: posting %d skipped (%s)", where, i, e)
    return out, skipped


def parse_pages(kind: str, board: str, pages: Sequence[Any]) -> tuple[tuple[JobPosting, ...], int]:
    """All pages of one retrieval → (postings, each id once, in board order; malformed postings skipped)."""
    parse = parse_greenhouse_page if kind == "greenhouse" else parse_lever_page
    seen: set[str] = set()
    postings: list[JobPosting] = []
    skipped = 0
    for page in pages:
        items, bad = parse(page, board)
        skipped += bad
        for p in items:
            if p.id not in seen:
                seen.add(p.id)
                postings.append(p)
    return tuple(postings), skipped


# ---------------------------------------------------------------------------------------------------- recordings
def jobs_dir(root: Path, ticker: str) -> Path:
    """``<root>/web/jobs/<TICKER>``: where the retrievals of one ticker are recorded."""
    return Path(root) / "web" / "jobs" / ticker.strip().upper()


def recording_path(root: Path, ticker: str, kind: str, board: str, retrieved_at: datetime) -> Path:
    """``<root>/web/jobs/<TICKER>/<kind>-<board>-<YYYYMMDDTHHMMSSZ>.json``."""
    stamp = retrieved_at.astimezone(UTC).strftime(_STAMP)
    return jobs_dir(root, ticker) / f"{kind}-{_SAFE.sub('_', board)}-{stamp}.json"


def retrieval_from_recording(obj: Any, path: Path | None = None) -> BoardRetrieval:
    """A recording's JSON → the retrieval it holds. ParseError naming the file (or board) when it is malformed."""
    where = str(path) if path is not None else "recording"
    if not isinstance(obj, dict):
        raise ParseError(f"{where}: not a JSON object")
    missing = [k for k in ("ticker", "kind", "board", "url", "retrieved_at", "pages") if k not in obj]
    if missing:
        raise ParseError(f"{where}: missing {', '.join(missing)}")
    kind, board = obj["kind"], obj["board"]
    if kind not in KINDS or not isinstance(board, str) or not board:
        raise ParseError(f"{where}: kind {kind!r} / board {board!r} is not greenhouse|lever and a name")
    if not isinstance(obj["pages"], list):
        raise ParseError(f"{where}: 'pages' is not a list")
    try:
        retrieved = _iso_utc(obj["retrieved_at"])
    except ValueError as e:
        raise ParseError(f"{where}: retrieved_at {obj['retrieved_at']!r} is not an ISO timestamp") from e
    if retrieved is None:
        raise ParseError(f"{where}: retrieved_at is empty")
    postings, skipped = parse_pages(kind, board, obj["pages"])
    return BoardRetrieval(ticker=str(obj["ticker"]).upper(), kind=kind, board=board, url=str(obj["url"]),
                          retrieved_at=retrieved, postings=postings, skipped=skipped, path=path)


def write_recording(root: Path, raw: Mapping[str, Any]) -> Path:
    """Write one retrieval (the recording dict) under ``root`` atomically; returns its path."""
    retrieved = _iso_utc(raw["retrieved_at"])
    if retrieved is None:
        raise ValueError("a recording needs its retrieved_at time")
    path = recording_path(root, str(raw["ticker"]), str(raw["kind"]), str(raw["board"]), retrieved)
    atomic_write(path, json.dumps(raw, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return path


def load_recordings(root: Path, ticker: str) -> Recordings:
    """Every readable retrieval of ``ticker`` under ``root`` (oldest first). A corrupt file is skipped with a logged
    warning and listed in ``problems``; nothing raises."""
    folder = jobs_dir(root, ticker)
    out: list[BoardRetrieval] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append(retrieval_from_recording(json.loads(path.read_bytes()), path))
        except (OSError, ValueError, ParseError) as e:
            log.warning("job-board recording %s skipped: %s", path, e)
            problems.append(f"{path.name}: {e}")
    out.sort(key=lambda r: r.retrieved_at)
    return Recordings(tuple(out), tuple(problems))


def read_recordings(root: Path, ticker: str) -> list[BoardRetrieval]:
    """The readable retrievals of ``ticker`` under ``root``, sorted by ``retrieved_at`` (corrupt files skipped and
    logged; ``load_recordings`` also returns them)."""
    return list(load_recordings(root, ticker).retrievals)


# ---------------------------------------------------------------------------------------------------- fetching
class BoardFetcher:
    """Reads boards live through one ``PoliteHttpClient`` per API (no HTTP cache: a retrieval must be fresh)."""

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, now: Callable[[], datetime] | None = None,
                 max_rps: float = 2.0) -> None:
        """``sleep`` serves both the retry backoff and the rate limiter's spacing, so a test waits for nothing."""
        self.settings = settings
        self._transport = transport
        self._sleep = sleep
        self._now = now or (lambda: datetime.now(UTC))
        self._policy = HttpPolicy(max_rps=max_rps, timeout_s=settings.http_timeout_s, retries=settings.http_retries)
        self._clients: dict[str, PoliteHttpClient] = {}

    def _client(self, kind: str) -> PoliteHttpClient:
        if kind not in self._clients:
            self._clients[kind] = PoliteHttpClient(
                source_name=kind, user_agent=USER_AGENT, cache_dir=None, policy=self._policy,
                transport=self._transport, sleep=self._sleep,
                limiter=RateLimiter(self._policy.max_rps, sleep=self._sleep),
                extra_headers={"Accept": "application/json"})
        return self._clients[kind]

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()

    def fetch_raw(self, ticker: str, kind: str, board: str) -> dict[str, Any]:
        """The recording dict of one live retrieval (every page as served). Raises the client's named errors
        (NotFoundError, RateLimitedError, SourceError, ParseError); nothing is written."""
        if kind == "greenhouse":
            base = f"{self.settings.greenhouse_base_url.rstrip('/')}/v1/boards/{quote(board, safe='')}/jobs"
            params = {"content": "true"}
            pages = [self._client(kind).get_json(base, params=params, use_cache=False)]
            url = f"{base}?content=true"
        else:
            base = f"{self.settings.lever_base_url.rstrip('/')}/v0/postings/{quote(board, safe='')}"
            pages = self._lever_pages(base, board)
            url = f"{base}?mode=json"
        retrieved = self._now().astimezone(UTC).replace(microsecond=0)
        return {"ticker": ticker.upper(), "kind": kind, "board": board, "url": redact(url),
                "retrieved_at": retrieved.isoformat(), "pages": pages}

    def _lever_pages(self, base: str, company: str) -> list[Any]:
        """Every page of a Lever board: until a page is shorter than the limit, or repeats ids (``skip`` ignored)."""
        pages: list[Any] = []
        seen: set[str] = set()
        for n in range(MAX_LEVER_PAGES):
            params = {"mode": "json", "skip": str(n * LEVER_PAGE_LIMIT), "limit": str(LEVER_PAGE_LIMIT)}
            page = self._client("lever").get_json(base, params=params, use_cache=False)
            if not isinstance(page, list):
                parse_lever_page(page, company)  # raises the ParseError naming the company
            ids = {str(p["id"]) for p in page if isinstance(p, dict) and p.get("id") is not None}
            if page and ids and ids <= seen:
                log.warning("lever company %r: page at skip=%d repeats postings already read (the server ignores "
                            "skip); stopping", company, n * LEVER_PAGE_LIMIT)
                break
            pages.append(page)
            seen |= ids
            if len(page) < LEVER_PAGE_LIMIT:
                break
        return pages

    def retrieve(self, ticker: str, kind: str, board: str, root: Path | None) -> BoardRetrieval:
        """Fetch, check that it parses, then (``root`` given) record it; the retrieval as recorded."""
        raw = self.fetch_raw(ticker, kind, board)
        retrieval = retrieval_from_recording(raw)  # a board of the wrong shape raises before anything is written
        if root is None:
            return retrieval
        path = write_recording(root, raw)
        return BoardRetrieval(ticker=retrieval.ticker, kind=retrieval.kind, board=retrieval.board, url=retrieval.url,
                              retrieved_at=retrieval.retrieved_at, postings=retrieval.postings,
                              skipped=retrieval.skipped, path=path)


def board_for(settings: Settings, ticker: str) -> tuple[Kind, str] | None:
    """The configured (kind, board) of ``ticker``, or None."""
    spec = settings.job_boards.get(ticker.strip().upper())
    return parse_board_spec(spec) if spec else None


def record_board(settings: Settings, ticker: str, root: Path, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, now: Callable[[], datetime] | None = None) -> Path:
    """Fetch ``ticker``'s configured board live and write one recording under ``root``; its path. ConfigError when
    no board is configured; the client's named errors when the fetch fails (then no file is written)."""
    t = ticker.strip().upper()
    spec = board_for(settings, t)
    if spec is None:
        raise ConfigError(f"no job board configured for {t}: set EQUIMIND_JOB_BOARDS, e.g. "
                          f'\'{{"{t}": "greenhouse:BOARD"}}\'')
    fetcher = BoardFetcher(settings, transport=transport, sleep=sleep, now=now)
    try:
        path = fetcher.retrieve(t, spec[0], spec[1], root).path
    finally:
        fetcher.close()
    assert path is not None
    return path


# ---------------------------------------------------------------------------------------------------- sources
class JobBoards:
    """The live ``WebIntelSource`` "jobs": reads the configured board (today's retrieval serves an as-of date of
    yesterday or later), stores each retrieval in the history under ``settings.home`` and computes the figures from
    that history. ``report`` never raises."""

    name = "jobs"

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, now: Callable[[], datetime] | None = None) -> None:
        self.settings = settings
        self._now = now or (lambda: datetime.now(UTC))
        self.fetcher = BoardFetcher(settings, transport=transport, sleep=sleep, now=self._now)
        self._today: dict[str, BoardRetrieval] = {}  # one live read per ticker per instance

    def close(self) -> None:
        self.fetcher.close()

    def report(self, ticker: str, as_of: date) -> WebIntelResult:
        t = ticker.strip().upper()
        try:
            spec = board_for(self.settings, t)
        except ConfigError as e:
            return WebIntelResult((), (Degradation(capability="web.jobs", reason=f"unavailable ({e})"),))
        if spec is None:
            return not_configured("web.jobs", t, "EQUIMIND_JOB_BOARDS", f'\'{{"{t}": "greenhouse:BOARD"}}\'')
        kind, board = spec
        root = self.settings.home
        stored = load_recordings(root, t)
        degraded = [Degradation(capability="web.jobs.history", reason=f"skipped an unreadable recording ({p})")
                    for p in stored.problems]
        history = [r for r in stored.retrievals if r.kind == kind and r.board == board]
        today = self._now().astimezone(UTC).date()
        live = as_of >= today - timedelta(days=1)  # today's read serves yesterday's as-of date too (time zones)
        current = self._read_live(t, kind, board, degraded) if live else None
        candidates = [r for r in history if current is None or r.path != current.path]
        if current is not None:
            candidates.append(current)
        chosen = choose_retrieval(candidates, max(as_of, today) if live else as_of)
        failed = [d for d in degraded if d.capability == "web.jobs"]
        if chosen is None:
            if failed:
                return WebIntelResult((), tuple(degraded))
            fix = (f"a live run stores one retrieval a day under {jobs_dir(root, t)} and reads the board live only "
                   f"for an as-of date on or after {today - timedelta(days=1)}; or record one with `equimind "
                   "snapshot record`")
            return WebIntelResult((), (*degraded, unavailable_before(t, as_of, fix)))
        if failed:  # the live read failed, but a stored retrieval stands in
            degraded = [Degradation(capability="web.jobs.live", reason=f"{d.reason}; using the stored retrieval "
                                    f"read on {chosen.day}") if d in failed else d for d in degraded]
        earlier = [r for r in candidates if r is not chosen]
        return board_result(chosen, earlier, as_of, self.settings.product_terms.get(t), "live", degraded)

    def _read_live(self, t: str, kind: str, board: str, degraded: list[Degradation]) -> BoardRetrieval | None:
        """Today's retrieval (read once per instance), stored in the history; a failure becomes a degraded line."""
        if t in self._today:
            return self._today[t]
        try:
            raw = self.fetcher.fetch_raw(t, kind, board)
            current = retrieval_from_recording(raw)
        except NotFoundError:
            degraded.append(Degradation(capability="web.jobs", reason=(
                f"unavailable ({kind} has no board {board!r} (HTTP 404) — check the board name for {t} in "
                "EQUIMIND_JOB_BOARDS)")))
            return None
        except (RateLimitedError, SourceError, ParseError) as e:
            degraded.append(Degradation(capability="web.jobs", reason=f"unavailable ({kind} board {board!r}: {e})"))
            return None
        try:
            path = write_recording(self.settings.home, raw)
            current = BoardRetrieval(ticker=current.ticker, kind=current.kind, board=current.board, url=current.url,
                                     retrieved_at=current.retrieved_at, postings=current.postings,
                                     skipped=current.skipped, path=path)
        except OSError as e:
            degraded.append(Degradation(capability="web.jobs.history", reason=(
                f"could not store today's retrieval under {self.settings.home} ({e}); later runs cannot compare "
                "against it")))
        self._today[t] = current
        return current


class SnapshotJobBoards:
    """The replay ``WebIntelSource`` "jobs:snapshot": only the recordings under ``corpus_dir/web/jobs/``, no network.
    ``product_terms`` (per ticker) enables ``jobs_product_roles``. ``report`` never raises."""

    name = "jobs:snapshot"

    def __init__(self, corpus_dir: Path, *, product_terms: Mapping[str, Sequence[str]] | None = None) -> None:
        self.root = Path(corpus_dir)
        self.product_terms = {k.strip().upper(): list(v) for k, v in (product_terms or {}).items()}

    def close(self) -> None:
        pass

    def report(self, ticker: str, as_of: date) -> WebIntelResult:
        t = ticker.strip().upper()
        stored = load_recordings(self.root, t)
        degraded = [Degradation(capability="web.jobs.history", reason=f"skipped an unreadable recording ({p})")
                    for p in stored.problems]
        record_fix = (f"configure the board (EQUIMIND_JOB_BOARDS='{{\"{t}\": \"greenhouse:BOARD\"}}') and run "
                      "`equimind snapshot record`")
        if not stored.retrievals:
            degraded.append(Degradation(capability="web.jobs", reason=(
                f"unavailable (the snapshot has no job-board recording for {t} under {jobs_dir(self.root, t)} — "
                f"{record_fix})")))
            return WebIntelResult((), tuple(degraded))
        chosen = choose_retrieval(stored.retrievals, as_of)
        if chosen is None:
            first = stored.retrievals[0].day
            degraded.append(unavailable_before(t, as_of, f"the snapshot's first retrieval of {t} is from {first}; "
                                                f"pick an as-of date on or after it, or {record_fix} earlier"))
            return WebIntelResult((), tuple(degraded))
        earlier = [r for r in stored.retrievals if r is not chosen]
        return board_result(chosen, earlier, as_of, self.product_terms.get(t), "snapshot", degraded)

