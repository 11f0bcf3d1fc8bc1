"""A real local HTTP server (127.0.0.1, port 0, a thread) speaking the Greenhouse Job Board API and the Lever
Postings API in their documented response shapes, with injectable faults, so ``equimind.sources.jobs`` is exercised
through its real HTTP code.

Routes:
  GET /v1/boards/<board>/jobs[?content=true]  → {"jobs": [...], "meta": {"total": n}} (the whole board, no paging;
      ``content`` is served only with content=true, HTML-escaped as Greenhouse does); unknown board → 404
  GET /v0/postings/<company>?mode=json&skip=N&limit=M → a JSON list (the slice [skip, skip+limit)); unknown company
      → 404 {"ok": false, "error": "Document not found"}; ``lever_ignore_skip`` makes it always serve the first page

Faults are queued per path and consumed one per request: "403", "404", "500", "503", "429" / "429:<seconds>"
(Retry-After), "badjson" (a complete 200 whose body is cut JSON). ``raw`` serves a fixed body for a path (a
response of the wrong shape). The payload builders below are test fixtures in the APIs' formats, not recorded data.
"""

from __future__ import annotations

import contextlib
import html
import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from loopback_server import LoopbackServer


def greenhouse_job(job_id: int, title: str, *, department: str | None = "Engineering",
                   location: str | None = "Santa Clara, CA", first_published: str | None = "2025-07-01T09:00:00-04:00",
                   updated_at: str = "2025-08-20T10:01:02-04:00", content_html: str = "<p>Build things.</p>",
                   drop_first_published: bool = False) -> dict[str, Any]:
    """One ``jobs[]`` entry as Greenhouse serves it with content=true (``content`` HTML-escaped)."""
    job: dict[str, Any] = {
        "id": job_id, "internal_job_id": job_id // 10, "title": title, "updated_at": updated_at,
        "requisition_id": f"R{job_id}", "location": {"name": location} if location is not None else None,
        "absolute_url": f"https://boards.greenhouse.io/acme/jobs/{job_id}", "content": html.escape(content_html),
        "departments": ([{"id": 1, "name": department, "parent_id": None, "child_ids": []}]
                        if department is not None else []),
        "offices": [{"id": 2, "name": "US", "location": location or ""}], "metadata": None,
        "first_published": first_published,
    }
    if drop_first_published:
        del job["first_published"]
    return job


def lever_posting(posting_id: str, title: str, *, department: str | None = "R&D", team: str | None = "Firmware",
                  location: str = "Austin, TX", created: datetime | None = None,
                  description: str = "Write firmware.") -> dict[str, Any]:
    """One posting as Lever serves it with mode=json (``createdAt`` in ms since the epoch)."""
    when = created or datetime(2024, 7, 1, tzinfo=UTC)
    cats: dict[str, Any] = {"commitment": "Full-time", "location": location, "allLocations": [location]}
    if department is not None:
        cats["department"] = department
    if team is not None:
        cats["team"] = team
    return {"id": posting_id, "text": title, "categories": cats, "createdAt": int(when.timestamp() * 1000),
            "hostedUrl": f"https://jobs.lever.co/acme/{posting_id}",
            "applyUrl": f"https://jobs.lever.co/acme/{posting_id}/apply", "descriptionPlain": description,
            "additionalPlain": "Equal opportunity employer.", "workplaceType": "onsite"}


class FakeJobBoards(LoopbackServer):
    """Greenhouse boards and Lever companies served from dicts the test fills in."""

    def __init__(self) -> None:
        self.greenhouse: dict[str, list[dict[str, Any]]] = {}
        self.lever: dict[str, list[dict[str, Any]]] = {}
        self.lever_ignore_skip = False
        self.raw: dict[str, bytes] = {}
        self.requests: list[tuple[str, dict[str, str], dict[str, str]]] = []  # path, query, headers
        self._serve(self._handler())

    def count(self, path: str) -> int:
        return sum(1 for p, _, _ in self.requests if p == path)

    # ---------------------------------------------------------------------------------------------- routing
    def resolve(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        """(status, JSON body) for a request."""
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if len(parts) == 4 and parts[:2] == ["v1", "boards"] and parts[3] == "jobs":
            jobs = self.greenhouse.get(parts[2])
            if jobs is None:
                return 404, {"status": 404, "error": "Job board not found"}
            served = [j if query.get("content") == "true" else {k: v for k, v in j.items() if k != "content"}
                      for j in jobs]
            return 200, {"jobs": served, "meta": {"total": len(served)}}
        if len(parts) == 3 and parts[:2] == ["v0", "postings"]:
            postings = self.lever.get(parts[2])
            if postings is None:
                return 404, {"ok": False, "error": "Document not found"}
            skip = 0 if self.lever_ignore_skip else int(query.get("skip", "0"))
            limit = int(query["limit"]) if "limit" in query else len(postings)
            return 200, postings[skip: skip + limit]
        return 404, {"ok": False, "error": "Document not found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                path = parts.path
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with server._lock:
                    server.requests.append((path, query, dict(self.headers.items())))
                    fault = server.faults[path].popleft() if server.faults[path] else None
                if fault is not None and fault != "badjson":
                    kind, _, arg = fault.partition(":")
                    headers = {"Retry-After": arg} if kind == "429" and arg else {}
                    self._send(int(kind), b'{"error": "fault"}', headers)
                    return
                if path in server.raw:
                    self._send(200, server.raw[path])
                    return
                status, obj = server.resolve(path, query)
                body = json.dumps(obj).encode()
                self._send(status, body[: len(body) // 2] if fault == "badjson" else body)

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

        return Handler


class SleepRecorder:
    """Injected instead of time.sleep: records the waits and does not sleep."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
