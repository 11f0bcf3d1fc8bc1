"""PoliteHttpClient against a real local HTTP server replaying recorded SEC responses, with injected faults."""

from __future__ import annotations

import itertools
import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from market_replay import ReplayServer, SleepRecorder

from equimind.core.errors import EquiMindError, NotFoundError, ParseError, RateLimitedError, SourceError
from equimind.sources.http import (
    HttpPolicy,
    NotReadyError,
    PoliteHttpClient,
    RateLimiter,
    ResponseHook,
    UnreachableError,
    parse_retry_after,
    ratelimit_reset,
    validate_json,
)

TICKERS = "/files/company_tickers.json"


@pytest.fixture()
def server(corpus_dir: Path):  # type: ignore[no-untyped-def]
    with ReplayServer(corpus_dir) as s:
        yield s


def _client(tmp_path: Path, sleep: SleepRecorder, *, retries: int = 3, timeout_s: float = 5.0,
            max_rps: float = 100.0) -> PoliteHttpClient:
    return PoliteHttpClient(source_name="sec_edgar", user_agent="Test Person test@example.com",
                            cache_dir=tmp_path / "cache",
                            policy=HttpPolicy(max_rps=max_rps, timeout_s=timeout_s, retries=retries), sleep=sleep)


def _cache_files(tmp_path: Path) -> list[Path]:
    root = tmp_path / "cache"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_200_is_cached_and_second_call_makes_no_request(server: ReplayServer, tmp_path: Path,
                                                        corpus_dir: Path) -> None:
    client = _client(tmp_path, SleepRecorder())
    first = client.get_json(server.url + TICKERS)
    second = client.get_json(server.url + TICKERS)
    assert first == second == json.loads((corpus_dir / "sec/company_tickers.json").read_bytes())
    assert server.count(TICKERS) == 1
    assert server.requests[0][2]["User-Agent"] == "Test Person test@example.com"
    assert len(_cache_files(tmp_path)) == 1
    client.get_json(server.url + TICKERS, max_age_s=0.0)  # expired -> fetched again
    assert server.count(TICKERS) == 2


def test_429_honours_retry_after_then_succeeds(server: ReplayServer, tmp_path: Path) -> None:
    sleep = SleepRecorder()
    server.fault(TICKERS, "429:3")
    obj = _client(tmp_path, sleep).get_json(server.url + TICKERS)
    assert obj["2"]["ticker"] == "NVDA"
    assert sleep.waits == [3.0]
    assert server.count(TICKERS) == 2


def test_429_until_retries_run_out_raises_rate_limited(server: ReplayServer, tmp_path: Path) -> None:
    sleep = SleepRecorder()
    server.fault(TICKERS, "429:1", "429:1", "429:1")
    with pytest.raises(RateLimitedError, match="429"):
        _client(tmp_path, sleep, retries=2).get_json(server.url + TICKERS)
    assert server.count(TICKERS) == 3
    assert _cache_files(tmp_path) == []


def test_500_then_success_uses_exponential_backoff(server: ReplayServer, tmp_path: Path) -> None:
    sleep = SleepRecorder()
    server.fault(TICKERS, "500", "503")
    obj = _client(tmp_path, sleep).get_json(server.url + TICKERS)
    assert obj["0"]["ticker"] == "MSFT"
    assert sleep.waits == [0.5, 1.0]


def test_403_is_not_retried_and_names_the_fix(server: ReplayServer, tmp_path: Path) -> None:
    server.fault(TICKERS, "403")
    with pytest.raises(SourceError, match="EQUIMIND_SEC_IDENTITY"):
        _client(tmp_path, SleepRecorder()).get_json(server.url + TICKERS)
    assert server.count(TICKERS) == 1
    assert _cache_files(tmp_path) == []


def test_404_raises_not_found(server: ReplayServer, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="404"):
        _client(tmp_path, SleepRecorder()).get_json(server.url + "/submissions/CIK0000000001.json")


def test_timeout_then_success(server: ReplayServer, tmp_path: Path) -> None:
    server.fault(TICKERS, "timeout:1.5")
    obj = _client(tmp_path, SleepRecorder(), timeout_s=0.3).get_json(server.url + TICKERS)
    assert obj["1"]["ticker"] == "AAPL"
    assert server.count(TICKERS) == 2


