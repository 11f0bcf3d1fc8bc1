"""GitHub activity of a company's public organisations: a live web-intelligence source, its recordings and a replay.

What is read. For each organisation in ``Settings.github_orgs[TICKER]`` (nothing is guessed): its public repositories
(``GET {api}/orgs/{org}/repos?type=public&sort=pushed&per_page=100``, following ``Link: <...>; rel="next"`` on the
API's own host, at most ``MAX_PAGES`` pages), then, for the selected repositories only, GitHub's weekly commit
statistics (``GET {api}/repos/{owner}/{repo}/stats/contributors``). Requests carry ``Accept:
application/vnd.github+json``, ``X-GitHub-Api-Version: 2022-11-28``, ``User-Agent: equimind/0.1 (github)`` and, only
when ``Settings.github_token`` is set, ``Authorization: Bearer <token>`` (never logged, never part of a cache key: the
key is the URL). Successful responses are cached under ``settings.http_cache_path`` for an hour.

Which repositories. Per organisation, the public repositories that are not forks (someone else's code) and not
archived (GitHub does not say when a repository was archived, so one cannot be placed in time), created on or before
the as-of date; of those, across the organisations, the top K (default 10) by ``pushed_at``. The provenance says how
many were skipped and why (``repos_skipped``).

The as-of rule. A week counts only when complete by the as-of date (week start + 7 days <= as_of + 1 day) and by the
time the data was retrieved; the 13 such weeks ending at the as-of date are "this quarter", the 13 before "the prior
quarter" (``sources.github_figures``). GitHub computes the statistics today over each repository's whole history, so
a past as-of date is served from data retrieved later: repositories deleted since, and history rewritten since, are
not seen (survivorship), and ``pushed_at`` (the top-K order) is today's. ``stats/contributors`` counts only each
repository's top 100 contributors and excludes merge commits. The provenance of every figure says so (``caveats``).

Failures degrade, never raise. A 202 (GitHub still computing the statistics) is retried with backoff, then that
repository is left out with "GitHub is still computing statistics for org/repo; run again in a minute" while the
others are counted; a 204 (empty repository) counts as zero commits. A spent primary rate limit (403/429 with
``x-ratelimit-remaining: 0``) stops all fetching at once (retries would burn the window) with a line naming the reset
time (UTC) and the fix (``EQUIMIND_GITHUB_TOKEN``); a secondary limit (``Retry-After``) is waited out (bounded) and
retried. An unknown organisation (404) is a line naming it. Parsing is total: a malformed repository entry or
statistics row is skipped and counted.

Recordings. Each live retrieval, and ``record_github`` (``equimind snapshot record``), writes
``<root>/web/github/<TICKER>/<YYYYMMDDTHHMMSSZ>.json`` atomically: ``{"ticker", "orgs", "retrieved_at" (ISO UTC),
"api", "repos": {org: [raw repository objects]}, "stats": {"org/repo": raw stats JSON, or null for a 204},
"failures": {"org/repo" or "org": reason}}``. The live source writes under ``settings.home``; ``SnapshotGitHub``
replays the latest recording of a ticker under ``corpus_dir`` (whatever the as-of date; the week rule dates the data)
with no network.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from equimind.core.config import Settings
from equimind.core.degraded import Degradation
from equimind.core.errors import ConfigError, EquiMindError, NotFoundError, ParseError, RateLimitedError, SourceError
from equimind.sources.github_figures import RepoWeeks, activity_figures, parse_contributor_stats
from equimind.sources.http import (
    HttpPolicy,
    NotReadyError,
    PoliteHttpClient,
    RateLimiter,
    ResponseHook,
    UnreachableError,
    atomic_write,
    parse_retry_after,
    ratelimit_reset,
    validate_json,
)
from equimind.sources.web_intel import WebIntelResult, not_configured

log = logging.getLogger(__name__)

CAPABILITY = "web.github"
API_VERSION = "2022-11-28"
USER_AGENT = "equimind/0.1 (github)"
REPOS_QUERY = "type=public&sort=pushed&per_page=100"
MAX_PAGES = 10  # 1,000 repositories an organisation; sorted by push, the active ones come first
CACHE_S = 3600.0
MAX_RPS = 4.0  # GitHub asks for serial requests; a few a second is well within it
SECONDARY_WAIT_S = 60.0  # GitHub: a secondary limit without Retry-After → wait at least a minute
TOKEN_FIX = "set EQUIMIND_GITHUB_TOKEN (raises the limit from 60 to 5,000 requests an hour)"
STAMP = "%Y%m%dT%H%M%SZ"
CAVEATS = (
    "GitHub computes the weekly statistics at retrieval over each repository's whole history: for an earlier as-of "
    "date, repositories deleted since and history rewritten since are not seen (survivorship), and the top-K order "
    "uses pushed_at as of retrieval",
    "stats/contributors counts each repository's top 100 contributors only and excludes merge commits",
    "forks and archived repositories are skipped (GitHub does not say when a repository was archived)",
)
_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?([^",;]+)"?')


@dataclass(frozen=True)
class RepoInfo:
    """The fields of a repository object that selection and figures use."""

    full_name: str
    html_url: str
    fork: bool
    archived: bool
    created_at: datetime
    pushed_at: datetime
    stars: int


def parse_repo(obj: Any) -> RepoInfo | None:
    """One raw repository object → RepoInfo; None for an entry that cannot be read (the caller counts it)."""
    try:
        full = str(obj["full_name"])
        if "/" not in full:
            return None
        pushed = obj.get("pushed_at") or obj["created_at"]  # an empty repository may have no push
        return RepoInfo(full_name=full, html_url=str(obj.get("html_url") or f"https://github.com/{full}"),
                        fork=bool(obj.get("fork", False)), archived=bool(obj.get("archived", False)),
                        created_at=_iso(obj["created_at"]), pushed_at=_iso(pushed),
                        stars=int(obj.get("stargazers_count") or 0))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _iso(value: Any) -> datetime:
    when = datetime.fromisoformat(str(value))
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def select_repos(repos: Sequence[RepoInfo], as_of: date, top_k: int) -> tuple[list[RepoInfo], dict[str, int]]:
    """The repositories that count at ``as_of`` (module docstring) and {reason: how many were skipped}."""
    skipped: dict[str, int] = {}
    eligible: dict[str, RepoInfo] = {}
    for r in repos:
        reason = ("fork" if r.fork else "archived" if r.archived
                  else "created after the as-of date" if r.created_at.date() > as_of else None)
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
        elif r.full_name.lower() in eligible:
            skipped["listed twice"] = skipped.get("listed twice", 0) + 1
        else:
            eligible[r.full_name.lower()] = r
    ranked = sorted(eligible.values(), key=lambda r: (-r.pushed_at.timestamp(), r.full_name))
    if len(ranked) > top_k:
        skipped[f"beyond the top {top_k} by pushed_at"] = len(ranked) - top_k
    return ranked[:top_k], skipped


def next_link(header: str | None) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, or None."""
    for url, rel in _LINK.findall(header or ""):
        if "next" in rel.split():
            return str(url)
    return None


