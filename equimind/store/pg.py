"""PostgreSQL plumbing shared by the stores that can live there (``EQUIMIND_DOCSTORE_URL=postgresql://…``).

* **One pool per URL and process** (``psycopg_pool.ConnectionPool``, autocommit connections; transactions are
  explicit ``BEGIN``/``COMMIT``). Every connection is checked when it is taken from the pool, so after a server
  restart the dead ones are replaced and requests recover without restarting EquiMind.
* **The store's SQL is written once**, with SQLite's ``?`` placeholders; ``PgConnection`` rewrites them to psycopg's
  ``%s`` (a statement holding a literal ``%`` or ``?`` must not be run through it). Rows answer by position and by
  column name, like ``sqlite3.Row``.
* **Errors**: a server that cannot be reached, or a pool that cannot hand out a connection in time, raises
  ``StoreUnavailable`` naming the store (host, port, database: never the password), which the API answers with 503.
* **Migrations** (``pg_migrations/NNNN_name.up.sql`` and ``.down.sql``) run under an advisory lock, so two hosts
  starting at once apply each exactly once; ``schema_migrations`` records what is applied.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from equimind.core.errors import ConfigError, StoreUnavailable

log = logging.getLogger(__name__)

MIGRATION_LOCK = 0x45514D  # pg_advisory_lock key: "EQM"
_PLACEHOLDER = re.compile(r"\?")
_MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$")


def redacted(url: str) -> str:
    """``host:port/database`` of a PostgreSQL URL: what messages name (never the password)."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path or '/'}"


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and urlsplit(str(url)).scheme in ("postgresql", "postgres")


class Row(tuple[Any, ...]):
    """A result row readable by position and by column name (``row[0]``, ``row["id"]``), like ``sqlite3.Row``."""

    _names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    names = {c.name: i for i, c in enumerate(cursor.description or ())}
    return lambda values: Row(values, names)


def translate(sql: str) -> str:
    return _PLACEHOLDER.sub("%s", sql)