def test_timeouts_exhausted_raise_source_error_and_store_nothing(server: ReplayServer, tmp_path: Path) -> None:
    server.fault(TICKERS, "timeout:1", "timeout:1")
    with pytest.raises(SourceError, match="timeout"):
        _client(tmp_path, SleepRecorder(), retries=1, timeout_s=0.2).get_json(server.url + TICKERS)
    assert _cache_files(tmp_path) == []


def test_truncated_body_is_retried_and_only_the_complete_body_is_cached(server: ReplayServer, tmp_path: Path,
                                                                       corpus_dir: Path) -> None:
    server.fault(TICKERS, "truncated", "badjson")
    client = _client(tmp_path, SleepRecorder())
    client.get_json(server.url + TICKERS)
    files = _cache_files(tmp_path)
    assert len(files) == 1
    assert files[0].read_bytes() == (corpus_dir / "sec/company_tickers.json").read_bytes()
    assert server.count(TICKERS) == 3


def test_truncated_json_every_time_raises_parse_error_and_leaves_no_file(server: ReplayServer,
                                                                         tmp_path: Path) -> None:
    server.fault(TICKERS, "badjson", "badjson", "badjson")
    with pytest.raises(ParseError, match="truncated"):
        _client(tmp_path, SleepRecorder(), retries=2).get_json(server.url + TICKERS)
    assert _cache_files(tmp_path) == []  # no entry and no leftover temp file