def rate_limit_reason(reset: datetime, url: str, *, token_set: bool) -> str:
    fix = "wait until then (a token's limit is 5,000 requests an hour)" if token_set else TOKEN_FIX
    return (f"GitHub's API rate limit is spent (on {url}); it resets at {reset:%Y-%m-%d %H:%M:%S} UTC: {fix}")


def rate_limit_hook(*, token_set: bool) -> ResponseHook:
    """The GitHub reading of a 403/429: a spent primary limit is a ``RateLimitedError`` at once (no retry burns the
    window); a secondary limit is retried after ``Retry-After`` (or a minute); anything else is left to the client
    (a plain 403 is a SourceError naming the URL)."""

    def hook(resp: httpx.Response, url: str) -> EquiMindError | float | None:
        if resp.status_code not in (403, 429):
            return None
        reset = ratelimit_reset(resp.headers)
        if reset is not None:
            return RateLimitedError(rate_limit_reason(reset, url, token_set=token_set))
        wait = parse_retry_after(resp.headers.get("retry-after"))
        if wait is not None:
            return wait
        if "secondary rate limit" in resp.text.lower():
            return SECONDARY_WAIT_S
        return None

    return hook


class GitHubApi:
    """The two GitHub REST calls this source makes, through a ``PoliteHttpClient``."""

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, max_rps: float = MAX_RPS) -> None:
        self.base = settings.github_api_url.rstrip("/")
        token = settings.github_token.get_secret_value() if settings.github_token is not None else ""
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        policy = HttpPolicy(max_rps=max_rps, timeout_s=settings.http_timeout_s, retries=settings.http_retries,
                            backoff_base_s=1.0, max_backoff_s=60.0)
        self.http = PoliteHttpClient(source_name="github", user_agent=USER_AGENT, cache_dir=settings.http_cache_path,
                                     policy=policy, transport=transport, sleep=sleep,
                                     limiter=RateLimiter(max_rps), extra_headers=headers,
                                     response_hook=rate_limit_hook(token_set=bool(token)))

    def close(self) -> None:
        self.http.close()

    def repos_url(self, org: str) -> str:
        return repos_url(self.base, org)

    def list_repos(self, org: str) -> list[Any]:
        """Every page of the organisation's public repositories (raw objects, as served)."""
        url: str | None = self.repos_url(org)
        out: list[Any] = []
        home = urlsplit(self.base)
        for _ in range(MAX_PAGES):
            assert url is not None
            resp = self.http.get_response(url, validate=validate_json, max_age_s=CACHE_S)
            page = json.loads(resp.body)
            if not isinstance(page, list):
                raise ParseError(f"GitHub's repository list for {org} is not a list")
            out.extend(page)
            url = next_link(resp.headers.get("link"))
            if url is None:
                return out
            there = urlsplit(url)
            if (there.scheme, there.netloc) != (home.scheme, home.netloc):  # never send the token elsewhere
                log.warning("github: the next page of %s is on another host (%s); stopped there", org, there.netloc)
                return out
        log.warning("github: %s has more than %d pages of repositories; read the first %d", org, MAX_PAGES,
                    MAX_PAGES)
        return out

    def contributor_stats(self, full_name: str) -> Any:
        """The raw ``stats/contributors`` JSON, None for a 204 (empty repository); NotReadyError if GitHub kept
        answering 202 through the retries."""
        resp = self.http.get_response(stats_url(self.base, full_name), validate=validate_json, max_age_s=CACHE_S,
                                      ok_statuses=frozenset({200, 204}), retry_statuses=frozenset({202}))
        return None if resp.status == 204 or not resp.body.strip() else json.loads(resp.body)


