"""The part every loopback fake shares: a real HTTP server on 127.0.0.1 (port 0), served by a daemon thread, started
by ``with`` and stopped after it, with faults queued per path (each fake says which faults it understands)."""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    faults: dict[str, deque[str]]

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        """Bind the server (call last in ``__init__``: the handler reads the fake's attributes)."""
        self.faults = defaultdict(deque)
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fault(self, path: str, *faults: str) -> None:
        self.faults[path].extend(faults)