def test_unreachable_host_fails_fast_with_named_error(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleep = SleepRecorder()
    with pytest.raises(UnreachableError, match="--snapshot"):
        _client(tmp_path, sleep, retries=4).get_bytes(f"http://127.0.0.1:{port}/x")
    assert len(sleep.waits) == 1  # two attempts, not five


def test_rate_limiter_spaces_request_starts() -> None:
    now = [0.0]
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        now[0] += s

    lim = RateLimiter(10.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        lim.acquire()
    assert waits == pytest.approx([0.1, 0.1, 0.1, 0.1])


class RequestClock:
    """The limiter's clock and sleep, controlled by the test: time moves by the sleeps the limiter asks for plus a
    fixed ``request_s`` for every request the server has received. Each reading records the virtual time and how
    many requests the server had seen by then."""

    def __init__(self, server: ReplayServer, request_s: float) -> None:
        self.server, self.request_s = server, request_s
        self.slept = 0.0
        self.waits: list[float] = []
        self.readings: list[tuple[float, int]] = []

    def now(self) -> float:
        seen = len(self.server.requests)
        t = self.slept + self.request_s * seen
        self.readings.append((t, seen))
        return t

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.slept += seconds


def test_rate_limit_holds_against_a_real_server(server: ReplayServer, tmp_path: Path) -> None:
    """Nine requests at max_rps=20 through the real client and server, timed by the test's clock (each request takes
    0.01 s of it): the limiter is asked before every request reaches the server, asks to sleep 0.05 - 0.01 s before
    each request after the first, and so spaces request starts 1/20 s apart. The server's own arrival times are not
    compared: on a busy machine they jitter whatever the limiter asked for."""
    clock = RequestClock(server, request_s=0.01)
    client = PoliteHttpClient(source_name="sec_edgar", user_agent="T t@example.com", cache_dir=None,
                              policy=HttpPolicy(max_rps=20.0),
                              limiter=RateLimiter(20.0, clock=clock.now, sleep=clock.sleep))
    for _ in range(9):
        client.get_bytes(server.url + TICKERS)
    assert server.count(TICKERS) == 9 and client.requests_sent == 9
    assert [seen for _, seen in clock.readings] == list(range(9))  # one limiter turn before each request
    assert clock.waits == pytest.approx([0.04] * 8)
    starts = [t + wait for (t, _), wait in zip(clock.readings, [0.0, *clock.waits], strict=True)]
    assert starts == pytest.approx([i * 0.05 for i in range(9)])
    assert all(b - a >= 0.05 - 1e-9 for a, b in itertools.pairwise(starts))


def test_parse_retry_after_accepts_seconds_and_http_dates() -> None:
    now = datetime(2025, 6, 30, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Mon, 30 Jun 2025 12:00:05 GMT", now=now) == pytest.approx(5.0)
    assert parse_retry_after("garbage") is None
    assert parse_retry_after(None) is None


# ---------------------------------------------------------------------------------------- get_response and the hook
def _mock_client(tmp_path: Path, sleep: SleepRecorder, answers: list[httpx.Response], *, retries: int = 3,
                 hook: ResponseHook | None = None) -> tuple[PoliteHttpClient, list[httpx.Request]]:
    """A client whose transport answers ``answers`` in order (recording the requests)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    client = PoliteHttpClient(source_name="api", user_agent="t", cache_dir=tmp_path / "cache",
                              policy=HttpPolicy(max_rps=1000.0, retries=retries), sleep=sleep,
                              transport=httpx.MockTransport(handler), response_hook=hook)
    return client, seen


def test_get_response_returns_headers_and_caches_them_with_the_body(tmp_path: Path) -> None:
    link = '<http://api.test/items?page=2>; rel="next"'
    client, seen = _mock_client(tmp_path, SleepRecorder(), [httpx.Response(200, json=[1], headers={"Link": link})])
    first = client.get_response("http://api.test/items", validate=validate_json)
    second = client.get_response("http://api.test/items", validate=validate_json)
    assert len(seen) == 1 and not first.cached and second.cached
    assert first.status == second.status == 200 and json.loads(second.body) == [1]
    assert second.headers["link"] == link
    assert [p.suffix for p in _cache_files(tmp_path)] == [".resp"]


def test_ok_statuses_and_retry_statuses(tmp_path: Path) -> None:
    sleep = SleepRecorder()
    client, seen = _mock_client(tmp_path, sleep, [httpx.Response(202, json={}), httpx.Response(204),
                                                  *[httpx.Response(202, json={}) for _ in range(3)]], retries=2)
    ok, again = frozenset({200, 204}), frozenset({202})
    empty = client.get_response("http://api.test/a", validate=validate_json, ok_statuses=ok, retry_statuses=again)
    assert empty.status == 204 and empty.body == b"" and sleep.waits == [0.5]
    with pytest.raises(NotReadyError, match="HTTP 202"):
        client.get_response("http://api.test/b", ok_statuses=ok, retry_statuses=again)
    assert len(seen) == 5 and sleep.waits == [0.5, 0.5, 1.0]
    assert client.get_response("http://api.test/a", ok_statuses=ok).cached  # a 204 is cached too


def test_response_hook_can_raise_at_once_or_ask_for_a_retry_after_some_seconds(tmp_path: Path) -> None:
    def hook(resp: httpx.Response, url: str) -> EquiMindError | float | None:
        reset = ratelimit_reset(resp.headers)
        if reset is not None:
            return RateLimitedError(f"spent on {url}; resets {reset:%H:%M:%S} UTC")
        return 2.5 if resp.status_code == 403 and "slow" in resp.text else None

    spent = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000"}
    sleep = SleepRecorder()
    client, seen = _mock_client(tmp_path, sleep, [
        httpx.Response(403, text="slow", headers={"x-ratelimit-remaining": "12"}), httpx.Response(200, json={}),
        httpx.Response(403, json={"message": "API rate limit exceeded"}, headers=spent),
        httpx.Response(403, text="plain"),
    ], hook=hook)
    assert client.get_response("http://api.test/a?token=abc").status == 200
    assert sleep.waits == [2.5]
    with pytest.raises(RateLimitedError, match=r"spent on http://api.test/b\?token=\*\*\*; resets 17:46:40 UTC"):
        client.get_json("http://api.test/b?token=abc")
    with pytest.raises(SourceError, match="HTTP 403"):  # the hook declines: the default handling, no retry
        client.get_bytes("http://api.test/c")
    assert len(seen) == 4 and sleep.waits == [2.5]


def test_ratelimit_reset_reads_only_a_spent_window() -> None:
    assert ratelimit_reset({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1900000000"}) == datetime(
        2030, 3, 17, 17, 46, 40, tzinfo=UTC)
    assert ratelimit_reset({"x-ratelimit-remaining": "5", "x-ratelimit-reset": "1900000000"}) is None
    assert ratelimit_reset({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "soon"}) is None
    assert ratelimit_reset({}) is None
