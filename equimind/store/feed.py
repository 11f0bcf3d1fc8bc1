"""A host's search indexes following a shared PostgreSQL docstore's change feed.

Every change of the indexed set commits a new feed position and ``NOTIFY equimind_feed, '<position>'``
(``docstore_pg``). ``FeedFollower`` runs one daemon thread per serving process:

1. ``LISTEN equimind_feed`` on a connection of its own (not the pool's: a listening connection must stay open);
2. wait for a notification, or ``poll_s`` seconds (the fallback: a missed notification, a listener that lost its
   connection, a server restart), whichever comes first;
3. bring the host's ``LocalIndexes`` to the store's position (``current()``: reuse a saved index that matches, else
   rebuild from one snapshot of the indexed chunks).

While it rebuilds, searches on the host serve the indexes they have (``LocalIndexes.serve_while_rebuilding``) and
report ``behind``; a host never serves chunks it has not indexed, since a document enters an index only from a
snapshot in which it was ``indexed``, and hydration re-checks the status. Errors (the server down) are logged and
retried with a back-off; the follower never dies while the process serves.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass

from equimind.store.docstore_pg import FEED_CHANNEL, PgDocStore
from equimind.store.local_indexes import LocalIndexes

log = logging.getLogger(__name__)


@dataclass
class FollowerStats:
    wakeups_notify: int = 0
    wakeups_poll: int = 0
    refreshes: int = 0
    errors: int = 0
    last_error: str | None = None
    listening: bool = False


class FeedFollower:
    """Keeps ``indexes`` at the feed position of ``docstore`` (see the module docstring)."""

    def __init__(self, docstore: PgDocStore, indexes: LocalIndexes, poll_s: float = 2.0) -> None:
        self.docstore = docstore
        self.indexes = indexes
        self.poll_s = poll_s
        self.stats = FollowerStats()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: object | None = None

    def start(self) -> FeedFollower:
        self.indexes.serve_while_rebuilding = True
        self._thread = threading.Thread(target=self._run, name="equimind-feed", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.cancel_safe()  # type: ignore[attr-defined]  # wakes notifies()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _refresh(self) -> None:
        try:
            _, rebuilt = self.indexes.current()
        except Exception as exc:  # the store is down: the next wake-up tries again
            self.stats.errors += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("feed follower could not refresh the search indexes: %s", exc)
            return
        if rebuilt:
            self.stats.refreshes += 1

    def _run(self) -> None:
        import psycopg

        backoff = 0.5
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.docstore.url, autocommit=True, connect_timeout=5) as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {FEED_CHANNEL}")
                    self.stats.listening = True
                    backoff = 0.5
                    self._refresh()  # whatever happened while not listening
                    while not self._stop.is_set():
                        woke = False
                        for _ in conn.notifies(timeout=self.poll_s, stop_after=1):
                            woke = True
                        if self._stop.is_set():
                            break
                        if woke:
                            self.stats.wakeups_notify += 1
                        else:
                            self.stats.wakeups_poll += 1
                        self._refresh()
            except Exception as exc:
                self.stats.listening = False
                if self._stop.is_set():
                    break
                self.stats.errors += 1
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("feed follower lost its connection (%s); polling, reconnecting in %.1f s", exc, backoff)
                self._refresh()  # the poll fallback (fails quietly while the server is down)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 10.0)
            finally:
                self._conn = None
        self.stats.listening = False

    def wait_until(self, position: int, timeout_s: float) -> bool:
        """Block until the host's indexes reach ``position`` (tests and benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            served = self.indexes.served_position
            if served is not None and served >= position:
                return True
            time.sleep(0.02)
        return False