def repos_url(api: str, org: str) -> str:
    return f"{api.rstrip('/')}/orgs/{quote(org, safe='')}/repos?{REPOS_QUERY}"


def stats_url(api: str, full_name: str) -> str:
    owner, _, repo = full_name.partition("/")
    return f"{api.rstrip('/')}/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/stats/contributors"


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _parse_repos(rec: Mapping[str, Any]) -> tuple[list[RepoInfo], int]:
    repos: list[RepoInfo] = []
    malformed = 0
    listed = _mapping(rec.get("repos"))
    for org in rec.get("orgs") or []:
        raw = listed.get(org)
        if raw is None:
            continue
        if not isinstance(raw, list):
            malformed += 1
            continue
        for obj in raw:
            info = parse_repo(obj)
            if info is None:
                malformed += 1
            else:
                repos.append(info)
    return repos, malformed


def retrieve(api: GitHubApi, ticker: str, orgs: Sequence[str], *, as_of: date, top_k: int) -> dict[str, Any]:
    """One retrieval, as a recording (module docstring): the repository lists of ``orgs`` and the statistics of the
    repositories selected at ``as_of``. Per-organisation and per-repository failures are recorded, not raised; a spent
    rate limit stops every further request. Raises only UnreachableError (no network: nothing to record)."""
    rec: dict[str, Any] = {"ticker": ticker.upper(), "orgs": list(orgs), "retrieved_at": _now().isoformat().replace(
        "+00:00", "Z"), "api": api.base, "repos": {}, "stats": {}, "failures": {}}
    failures: dict[str, str] = rec["failures"]
    stopped: str | None = None
    for org in orgs:
        try:
            rec["repos"][org] = api.list_repos(org)
        except UnreachableError:
            raise
        except RateLimitedError as e:
            stopped = failures[org] = str(e)
            break
        except NotFoundError:
            failures[org] = f"GitHub has no organisation {org!r} (HTTP 404); check EQUIMIND_GITHUB_ORGS"
        except EquiMindError as e:
            failures[org] = f"could not list the repositories of {org!r} ({e})"
    if stopped is not None:
        return rec
    selected, _ = select_repos(_parse_repos(rec)[0], as_of, top_k)
    for r in selected:
        if stopped is not None:
            failures[r.full_name] = stopped
            continue
        try:
            rec["stats"][r.full_name] = api.contributor_stats(r.full_name)
        except UnreachableError:
            raise
        except RateLimitedError as e:
            stopped = failures[r.full_name] = str(e)
        except NotReadyError:
            failures[r.full_name] = f"GitHub is still computing statistics for {r.full_name}; run again in a minute"
        except EquiMindError as e:
            failures[r.full_name] = f"statistics of {r.full_name} unavailable ({e})"
    return rec


