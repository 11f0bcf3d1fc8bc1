"""A polite HTTP client shared by the live sources (SEC EDGAR, FRED, World Bank, GitHub).

One job: GET a URL without upsetting the server and without storing anything partial.

- a rate limiter (minimum spacing between request starts; SEC allows at most 10 requests/s),
- retries with exponential backoff on 429 (honouring ``Retry-After``, seconds or HTTP-date), 5xx, timeouts and
  broken connections; a body that fails validation (e.g. truncated JSON) is retried too; a host that refuses the
  connection (or cannot be resolved) is tried only twice, so a machine without network fails fast,
- an on-disk cache under ``settings.http_cache_path``: a body is written (to a temp file, then ``os.replace``) only
  after a complete 200 response that passed validation, so a failure never leaves a partial entry,
- named errors: ``RateLimitedError`` (429 after all retries), ``NotFoundError`` (404/410), ``SourceError`` (403,
  other 4xx, 5xx/timeouts after all retries), ``ParseError`` (a body that never validated), ``NotReadyError`` (a
  status the caller asked to retry, e.g. GitHub's 202 "still computing", that never turned into an answer).

``get_response`` is ``get_bytes`` for APIs that need more than the body (GitHub): it returns the status and the
response headers too (e.g. ``Link`` pagination; cached with the body, so a cached page still knows its next page),
accepts other success statuses (``ok_statuses``, e.g. 204 No Content) and retries caller-named ones
(``retry_statuses``, e.g. 202 Accepted) with the usual backoff. A ``response_hook`` given to the client sees every
response that is not a success first and may turn it into an error raised at once (a rate limit whose window is
spent: retrying would only burn it) or into a retry after a given number of seconds (a secondary rate limit).

The transport and the sleep/clock are injectable so tests can replay recorded responses with injected faults.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from equimind.core.errors import (
    ConfigError,
    EquiMindError,
    NotFoundError,
    ParseError,
    RateLimitedError,
    SourceError,
)

log = logging.getLogger(__name__)

__all__ = [
    "HttpPolicy",
    "HttpResponse",
    "NotFoundError",
    "NotReadyError",
    "PoliteHttpClient",
    "RateLimitedError",
    "RateLimiter",
    "ResponseHook",
    "SourceError",
    "UnreachableError",
    "parse_retry_after",
    "ratelimit_reset",
]

Validator = Callable[[bytes], None]
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
OK_STATUSES = frozenset({200})
NO_STATUSES: frozenset[int] = frozenset()
# (response, its URL with secrets masked) -> an error to raise now, seconds to wait before a retry, or None (default)
ResponseHook = Callable[[httpx.Response, str], "EquiMindError | float | None"]
_UNCACHED_HEADERS = frozenset({"set-cookie", "authorization"})


@dataclass(frozen=True)
class HttpResponse:
    """A successful response: its status (one of the ``ok_statuses`` asked for), body and headers (names lower-case).
    ``cached`` is True when it came from the on-disk cache, without a request."""

    status: int
    body: bytes
    headers: Mapping[str, str]
    cached: bool = False


@dataclass(frozen=True)
class HttpPolicy:
    """How hard to try. ``retries`` is the number of extra attempts after the first."""

    max_rps: float = 10.0
    timeout_s: float = 20.0
    retries: int = 4
    backoff_base_s: float = 0.5
    max_backoff_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_rps <= 0:
            raise ConfigError(f"max_rps must be > 0 (got {self.max_rps})")
        if self.timeout_s <= 0:
            raise ConfigError(f"timeout_s must be > 0 (got {self.timeout_s})")
        if self.retries < 0:
            raise ConfigError(f"retries must be >= 0 (got {self.retries})")

    def backoff(self, attempt: int) -> float:
        """Exponential backoff for attempt 0, 1, 2 ...: base * 2**attempt, capped."""
        return float(min(self.max_backoff_s, self.backoff_base_s * (2**attempt)))


class RateLimiter:
    """Spaces request starts at least ``1 / max_rps`` seconds apart (thread-safe)."""

    def __init__(
        self,
        max_rps: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_rps <= 0:
            raise ConfigError(f"max_rps must be > 0 (got {max_rps})")
        self.interval = 1.0 / max_rps
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = float("-inf")

    def acquire(self) -> float:
        """Block until a request may start; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            wait = max(0.0, self._next - now)
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            self._sleep(wait)
        return wait


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date); None if absent/unparseable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now or datetime.now(UTC)
    return max(0.0, (when - current).total_seconds())


