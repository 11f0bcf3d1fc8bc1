"""A real local HTTP server (127.0.0.1, a thread) that replays recorded SEC responses at the real URL paths, with
injectable faults, so the live clients are exercised through their real HTTP code.

Routes (the recorded corpus in ../shared/corpus):
  /files/company_tickers.json, /submissions/<name>.json, /api/xbrl/companyfacts/CIK##########.json,
  /Archives/edgar/data/<cik>/<accession without dashes>/<primary document>  (via sec/filings/manifest.csv)
plus any extra path → (content type, body), or a function of the query string, given by the test.

Faults are queued per path and consumed one per request: "403", "404", "500", "429" / "429:<seconds>"
(Retry-After), "timeout:<seconds>" (sleep before answering), "truncated" (Content-Length promises more than is
sent, then the connection closes), "badjson" (a complete response whose body is cut JSON).
"""

from __future__ import annotations

import contextlib
import csv
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from loopback_server import LoopbackServer

Route = tuple[str, bytes] | Callable[[dict[str, str]], tuple[str, bytes] | None]


class ReplayServer(LoopbackServer):
    def __init__(self, corpus_dir: Path | None = None) -> None:
        self.corpus = corpus_dir
        self.extra: dict[str, Route] = {}  # path -> (content type, body), or a function of the query
        self.requests: list[tuple[float, str, dict[str, str]]] = []
        self.queries: list[tuple[str, dict[str, str]]] = []
        self._serve(self._handler())

    def count(self, path: str) -> int:
        return sum(1 for _, p, _ in self.requests if p == path)

    # ---------------------------------------------------------------------------------------------- routing
    def resolve(self, path: str, query: dict[str, str] | None = None) -> tuple[str, bytes] | None:
        if path in self.extra:
            route = self.extra[path]
            return route(query or {}) if callable(route) else route
        if self.corpus is None:
            return None
        sec = self.corpus / "sec"
        if path == "/files/company_tickers.json":
            return _json(sec / "company_tickers.json")
        if path.startswith("/submissions/"):
            return _json(sec / "submissions" / Path(path).name)
        if path.startswith("/api/xbrl/companyfacts/"):
            return _json(sec / "companyfacts" / Path(path).name)
        if path.startswith("/Archives/edgar/data/"):
            parts = path.split("/")
            acc_nodash, primary = parts[-2], parts[-1]
            with (sec / "filings" / "manifest.csv").open(newline="") as f:
                for row in csv.DictReader(f):
                    if row["accession_number"].replace("-", "") == acc_nodash and row["primary_document"] == primary:
                        return "text/html", (sec / "filings" / row["path"]).read_bytes()
        return None

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
                    server.requests.append((time.monotonic(), path, dict(self.headers.items())))
                    server.queries.append((path, query))
                    fault = server.faults[path].popleft() if server.faults[path] else None
                if fault is not None and self._fault(fault):
                    return
                found = server.resolve(path, query)
                if found is None:
                    self._send(404, b"not found", "text/plain")
                    return
                ctype, body = found
                if fault == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if fault == "badjson":
                    body = body[: len(body) // 2]
                self._send(200, body, ctype)

            def _fault(self, fault: str) -> bool:
                """True when the fault already answered the request."""
                kind, _, arg = fault.partition(":")
                if kind in ("403", "404", "500", "503"):
                    self._send(int(kind), b"fault", "text/plain")
                    return True
                if kind == "429":
                    self._send(429, b"slow down", "text/plain", {"Retry-After": arg} if arg else None)
                    return True
                if kind == "timeout":
                    time.sleep(float(arg or 2))
                return False

            def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

        return Handler


def _json(path: Path) -> tuple[str, bytes] | None:
    return ("application/json", path.read_bytes()) if path.is_file() else None


class SleepRecorder:
    """Injected instead of time.sleep: records the waits, sleeps only a token amount."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
