"""A loopback GitHub REST API (127.0.0.1, port 0, a ThreadingHTTPServer thread) serving the real API's shapes and
headers for the two calls ``equimind.sources.github`` makes, with injectable faults. Nothing else is contacted.

Routes:
  GET /orgs/{org}/repos?type=public&sort=pushed&per_page=N&page=P  → a JSON list of repository objects, sorted by
      ``pushed_at`` (newest first), at most ``min(N, max_per_page)`` a page, with a ``Link`` header (``rel="next"``,
      ``"last"``, ``"prev"``, ``"first"``; absolute URLs on this server, as GitHub sends them); an unknown
      organisation → 404 ``{"message": "Not Found", ...}``
  GET /repos/{owner}/{repo}/stats/contributors → 200 list of ``{"author": {"login"}, "total", "weeks": [{"w", "a",
      "d", "c"}]}``; 204 for an empty repository (``stats[full_name] = None``); 202 ``{}`` while "computing"
      (``pending[full_name]`` = how many 202s before the 200; -1 = forever)

Every response carries GitHub's ``x-ratelimit-*`` headers; ``limit`` requests are allowed (60 without a token, as
GitHub), then a 403 with ``x-ratelimit-remaining: 0`` and the reset epoch (the primary limit). Faults queued per path
(consumed one per request): "429:<s>" / "403:<s>" (secondary limit with Retry-After), "403" (a plain 403), "500".
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from loopback_server import LoopbackServer

RESET_EPOCH = 1_900_000_000  # 2030-03-17 17:46:40 UTC


def repo(org: str, name: str, *, pushed: str = "2025-06-01T00:00:00Z", created: str = "2019-03-01T00:00:00Z",
         fork: bool = False, archived: bool = False, stars: int = 10, language: str | None = "C++") -> dict[str, Any]:
    """A repository object as ``GET /orgs/{org}/repos`` returns it (the fields used, plus a few real ones)."""
    return {"id": abs(hash((org, name))) % 10**9, "name": name, "full_name": f"{org}/{name}", "private": False,
            "owner": {"login": org, "type": "Organization"}, "html_url": f"https://github.com/{org}/{name}",
            "fork": fork, "archived": archived, "disabled": False, "created_at": created,
            "updated_at": pushed, "pushed_at": pushed, "stargazers_count": stars, "watchers_count": stars,
            "language": language, "default_branch": "main", "visibility": "public"}


def week_epoch(start: date) -> int:
    """Unix seconds of a week start (a Sunday, 00:00 UTC), as in ``weeks[].w``."""
    assert start.weekday() == 6, f"{start} is not a Sunday"
    return int(datetime(start.year, start.month, start.day, tzinfo=UTC).timestamp())


def contributors(per_author: dict[str, dict[date, int]], *, first: date, last: date) -> list[dict[str, Any]]:
    """A ``stats/contributors`` body: every author gets every week from ``first`` to ``last`` (Sundays), commits
    from ``per_author[login][week start]`` (0 elsewhere), as GitHub fills them."""
    out = []
    for login, commits in per_author.items():
        weeks = []
        day = first
        while day <= last:
            c = commits.get(day, 0)
            weeks.append({"w": week_epoch(day), "a": 10 * c, "d": 3 * c, "c": c})
            day += timedelta(days=7)
        out.append({"author": {"login": login, "id": abs(hash(login)) % 10**6, "type": "User"},
                    "total": sum(w["c"] for w in weeks), "weeks": weeks})
    return out


class FakeGitHub(LoopbackServer):
    def __init__(self, *, limit: int = 60, max_per_page: int = 100) -> None:
        self.orgs: dict[str, list[dict[str, Any]]] = {}
        self.stats: dict[str, Any] = {}  # full_name -> body (list), or None for 204
        self.pending: dict[str, int] = {}  # full_name -> 202s before the 200 (-1 forever)
        self.limit = limit
        self.max_per_page = max_per_page
        self.requests: list[tuple[str, dict[str, str], dict[str, str]]] = []  # (path, query, headers)
        self._serve(self._handler())

    def count(self, path: str) -> int:
        return sum(1 for p, _, _ in self.requests if p == path)

    def paths(self) -> list[str]:
        return [p for p, _, _ in self.requests]

    # ---------------------------------------------------------------------------------------------- answers
    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "orgs" and parts[2] == "repos":
            return self._repos(parts[1], path, query)
        if len(parts) == 5 and parts[0] == "repos" and parts[3:] == ["stats", "contributors"]:
            full = f"{parts[1]}/{parts[2]}"
            if full not in self.stats:
                return 404, _not_found(), {}
            left = self.pending.get(full, 0)
            if left != 0:
                self.pending[full] = left - 1 if left > 0 else left
                return 202, {}, {}
            body = self.stats[full]
            return (204, None, {}) if body is None else (200, body, {})
        return 404, _not_found(), {}

    def _repos(self, org: str, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        if org not in self.orgs:
            return 404, _not_found(), {}
        per_page = min(int(query.get("per_page", "30")), self.max_per_page)
        page = int(query.get("page", "1"))
        repos = sorted(self.orgs[org], key=lambda r: str(r.get("pushed_at") or "") if isinstance(r, dict) else "",
                       reverse=True)  # a malformed entry (a test's) sorts last
        last = max(1, -(-len(repos) // per_page))
        body = repos[(page - 1) * per_page: page * per_page]

        def link(p: int) -> str:
            return f"{self.url}{path}?{urlencode({**query, 'page': str(p)})}"

        rels = []
        if page < last:
            rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
        if page > 1:
            rels += [f'<{link(page - 1)}>; rel="prev"', f'<{link(1)}>; rel="first"']
        return 200, body, {"Link": ", ".join(rels)} if rels else {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with server._lock:
                    server.requests.append((parts.path, query, dict(self.headers.items())))
                    fault = server.faults[parts.path].popleft() if server.faults[parts.path] else None
                    used = len(server.requests)
                remaining = max(0, server.limit - used)
                rate = {"x-ratelimit-limit": str(server.limit), "x-ratelimit-remaining": str(remaining),
                        "x-ratelimit-reset": str(RESET_EPOCH), "x-ratelimit-used": str(min(used, server.limit)),
                        "x-ratelimit-resource": "core"}
                if used > server.limit:
                    self._send(403, {"message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                                                "Authenticated requests get a higher rate limit. Check out the "
                                                "documentation for more details.)",
                                     "documentation_url": "https://docs.github.com/rest/overview/rate-limits"},
                               {**rate, "x-ratelimit-remaining": "0"})
                    return
                if fault is not None:
                    kind, _, arg = fault.partition(":")
                    msg = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before "
                                      "you try again.",
                           "documentation_url": "https://docs.github.com/rest/overview/rate-limits"}
                    if kind in ("429", "403") and arg:
                        self._send(int(kind), msg, {**rate, "Retry-After": arg})
                        return
                    if kind == "403":
                        self._send(403, {"message": "Resource not accessible by integration"}, rate)
                        return
                    if kind == "500":
                        self._send(500, {"message": "Server Error"}, rate)
                        return
                status, body, headers = server.answer(parts.path, query)
                self._send(status, body, {**rate, **headers})

            def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
                raw = b"" if body is None else json.dumps(body).encode("utf-8")
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
                self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)

        return Handler


def _not_found() -> dict[str, str]:
    return {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
