"""scripts/postgres.sh for real: `start` makes a loopback-only, password-protected cluster and prints its URL last,
`restart` keeps the data, `stop` removes everything it made; plus the helpers of tests/pg_server.py.

One cluster for the module (start-up takes ~2 s: initdb, pg_ctl start, CREATE DATABASE), and one more for the test of
`stop`. Skips only when the machine has no PostgreSQL binaries (the skip names `apt-get install postgresql`)."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from pg_server import (
    INSTALL_HINT,
    NO_BINARIES,
    SCRIPT,
    database_name,
    drop_database,
    fresh_database,
    last_line,
    start_server,
)

URL_RE = re.compile(r"^postgresql://equimind:([0-9a-f]{16,})@127\.0\.0\.1:(\d+)/equimind$")
ENV_KEYS = {"PID", "URL", "DATA_DIR", "LOG", "PGPORT", "BINDIR", "RUN_AS", "REMOVE_DIR"}


def script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=150, env=env,
                          check=False)


def read_env(pid_file: Path) -> dict[str, str]:
    values = {}
    for line in Path(f"{pid_file}.env").read_text().splitlines():
        key, _, value = line.partition("=")
        values[key] = value.strip("'")
    return values


def start_or_skip(pid_file: Path) -> str:
    proc = script("start", "--pid-file", str(pid_file))
    if proc.returncode == NO_BINARIES:
        pytest.skip(f"no PostgreSQL binaries ({proc.stderr.strip()}); {INSTALL_HINT}")
    assert proc.returncode == 0, proc.stderr
    return last_line(proc.stdout)


@dataclass
class Cluster:
    url: str
    pid_file: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    pid_file = tmp_path_factory.mktemp("pg-script") / "pg.pid"
    url = start_or_skip(pid_file)
    yield Cluster(url=url, pid_file=pid_file)
    script("stop", "--pid-file", str(pid_file))


def connect(url: str, **kwargs):  # type: ignore[no-untyped-def]
    return psycopg.connect(url, connect_timeout=10, **kwargs)


def test_start_prints_a_loopback_url_that_connects_with_its_password(cluster: Cluster) -> None:
    match = URL_RE.match(cluster.url)
    assert match, cluster.url
    env = read_env(cluster.pid_file)
    assert set(env) >= ENV_KEYS, env
    assert env["URL"] == cluster.url and env["PGPORT"] == match.group(2)
    assert stat.S_IMODE(os.stat(f"{cluster.pid_file}.env").st_mode) == 0o600  # it holds the password
    pid = cluster.pid_file.read_text().strip()
    assert pid == env["PID"] == (Path(env["DATA_DIR"]) / "postmaster.pid").read_text().splitlines()[0]
    if os.geteuid() == 0:  # initdb refuses root: the server runs as an unprivileged user
        uid = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
        assert uid.split()[1] != "0" and env["RUN_AS"]
    with connect(cluster.url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        socket_dir = conn.execute("SHOW unix_socket_directories").fetchone()[0]
        assert socket_dir != "/var/run/postgresql" and Path(env["DATA_DIR"]).parent == Path(socket_dir)
        assert conn.execute("SHOW fsync").fetchone() == ("on",)
        assert conn.execute("SELECT current_user, current_database()").fetchone() == ("equimind", "equimind")
        assert conn.execute("SHOW server_encoding").fetchone() == ("UTF8",)
    assert last_line(script("url", "--pid-file", str(cluster.pid_file)).stdout) == cluster.url
    again = script("start", "--pid-file", str(cluster.pid_file))  # the same pid file: refused, not a second cluster
    assert again.returncode != 0 and "already running" in again.stderr
    assert match.group(1) not in again.stderr  # the message does not print the password


def test_connections_without_the_password_are_refused(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    port = URL_RE.match(cluster.url).group(2)  # type: ignore[union-attr]
    socket_dir = str(Path(read_env(cluster.pid_file)["DATA_DIR"]).parent)
    attempts = [
        f"postgresql://equimind@127.0.0.1:{port}/equimind",  # no password over TCP
        f"postgresql://equimind:wrong@127.0.0.1:{port}/equimind",  # a wrong one
        f"postgresql://postgres@127.0.0.1:{port}/postgres",  # the usual superuser name does not get in either
    ]
    for url in attempts:
        with pytest.raises(psycopg.OperationalError, match="password"):
            connect(url, passfile=os.devnull)
    # The unix socket asks for the password too (scram-sha-256 for local connections, not peer/trust).
    with pytest.raises(psycopg.OperationalError, match="password"):
        connect(f"host={socket_dir} port={port} user=equimind dbname=equimind", passfile=os.devnull)


def test_restart_keeps_the_data_and_the_url(cluster: Cluster) -> None:
    with connect(cluster.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (42)")
    old_pid = cluster.pid_file.read_text().strip()
    proc = script("restart", "--pid-file", str(cluster.pid_file))
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc.stdout) == cluster.url
    env = read_env(cluster.pid_file)
    new_pid = cluster.pid_file.read_text().strip()
    assert new_pid != old_pid and new_pid == env["PID"]
    assert new_pid == (Path(env["DATA_DIR"]) / "postmaster.pid").read_text().splitlines()[0]
    with connect(cluster.url) as conn:
        assert conn.execute("SELECT x FROM kept").fetchall() == [(42,)]


def test_fresh_database_is_empty_and_its_own(cluster: Cluster) -> None:
    first, second = fresh_database(cluster.url), fresh_database(cluster.url)
    try:
        assert database_name(first) != database_name(second)
        assert database_name(first).startswith("t_")
        with connect(first, autocommit=True) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == (database_name(first),)
            conn.execute("CREATE TABLE mine (x int)")
        with connect(second) as conn:
            assert conn.execute("SELECT to_regclass('mine')").fetchone() == (None,)
        held = connect(first)  # an open session does not stop the drop (WITH (FORCE))
    finally:
        drop_database(cluster.url, database_name(first))
        drop_database(cluster.url, database_name(second))
    held.close()
    with connect(cluster.url) as conn:
        names = {row[0] for row in conn.execute("SELECT datname FROM pg_database")}
    assert database_name(first) not in names and database_name(second) not in names


def test_pg_url_fixture_gives_an_empty_database(pg_url: str) -> None:
    with connect(pg_url) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        assert name.startswith("t_") and name == database_name(pg_url)
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)


def test_stop_removes_the_cluster_and_frees_the_port(tmp_path: Path) -> None:
    pid_file = tmp_path / "pg.pid"
    url = start_or_skip(pid_file)
    env = read_env(pid_file)
    temp_dir = Path(env["DATA_DIR"]).parent
    assert temp_dir.is_dir()
    proc = script("stop", "--pid-file", str(pid_file))
    assert proc.returncode == 0, proc.stderr
    assert not temp_dir.exists() and not Path(env["DATA_DIR"]).exists()
    assert not pid_file.exists() and not Path(f"{pid_file}.env").exists()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", int(env["PGPORT"])))  # nothing listens there any more
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)


def test_stop_without_a_pid_file_names_the_problem(tmp_path: Path) -> None:
    missing = tmp_path / "none.pid"
    proc = script("stop", "--pid-file", str(missing))
    assert proc.returncode != 0
    assert "no pid file" in proc.stderr and str(missing) in proc.stderr
    restart = script("restart", "--pid-file", str(missing))
    assert restart.returncode != 0 and "no pid file" in restart.stderr


def test_no_binaries_exits_3_and_the_helper_skips_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, "PG_BINDIR": str(tmp_path)}  # a directory without initdb
    proc = script("start", "--pid-file", str(tmp_path / "pg.pid"), env=env)
    assert proc.returncode == NO_BINARIES
    assert "apt-get install postgresql" in proc.stderr
    assert not (tmp_path / "pg.pid").exists()
    monkeypatch.setenv("PG_BINDIR", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        start_server(tmp_path / "helper")