def ratelimit_reset(headers: Mapping[str, str]) -> datetime | None:
    """When a spent rate-limit window resets: the UTC time of ``x-ratelimit-reset`` (epoch seconds) when
    ``x-ratelimit-remaining`` is 0 (GitHub and many APIs send these); None when the window is not spent or the headers
    are absent or unreadable."""
    lower = {k.lower(): v for k, v in headers.items()}
    remaining, reset = lower.get("x-ratelimit-remaining"), lower.get("x-ratelimit-reset")
    if remaining is None or reset is None or remaining.strip() != "0":
        return None
    try:
        return datetime.fromtimestamp(int(reset.strip()), UTC)
    except (ValueError, OverflowError, OSError):
        return None


def validate_json(body: bytes) -> None:
    """Raises ParseError unless ``body`` is complete JSON."""
    try:
        json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise ParseError(f"response is not valid JSON ({e}); it may have been truncated") from e


class UnreachableError(SourceError):
    """The host could not be connected to at all (no network, DNS failure, connection refused)."""


class NotReadyError(SourceError):
    """The server kept answering a "not ready yet" status (e.g. 202 Accepted) the caller asked to retry."""


class _Retryable(Exception):
    """Internal: one attempt failed in a way worth retrying."""

    def __init__(self, reason: str, wait: float | None = None, status: int | None = None,
                 connect: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.status = status
        self.connect = connect


class PoliteHttpClient:
    """GET with rate limit, retries, timeouts and an atomic on-disk cache. One instance per source."""

    def __init__(
        self,
        *,
        source_name: str,
        user_agent: str,
        cache_dir: Path | None,
        policy: HttpPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        limiter: RateLimiter | None = None,
        extra_headers: Mapping[str, str] | None = None,
        response_hook: ResponseHook | None = None,
    ) -> None:
        """``sleep`` is used for retry backoff only; the rate limiter (its own clock and sleep) spaces requests.
        ``extra_headers`` go with every request and are never logged nor part of a cache key (the key is the URL).
        ``response_hook`` sees each response that is not a success before the default handling (module docstring)."""
        self.source_name = source_name
        self.policy = policy or HttpPolicy()
        self.cache_dir = cache_dir
        self._sleep = sleep
        self._hook = response_hook
        self._limiter = limiter or RateLimiter(self.policy.max_rps)
        headers = {"User-Agent": user_agent, "Accept-Encoding": "gzip, deflate"}
        headers.update(extra_headers or {})
        self._client = httpx.Client(
            headers=headers, timeout=self.policy.timeout_s, transport=transport, follow_redirects=True
        )
        self.requests_sent = 0

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PoliteHttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------------ public
    def get_bytes(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        validate: Validator | None = None,
        max_age_s: float | None = None,
        use_cache: bool = True,
    ) -> bytes:
        """The body of a 200 response to GET ``url``. Cached bodies younger than ``max_age_s`` (None = forever)
        are returned without a request."""
        full = _full_url(url, params)
        path = self._cache_file(full) if use_cache else None
        cached = _read_cache(path, max_age_s)
        if cached is not None:
            log.debug("%s cache hit %s", self.source_name, redact(full))
            return cached
        body = self._fetch(full, validate).body
        if path is not None:
            atomic_write(path, body)
        return body

    def get_response(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        validate: Validator | None = None,
        max_age_s: float | None = None,
        use_cache: bool = True,
        ok_statuses: frozenset[int] = OK_STATUSES,
        retry_statuses: frozenset[int] = NO_STATUSES,
    ) -> HttpResponse:
        """Status, body and headers of a successful response to GET ``url``: a status in ``ok_statuses`` (``validate``
        checks a 200 body only; other successes, e.g. 204, carry none). A status in ``retry_statuses`` is retried
        with backoff like a 5xx and raises ``NotReadyError`` when retries run out. Successes are cached with their
        status and headers (cache entry ``<sha256 of the URL>.resp``, separate from ``get_bytes``' ``.body``)."""
        full = _full_url(url, params)
        path = self._cache_file(full, suffix=".resp") if use_cache else None
        cached = _read_cache(path, max_age_s)
        if cached is not None:
            hit = _decode_response(cached)
            if hit is not None and hit.status in ok_statuses:
                log.debug("%s cache hit %s", self.source_name, redact(full))
                return hit
        resp = self._fetch(full, validate, ok_statuses, retry_statuses)
        if path is not None:
            atomic_write(path, _encode_response(resp))
        return resp

    def get_json(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        max_age_s: float | None = None,
        use_cache: bool = True,
    ) -> Any:
        body = self.get_bytes(url, params=params, validate=validate_json, max_age_s=max_age_s, use_cache=use_cache)
        return json.loads(body)

    def cache_file_for(self, url: str, params: Mapping[str, str] | None = None) -> Path | None:
        """Where the cached body of this URL lives (whether or not it exists)."""
        return self._cache_file(_full_url(url, params))

    # ------------------------------------------------------------------------------------------------ internals
    def _cache_file(self, full_url: str, suffix: str = ".body") -> Path | None:
        if self.cache_dir is None:
            return None
        host = urlsplit(full_url).netloc.replace(":", "_") or "local"
        digest = hashlib.sha256(full_url.encode("utf-8")).hexdigest()
        return self.cache_dir / host / f"{digest}{suffix}"

    def _fetch(self, url: str, validate: Validator | None, ok_statuses: frozenset[int] = OK_STATUSES,
               retry_statuses: frozenset[int] = NO_STATUSES) -> HttpResponse:
        last: _Retryable | None = None
        for attempt in range(self.policy.retries + 1):
            if last is not None and last.connect and attempt > 1:
                break  # a host we cannot connect to twice in a row is down (or there is no network): stop early
            if last is not None:
                wait = last.wait if last.wait is not None else self.policy.backoff(attempt - 1)
                wait = min(wait, self.policy.max_backoff_s)
                log.info("%s: %s; retry %d/%d in %.2fs", self.source_name, last.reason, attempt,
                         self.policy.retries, wait)
                self._sleep(wait)
            try:
                return self._attempt(url, validate, ok_statuses, retry_statuses)
            except _Retryable as e:
                last = e
        assert last is not None
        return self._give_up(url, last)

    def _give_up(self, full_url: str, last: _Retryable) -> HttpResponse:
        url = redact(full_url)
        tries = min(2, self.policy.retries + 1) if last.connect else self.policy.retries + 1
        if last.status in (403, 429):  # a 403 is retried only when the response hook said so (a rate limit)
            raise RateLimitedError(
                f"{self.source_name} rate-limited us ({last.status}) on {url} after {tries} attempts; "
                "wait a few minutes, lower the request rate, or use --snapshot"
            )
        if last.status is not None and 200 <= last.status < 300:
            raise NotReadyError(
                f"{self.source_name} was still preparing {url} (HTTP {last.status}) after {tries} attempts; "
                "try again in a minute"
            )
        if last.connect:
            raise UnreachableError(
                f"{self.source_name} unreachable: cannot connect for {url} ({last.reason}); "
                "check the network or use --snapshot DIR"
            )
        if last.status == -1:
            raise ParseError(f"{self.source_name} sent an invalid body for {url} {tries} times: {last.reason}")
        raise SourceError(
            f"{self.source_name} unreachable for {url} after {tries} attempts ({last.reason}); "
            "check the network or use --snapshot DIR"
        )

    def _attempt(self, url: str, validate: Validator | None, ok_statuses: frozenset[int],
                 retry_statuses: frozenset[int]) -> HttpResponse:
        self._limiter.acquire()
        self.requests_sent += 1
        try:
            resp = self._client.get(url)
            body = resp.content
        except httpx.TimeoutException as e:
            raise _Retryable(f"timeout after {self.policy.timeout_s}s ({type(e).__name__})") from e
        except httpx.ConnectError as e:
            raise _Retryable(f"cannot connect ({e})", connect=True) from e
        except httpx.TransportError as e:
            raise _Retryable(f"connection failed ({type(e).__name__}: {e})") from e
        status = resp.status_code
        if status in ok_statuses:
            if validate is not None and status == 200:
                try:
                    validate(body)
                except ParseError as e:
                    raise _Retryable(str(e), status=-1) from e
            return HttpResponse(status, body, _headers(resp))
        if self._hook is not None:
            decision = self._hook(resp, redact(url))
            if isinstance(decision, BaseException):
                raise decision
            if decision is not None:
                raise _Retryable(f"HTTP {status}", wait=float(decision), status=status)
        if status in retry_statuses:
            raise _Retryable(f"HTTP {status}", status=status)
        if status in RETRY_STATUSES:
            wait = parse_retry_after(resp.headers.get("Retry-After")) if status in (429, 503) else None
            raise _Retryable(f"HTTP {status}", wait=wait, status=status)
        self._raise_for_status(url, status)
        raise AssertionError("unreachable")

    def _raise_for_status(self, full_url: str, status: int) -> None:
        url = redact(full_url)
        if status in (404, 410):
            raise NotFoundError(f"{self.source_name}: {url} does not exist (HTTP {status}); check the ticker/CIK/id")
        if status == 403:
            raise SourceError(
                f"{self.source_name} refused {url} (HTTP 403). SEC answers 403 to requests without a declared "
                'identity or above 10 requests/s: set EQUIMIND_SEC_IDENTITY="Your Name you@example.com" and retry'
                if self.source_name == "sec_edgar"
                else f"{self.source_name} refused {url} (HTTP 403); check the API key / access rights"
            )
        raise SourceError(f"{self.source_name}: unexpected HTTP {status} for {url}")


_SECRET_PARAM = re.compile(r"((?:api_key|apikey|token|key)=)[^&]+", re.I)


def redact(url: str) -> str:
    """The URL with API keys masked, for messages and logs."""
    return _SECRET_PARAM.sub(r"\1***", url)


def _full_url(url: str, params: Mapping[str, str] | None) -> str:
    if not params:
        return url
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}{urlencode(sorted(params.items()))}"