class PgConnection:
    """A psycopg connection that runs the stores' ``?``-style SQL (the subset of ``sqlite3.Connection`` they use)."""

    def __init__(self, conn: Any, where: str) -> None:
        self.raw = conn
        self.where = where
        self.bumped: int | None = None  # the feed position this transaction advanced to (docstore_pg._bump)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with unavailable_as_error(self.where):
            return self.raw.execute(translate(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run ``sql`` once per row (pipelined by psycopg); the number of rows it changed."""
        if not rows:
            return 0
        with unavailable_as_error(self.where), self.raw.cursor() as cur:
            cur.executemany(translate(sql), [tuple(r) for r in rows])
            return int(cur.rowcount if cur.rowcount is not None and cur.rowcount >= 0 else 0)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status != TransactionStatus.IDLE)

    @contextlib.contextmanager
    def transaction(self, begin: str = "BEGIN") -> Iterator[PgConnection]:
        """``begin`` … ``COMMIT``; ``ROLLBACK`` (itself allowed to fail: the server may be gone) on any error."""
        self.execute(begin)
        try:
            yield self
        except BaseException:
            with contextlib.suppress(Exception):
                self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")


@contextlib.contextmanager
def unavailable_as_error(where: str) -> Iterator[None]:
    """Turn "the server is not there" into ``StoreUnavailable`` naming the store; other errors pass unchanged."""
    import psycopg
    import psycopg_pool

    try:
        yield
    except psycopg_pool.PoolTimeout as exc:
        raise StoreUnavailable(
            f"the PostgreSQL store at {where} is busy or unavailable: no connection could be had within the pool's "
            f"timeout ({exc}); requests recover once it answers — check the server, or raise the pool size "
            "(EQUIMIND_DOCSTORE_POOL)") from exc
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreUnavailable(
            f"the PostgreSQL store at {where} is unavailable ({first}); requests recover once it is back — check "
            "the server (scripts/postgres.sh start, or your database host) and EQUIMIND_DOCSTORE_URL") from exc


_POOLS: dict[tuple[str, int], Any] = {}
_POOLS_LOCK = threading.Lock()


def _env_number(name: str, default: str, kind: type[int] | type[float]) -> float:
    try:
        value = kind(os.environ.get(name, default))
    except ValueError as exc:
        raise ConfigError(f"{name} must be a positive number, got {os.environ[name]!r}") from exc
    if value <= 0:
        raise ConfigError(f"{name} must be a positive number, got {value}")
    return value


def pool_for(url: str, max_size: int | None = None, timeout_s: float | None = None) -> Any:
    """The process's pool for ``url``, created on first use, when the database is also migrated to the newest schema
    (``migrate``: the docstore's, the memory's and the audit anchors' tables): ``max_size`` connections at most (default
    ``EQUIMIND_DOCSTORE_POOL`` or 16); a request waits ``timeout_s`` for one (default ``EQUIMIND_DOCSTORE_TIMEOUT_S``
    or 5 s) before it is answered "store unavailable" — while the server is down, requests fail within that wait
    instead of hanging."""
    if max_size is None:
        max_size = int(_env_number("EQUIMIND_DOCSTORE_POOL", "16", int))
    if timeout_s is None:
        timeout_s = _env_number("EQUIMIND_DOCSTORE_TIMEOUT_S", "5", float)
    from psycopg_pool import ConnectionPool

    key = (url, os.getpid())  # a forked worker must not reuse its parent's sockets
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = ConnectionPool(
                url, min_size=1, max_size=max_size, timeout=timeout_s, open=False,
                kwargs={"autocommit": True, "row_factory": _row_factory, "connect_timeout": 5},
                check=ConnectionPool.check_connection, name=f"equimind-{redacted(url)}",
                reconnect_timeout=60.0,
            )
            where = redacted(url)
            with unavailable_as_error(where):
                pool.open(wait=True, timeout=timeout_s)
            with unavailable_as_error(where), pool.connection() as raw:  # once per pool: every store's tables
                done = migrate(PgConnection(raw, where))
            if done:
                log.info("PostgreSQL store %s: %s", where, ", ".join(done))
            _POOLS[key] = pool
        return pool


def close_pool(url: str) -> None:
    """Close this process's pool for ``url`` (before its database is dropped, say)."""
    with _POOLS_LOCK:
        pool = _POOLS.pop((url, os.getpid()), None)
    if pool is not None:
        with contextlib.suppress(Exception):
            pool.close()


def close_pools() -> None:
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            with contextlib.suppress(Exception):
                pool.close()
        _POOLS.clear()


# ------------------------------------------------------------------------------------------------ migrations
@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: str
    down: str


def migrations() -> list[Migration]:
    """The versioned SQL files shipped in ``equimind/store/pg_migrations``, in order."""
    found: dict[int, dict[str, str]] = {}
    names: dict[int, str] = {}
    for entry in resources.files("equimind.store").joinpath("pg_migrations").iterdir():
        m = _MIGRATION_FILE.match(entry.name)
        if m:
            version = int(m.group(1))
            found.setdefault(version, {})[m.group(3)] = entry.read_text(encoding="utf-8")
            names[version] = m.group(2)
    out = []
    for version in sorted(found):
        sides = found[version]
        if set(sides) != {"up", "down"}:
            raise ConfigError(f"migration {version:04d} lacks its {'down' if 'up' in sides else 'up'} file")
        out.append(Migration(version, names[version], sides["up"], sides["down"]))
    return out


def applied_versions(conn: PgConnection) -> list[int]:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
    return [int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def migrate(conn: PgConnection, target: int | None = None) -> list[str]:
    """Apply (or, when ``target`` is below the current version, revert) migrations to reach ``target`` (default:
    the newest). Each step runs in its own transaction under the advisory lock. Returns what was done."""
    known = migrations()
    newest = known[-1].version if known else 0
    target = newest if target is None else target
    if target > newest or target < 0:
        raise ConfigError(f"no migration {target}; versions are 0..{newest}")
    done: list[str] = []
    conn.execute("SELECT pg_advisory_lock(?)", (MIGRATION_LOCK,))
    try:
        have = set(applied_versions(conn))
        if have and max(have) > newest:
            raise ConfigError(f"the PostgreSQL store at {conn.where} has schema version {max(have)}, newer than this "
                              f"EquiMind knows ({newest}): upgrade EquiMind")
        for m in known:
            if m.version <= target and m.version not in have:
                _step(conn, m.up, "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (m.version, m.name))
                done.append(f"up {m.version:04d}_{m.name}")
        for m in reversed(known):
            if m.version > target and m.version in have:
                _step(conn, m.down, "DELETE FROM schema_migrations WHERE version = ? AND name = ?", (m.version, m.name))
                done.append(f"down {m.version:04d}_{m.name}")
    finally:
        conn.execute("SELECT pg_advisory_unlock(?)", (MIGRATION_LOCK,))
    return done


def _step(conn: PgConnection, script: str, record: str, args: tuple[Any, ...]) -> None:
    with conn.transaction():
        conn.raw.execute(script)  # a whole file, no parameters (may hold literal '%' and '?')
        conn.execute(record, args)
