"""PostgreSQL restarted while the API serves searches: the requests in the gap get a clear 503 naming the store, and
the same server recovers without a restart. Runs on a cluster of its own (scripts/postgres.sh), since it restarts it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest
from ingest_corpus import EMBED_DIM, chunker, make_documents

from equimind.app.services import open_services
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.ingest.pipeline import IngestPipeline
from equimind.ingest.tokens import WhitespaceTokenizer
from equimind.interfaces.api.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interfaces"))
from interfaces_fakes import live_server
from pg_server import start_server

pytestmark = pytest.mark.integration


def outage(pid_file: Path | None, down_s: float) -> None:
    """Stop the cluster scripts/postgres.sh started (pg_ctl stop -m fast, as its user), wait, start it again."""
    assert pid_file is not None
    env = dict(line.split("=", 1) for line in Path(f"{pid_file}.env").read_text().splitlines() if "=" in line)
    env = {k: v.strip("'") for k, v in env.items()}
    as_user = ["runuser", "-u", env["RUN_AS"], "--"] if env.get("RUN_AS") else []
    pg_ctl = [*as_user, f"{env['BINDIR']}/pg_ctl", "-D", env["DATA_DIR"]]
    subprocess.run([*pg_ctl, "stop", "-m", "fast", "-w"], check=True, capture_output=True, cwd="/")
    time.sleep(down_s)
    subprocess.run([*pg_ctl, "-l", env["LOG"], "-w", "start"], check=True, capture_output=True, cwd="/")


def test_postgres_restart_during_search_load_is_503_then_recovers(tmp_path: Path, chroma_server_url: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # a request waits at most 1 s for a connection, so an outage of 3 s is answered 503, never hung
    monkeypatch.setenv("EQUIMIND_DOCSTORE_TIMEOUT_S", "1")
    server = start_server(tmp_path / "pg")
    services = None
    try:
        settings = Settings(home=tmp_path / "home", shared=tmp_path / "none", docstore_url=server.url,
                            chroma_url=chroma_server_url, retrieval_mode="hybrid", feed_poll_s=0.5)
        services = open_services(settings, embedder=HashEmbedder(EMBED_DIM), tokenizer=WhitespaceTokenizer())
        services.vectors = type(services.vectors).from_settings(settings, f"faults-{uuid.uuid4().hex[:8]}")
        IngestPipeline(services.docstore, services.vectors, services.sparse, services.embedder, chunker(),
                       batch_size=16).run(make_documents(6, seed=21))
        statuses: Counter[int] = Counter()
        timeline: list[tuple[float, float, int]] = []
        start = time.monotonic()
        bodies: list[dict[str, object]] = []
        stop = threading.Event()
        with live_server(create_app(settings, services)) as base:
            def load() -> None:
                with httpx.Client(base_url=base, timeout=30) as client:
                    while not stop.is_set():
                        t0 = time.monotonic()
                        r = client.post("/api/v1/search", json={"query": "free cash flow and share repurchases",
                                                                "auto_filter": False})
                        statuses[r.status_code] += 1
                        timeline.append((round(t0 - start, 2), round(time.monotonic() - t0, 2), r.status_code))
                        if r.status_code != 200:
                            bodies.append({"status": r.status_code, **r.json(),
                                           "retry_after": r.headers.get("retry-after")})
            threads = [threading.Thread(target=load) for _ in range(4)]
            for t in threads:
                t.start()
            time.sleep(1.0)
            ok_before = statuses[200]
            outage(server.pid_file, down_s=3.0)  # stopped for 3 s, then started again on the same data and port
            t_back = time.monotonic()
            time.sleep(0.5)
            # recovered: the same server answers 200 again, without a restart of EquiMind
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with httpx.Client(base_url=base, timeout=30) as client:
                    r = client.post("/api/v1/search", json={"query": "export controls risk", "auto_filter": False})
                if r.status_code == 200:
                    break
                time.sleep(0.2)
            recovered_s = time.monotonic() - t_back
            stop.set()
            for t in threads:
                t.join(30)
        assert ok_before > 0 and statuses[503] > 0, statuses  # the outage was seen, and answered 503
        assert r.status_code == 200 and r.json()["hits"], r.text
        body = r.json()  # the result and its trace name the feed position it was served from
        assert body["feed"]["behind"] == 0 and body["trace"]["feed_position"] == body["feed"]["served"] > 0
        assert set(statuses) <= {200, 503}, (statuses, bodies[:3])
        for body in bodies:
            assert body["status"] == 503 and "PostgreSQL store" in str(body["detail"]), body
            assert body["retry_after"] == "5"
        assert recovered_s < 30
        print(f"statuses during restart: {dict(statuses)}; recovered {recovered_s:.1f} s after restart returned")
        print("TIMELINE", [t for t in timeline if t[1] > 0.3 or t[2] != 200][:40])
    finally:
        from equimind.store.pg import close_pool

        if services is not None:
            services.close()  # stops its feed follower
        close_pool(server.url)
        server.stop()