def _headers(resp: httpx.Response) -> dict[str, str]:
    return {k.lower(): v for k, v in resp.headers.items() if k.lower() not in _UNCACHED_HEADERS}


def _encode_response(resp: HttpResponse) -> bytes:
    """A cache entry of ``get_response``: one JSON line (status, headers), then the body as received."""
    head = json.dumps({"status": resp.status, "headers": dict(resp.headers)}, sort_keys=True).encode("utf-8")
    return head + b"\n" + resp.body


def _decode_response(data: bytes) -> HttpResponse | None:
    """The cached response, or None for an entry that cannot be read (then it is fetched again)."""
    head, sep, body = data.partition(b"\n")
    try:
        meta: Any = json.loads(head) if sep else None
        status, headers = int(meta["status"]), {str(k): str(v) for k, v in meta["headers"].items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return HttpResponse(status, body, headers, cached=True)


def _read_cache(path: Path | None, max_age_s: float | None) -> bytes | None:
    if path is None or not path.is_file():
        return None
    if max_age_s is not None and time.time() - path.stat().st_mtime > max_age_s:
        return None
    return path.read_bytes()


def atomic_write(path: Path, body: bytes) -> None:
    """Write ``body`` to ``path`` via a temp file in the same folder and ``os.replace`` (never a partial file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