def recording_path(root: Path, ticker: str, retrieved_at: str) -> Path:
    return root / "web" / "github" / ticker.upper() / f"{_iso(retrieved_at.replace('Z', '+00:00')):{STAMP}}.json"


def write_recording(root: Path, rec: Mapping[str, Any]) -> Path:
    """Write one recording atomically to its place under ``root`` (module docstring); returns the path."""
    path = recording_path(root, str(rec["ticker"]), str(rec["retrieved_at"]))
    atomic_write(path, json.dumps(rec, indent=1, sort_keys=True).encode("utf-8"))
    return path


def read_recordings(root: Path, ticker: str) -> list[dict[str, Any]]:
    """The ticker's recordings under ``root``, oldest first (by ``retrieved_at``). A file that is not a readable
    recording is skipped with a logged warning, never raised."""
    folder = root / "web" / "github" / ticker.upper()
    out: list[tuple[datetime, dict[str, Any]]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            rec = json.loads(path.read_bytes())
            if not isinstance(rec, dict) or not isinstance(rec.get("orgs"), list):
                raise ValueError("not a GitHub recording (no 'orgs' list)")
            when = _iso(str(rec["retrieved_at"]).replace("Z", "+00:00"))
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("github: skipped the unreadable recording %s (%s)", path, e)
            continue
        out.append((when, rec))
    return [rec for _, rec in sorted(out, key=lambda t: t[0])]


def report_from_recording(rec: Mapping[str, Any], ticker: str, as_of: date, *, origin: str, top_k: int,
                          notes: Sequence[str] = ()) -> WebIntelResult:
    """The figures and degraded lines of one recording at ``as_of`` (live and snapshot share this)."""
    api = str(rec.get("api") or "")
    orgs = [str(o) for o in rec.get("orgs") or []]
    try:
        retrieved: datetime | None = _iso(str(rec.get("retrieved_at")).replace("Z", "+00:00"))
    except ValueError:
        retrieved = None
    failures = _mapping(rec.get("failures"))
    stats = _mapping(rec.get("stats"))
    repos, malformed = _parse_repos(rec)
    selected, skipped = select_repos(repos, as_of, top_k)
    if malformed:
        skipped["unreadable repository entry"] = malformed
    reasons = [str(failures[o]) for o in orgs if o in failures]
    counted: list[RepoWeeks] = []
    rows_skipped = 0
    missing = 0

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for r in selected:
        if r.full_name in stats:
            try:
                parsed = parse_contributor_stats(stats[r.full_name])
            except ParseError:
                skip("unreadable statistics")
                continue
            rows_skipped += parsed.skipped_rows
            counted.append(RepoWeeks(r.full_name, parsed.weeks, html_url=r.html_url, stars=r.stars,
                                     stats_url=stats_url(api, r.full_name)))
        elif r.full_name in failures:
            skip("statistics unavailable")
            reasons.append(str(failures[r.full_name]))
        else:
            skip("statistics not in the recording")
            missing += 1
    if missing:
        reasons.append(f"{missing} of the repositories selected at {as_of} have no statistics in the recording of "
                       f"{rec.get('retrieved_at')} (recorded for another as-of date); record again")
    degraded = [Degradation(capability=CAPABILITY, reason=r) for r in dict.fromkeys(reasons)]
    provenance: dict[str, Any] = {
        "source": "github", "orgs": orgs,
        "url": [repos_url(api, o) for o in orgs if o not in failures] + [r.stats_url for r in counted],
        "retrieved_at": rec.get("retrieved_at"), "origin": origin,
        "repos_counted": [r.full_name for r in counted], "repos_skipped": skipped,
        "stats_rows_skipped": rows_skipped,
        "selection": f"public, non-fork, non-archived repositories created on or before {as_of}; the top {top_k} by "
                     "pushed_at",
        "caveats": [*CAVEATS, *notes],
    }
    figures, more = activity_figures(counted, as_of, retrieved_at=retrieved, provenance=provenance)
    return WebIntelResult(tuple(figures), tuple(degraded + more))


def _unavailable(reason: str) -> WebIntelResult:
    return WebIntelResult((), (Degradation(capability=CAPABILITY, reason=f"unavailable ({reason})"),))


def _orgs(settings: Settings, ticker: str) -> list[str]:
    return list(settings.github_orgs.get(ticker.strip().upper()) or [])


def record_github(settings: Settings, ticker: str, root: Path, *, transport: httpx.BaseTransport | None = None,
                  sleep: Callable[[float], None] = time.sleep, top_k: int = 10, as_of: date | None = None,
                  max_rps: float = MAX_RPS) -> Path:
    """Retrieve the ticker's GitHub activity (repositories selected at ``as_of``, default today) and write it as a
    recording under ``root``; returns its path. Raises ConfigError when no organisation is configured and
    SourceError when not one organisation could be listed (nothing is written then)."""
    t = ticker.strip().upper()
    orgs = _orgs(settings, t)
    if not orgs:
        raise ConfigError(f"no GitHub organisation configured for {t}; set EQUIMIND_GITHUB_ORGS, e.g. "
                          f'\'{{"{t}": ["org"]}}\'')
    api = GitHubApi(settings, transport=transport, sleep=sleep, max_rps=max_rps)
    try:
        rec = retrieve(api, t, orgs, as_of=as_of or datetime.now(UTC).date(), top_k=top_k)
    finally:
        api.close()
    if not rec["repos"]:
        raise SourceError(f"nothing recorded for {t}: " + "; ".join(rec["failures"].values()))
    return write_recording(root, rec)


class GitHubActivity:
    """Live ``WebIntelSource``: reads the API now, writes the retrieval into the history under ``settings.home``
    (same layout as a snapshot), and reports from it."""

    name = "github"

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, top_k: int = 10, max_rps: float = MAX_RPS) -> None:
        """``sleep`` waits out retries (202, Retry-After, backoff); ``max_rps`` spaces request starts."""
        if top_k < 1:
            raise ConfigError(f"top_k must be >= 1 (got {top_k})")
        self.settings = settings
        self.top_k = top_k
        self.api = GitHubApi(settings, transport=transport, sleep=sleep, max_rps=max_rps)

    def close(self) -> None:
        self.api.close()

    def report(self, ticker: str, as_of: date) -> WebIntelResult:
        t = ticker.strip().upper()
        orgs = _orgs(self.settings, t)
        if not orgs:
            return not_configured(CAPABILITY, t, "EQUIMIND_GITHUB_ORGS", f'\'{{"{t}": ["org"]}}\'')
        try:
            rec = retrieve(self.api, t, orgs, as_of=as_of, top_k=self.top_k)
            if rec["repos"]:
                try:
                    write_recording(self.settings.home, rec)
                except OSError as e:
                    log.warning("github: could not write the retrieval into the history (%s)", e)
            return report_from_recording(rec, t, as_of, origin="live", top_k=self.top_k,
                                         notes=("responses are cached for up to an hour",))
        except UnreachableError as e:
            return _unavailable(str(e))
        except Exception as e:  # the contract: report never raises
            log.exception("github: report for %s failed", t)
            return _unavailable(f"{type(e).__name__}: {e}")


class SnapshotGitHub:
    """Replay ``WebIntelSource`` over ``corpus_dir/web/github/``: the latest recording of the ticker, no network."""

    name = "github"

    def __init__(self, corpus_dir: Path, *, top_k: int = 10) -> None:
        self.corpus_dir = Path(corpus_dir)
        self.top_k = top_k

    def close(self) -> None:
        pass

    def report(self, ticker: str, as_of: date) -> WebIntelResult:
        t = ticker.strip().upper()
        recs = read_recordings(self.corpus_dir, t)
        if not recs:
            return _unavailable(f"no GitHub recording for {t} under {self.corpus_dir / 'web' / 'github'}; record one "
                                "with `equimind snapshot record`")
        rec = recs[-1]
        note = (f"replayed from the latest recording (retrieved {rec.get('retrieved_at')}), whatever the as-of date; "
                "only weeks complete by both the as-of date and the retrieval count")
        try:
            return report_from_recording(rec, t, as_of, origin="snapshot", top_k=self.top_k, notes=(note,))
        except Exception as e:  # the contract: report never raises
            log.exception("github: replay for %s failed", t)
            return _unavailable(f"{type(e).__name__}: {e}")
