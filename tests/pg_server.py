"""PostgreSQL for the tests: the server that EQUIMIND_TEST_PG_URL names (.ci/run starts one), else one throwaway
cluster per test session started by scripts/postgres.sh; each test gets a database of its own (``fresh_database`` /
``drop_database``), so tests never see each other's data.

tests/conftest.py builds its ``pg_server`` (session) and ``pg_url`` (per test) fixtures on this module; a fault test
that restarts PostgreSQL calls ``restart(pg_server.pid_file)``, which skips when the server is not one this session
started (EQUIMIND_TEST_PG_URL), or starts a cluster of its own with ``start_server(directory)``.

No PostgreSQL binaries on the machine (and no EQUIMIND_TEST_PG_URL) is a skip that names the fix; any other failure
to start is a test failure carrying the script's stderr. psycopg is imported inside the functions that use it.
"""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "scripts" / "postgres.sh"
URL_ENV = "EQUIMIND_TEST_PG_URL"
NO_BINARIES = 3  # scripts/postgres.sh's exit status when it finds no PostgreSQL binaries
INSTALL_HINT = "apt-get install postgresql (Debian), or set EQUIMIND_TEST_PG_URL to the URL of a running server"
SCRIPT_TIMEOUT = 150  # s; the script's own waits (pg_ctl -t, pg_isready) are 60 s each
ANSWER_TIMEOUT = 10  # s, for EQUIMIND_TEST_PG_URL to answer SELECT 1


def redact(url: str) -> str:
    """The URL with its password replaced by ***, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def run_script(*args: str, timeout: float = SCRIPT_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``bash scripts/postgres.sh ARGS``, output captured."""
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False)


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


@dataclass
class PgServer:
    """A PostgreSQL server for the tests: ``url`` (its superuser on database ``equimind``, or whatever
    EQUIMIND_TEST_PG_URL says) and ``pid_file``, the scripts/postgres.sh pid file of a cluster this session started,
    None for a server named by EQUIMIND_TEST_PG_URL (not ours to restart or stop)."""

    url: str
    pid_file: Path | None
    _stopped: bool = field(default=False, repr=False)

    def restart(self) -> None:
        restart(self.pid_file)

    def stop(self) -> None:
        """Stop and remove the cluster if this session started it; once (also registered with atexit)."""
        if self.pid_file is None or self._stopped:
            return
        self._stopped = True
        run_script("stop", "--pid-file", str(self.pid_file))


def start_server(directory: Path) -> PgServer:
    """Start a cluster of our own with its pid file in ``directory`` (scripts/postgres.sh start): skip when the
    machine has no PostgreSQL binaries, fail with the script's stderr on any other error. The caller stops it
    (``PgServer.stop``); atexit stops it too if the caller could not."""
    directory.mkdir(parents=True, exist_ok=True)
    pid_file = directory / "pg.pid"
    proc: subprocess.CompletedProcess[str] | None
    try:
        proc = run_script("start", "--pid-file", str(pid_file))
    except subprocess.TimeoutExpired:
        proc = None
    if proc is None:
        run_script("stop", "--pid-file", str(pid_file))
        pytest.fail(f"scripts/postgres.sh start did not finish within {SCRIPT_TIMEOUT} s", pytrace=False)
    if proc.returncode == NO_BINARIES:
        pytest.skip(f"no PostgreSQL binaries on this machine ({proc.stderr.strip()}); {INSTALL_HINT}")
    url = last_line(proc.stdout)
    if proc.returncode != 0 or not url.startswith("postgresql://"):
        pytest.fail(
            f"scripts/postgres.sh start failed (exit {proc.returncode}):\n{proc.stderr.strip()}\n{proc.stdout.strip()}",
            pytrace=False,
        )
    server = PgServer(url=url, pid_file=pid_file)
    atexit.register(server.stop)
    return server


def check_answers(url: str, timeout: float = ANSWER_TIMEOUT) -> None:
    """Fail (not skip) unless ``url`` answers ``SELECT 1`` within ``timeout`` seconds."""
    import psycopg

    error: psycopg.Error | None = None
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True) as conn:
            conn.execute(f"SET statement_timeout = {int(timeout * 1000)}")
            conn.execute("SELECT 1").fetchone()
    except psycopg.Error as exc:
        error = exc
    if error is not None:  # failed outside the except block, so the report is the message alone
        pytest.fail(
            f"{URL_ENV}={redact(url)} does not answer SELECT 1 within {timeout:.0f} s: {error}. Start that server, "
            f"or unset {URL_ENV} so that the tests start their own cluster (scripts/postgres.sh)",
            pytrace=False,
        )


def pg_url_or_skip(tmp_path_factory: pytest.TempPathFactory) -> PgServer:
    """For a session fixture: the server of EQUIMIND_TEST_PG_URL when set (checked with SELECT 1), else a new
    cluster in this session's temp dir (stop it with ``.stop()`` at the end). Skips, naming the fix, when there are
    no PostgreSQL binaries."""
    url = os.environ.get(URL_ENV, "").strip()
    if url:
        check_answers(url)
        return PgServer(url=url, pid_file=None)
    return start_server(tmp_path_factory.mktemp("postgres"))


def restart(pid_file: Path | str | None) -> str:
    """Restart the cluster recorded in ``pid_file`` (``pg_ctl restart -m fast``: same data, same port, same URL) and
    return its URL once it answers again. Skips when there is no pid file: the server came from EQUIMIND_TEST_PG_URL,
    and restarting a server others use is not this test's to do."""
    if pid_file is None:
        pytest.skip(
            f"this test restarts PostgreSQL, so it needs a server this test session started itself; {URL_ENV} names "
            "an external one (unset it, or start one with pg_server.start_server)"
        )
    proc = run_script("restart", "--pid-file", str(pid_file))
    if proc.returncode != 0:
        pytest.fail(
            f"scripts/postgres.sh restart failed (exit {proc.returncode}):\n{proc.stderr.strip()}", pytrace=False
        )
    return last_line(proc.stdout)


def with_database(url: str, name: str) -> str:
    """``url`` pointed at database ``name`` (a postgresql:// URL stays one; a key=value conninfo gets dbname=)."""
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, dbname=name)


def database_name(url: str) -> str:
    """The database a URL or conninfo names."""
    from psycopg.conninfo import conninfo_to_dict

    return str(conninfo_to_dict(url).get("dbname") or "")


def _admin(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=ANSWER_TIMEOUT)


def fresh_database(url: str) -> str:
    """Create a new, empty database ``t_<uuid>`` on the server of ``url`` and return ``url`` pointed at it."""
    import psycopg
    from psycopg import sql

    name = f"t_{uuid.uuid4().hex}"
    try:
        with _admin(url) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise RuntimeError(
            f"could not create a test database on {redact(url)}: {exc} (the user needs the CREATEDB privilege)"
        ) from exc
    return with_database(url, name)


def drop_database(url: str, name: str) -> None:
    """Drop database ``name`` on the server of ``url`` (a URL of another database on it), closing its sessions."""
    from psycopg import sql

    with _admin(url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
