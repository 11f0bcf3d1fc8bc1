"""One host of benchmarks/multihost_bench.py, in a process of its own: the product wiring (``open_services`` over the
environment's settings: EQUIMIND_HOME, EQUIMIND_DOCSTORE_URL, EQUIMIND_CHROMA_URL, the default all-MiniLM-L6-v2 ONNX
embedder) and its searcher, which on a PostgreSQL docstore starts the feed follower.

    python -m benchmarks.multihost_host

Prints ``{"ready": ...}`` once the embedder is loaded and a first search has built the host's indexes, then reads
commands as JSON lines on stdin and answers each with one JSON line on stdout (anything else the libraries print goes
to stderr):

* ``{"cmd": "ingest", "tag": T, "i": I}``: generate filing I of run T (``make_document``) and ingest it with
  ``services.pipeline().run([doc])``; answers its ``doc_id``, a ``query`` naming it, ``t0`` (``time.time()`` right
  after ``run`` returned: the document is indexed) and the store's feed position.
* ``{"cmd": "wait_doc", "doc_id": D, "query": Q, "t0": T0, "timeout": 10}``: search ``Q`` filtered to document D
  (mode hybrid, top 10) every 20 ms until a hit of D comes back; answers ``seconds`` = ``time.time() - T0`` at that
  moment (same machine, same clock), the number of searches, and the result's ``feed``.
* ``{"cmd": "search", "query": Q}``: the top-10 chunk ids (mode hybrid, no filter) and ``feed``.
* ``{"cmd": "stats"}``: the feed follower's counters (``FeedFollower.stats``) and the indexes' position.
* ``{"cmd": "quit"}``.

An error answers ``{"error": "..."}`` and the host keeps reading.
"""

from __future__ import annotations

import json
import logging
import os
import random
import sys
import time
from dataclasses import asdict
from datetime import date, timedelta
from typing import IO, Any

from equimind.core.documents import Document, FilterSpec, Origin, Section, Source

TICKERS = ("NVDA", "WMT", "MSFT", "TSLA", "AAPL")
SENTENCES = (
    "data center revenue grew on demand for AI accelerators and GPUs",
    "supply chain constraints at foundry partners limited wafer output",
    "export controls on advanced chips are a material risk factor",
    "free cash flow funded share repurchases and a higher dividend",
    "the company refinanced senior notes and reduced long term debt",
    "same store sales declined as consumer spending slowed in stores",
    "cloud subscription revenue expanded with enterprise customers",
    "automotive deliveries rose while vehicle margins compressed",
    "gross margin improved on a favorable product mix and lower freight costs",
    "litigation over patent infringement could require royalty payments",
    "inventory provisions rose as older products reached end of life",
    "operating expenses grew with research and development headcount",
)
QUERIES = (
    "export controls risk for advanced chips",
    "free cash flow and share repurchases",
    "cloud subscription revenue growth",
    "supply chain constraints wafer output",
    "debt refinancing senior notes",
    "gross margin drivers and product mix",
    "patent litigation and royalty payments",
    "inventory provisions for end of life products",
    "automotive deliveries and vehicle margins",
    "research and development headcount growth",
)
_SYLLABLES = ("ka", "vor", "lin", "dre", "qua", "mel", "zan", "tor", "bis", "rup", "sel", "nox", "fen", "gal", "hy")


def codename(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(4)).capitalize()


def make_document(tag: str, i: int, sentences: int = 36) -> tuple[Document, str]:
    """Filing ``i`` of run ``tag`` (distinct tags give distinct ids, so a re-run over a kept store ingests anew): a
    small two-section filing whose sentences name its own product line, and a query naming that line."""
    rng = random.Random(f"{tag}/{i}")
    ticker = TICKERS[i % len(TICKERS)]
    product, plant = codename(rng), codename(rng)
    filed = date(2022, 1, 3) + timedelta(days=rng.randrange(3 * 365))
    body = []
    for j in range(sentences):
        theme = rng.choice(SENTENCES)
        if j % 3 == 0:
            body.append(f"{ticker} reported that {theme} for the {product} product line in fiscal {filed.year} "
                        f"(note {j}).")
        elif j % 3 == 1:
            body.append(f"At the {plant} facility, {theme}, management said in filing {i} of run {tag}.")
        else:
            body.append(f"{ticker} {theme} in fiscal {filed.year} (note {j}).")
    text = " ".join(body)
    half = text.index(body[sentences // 2])
    key = f"bench/multihost/{tag}/{ticker}/{i}"
    doc = Document(
        id=Document.make_id(key, text), source_key=key, ticker=ticker, cik=None, company=f"{ticker} Corp",
        source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K" if i % 2 else "10-Q", filed_at=filed,
        period_end=None, url=None, title=f"{ticker} filing {i} ({product})", text=text,
        sections=(Section("Item 1", 0, half), Section("Item 7", half, len(text))),
    )
    return doc, f"{product} product line at the {plant} facility"


class Host:
    def __init__(self) -> None:
        from equimind.app.services import open_services
        from equimind.core.config import Settings

        self.settings = Settings()
        self.services = open_services(self.settings)
        t0 = time.perf_counter()
        self.services.embedder.embed(["warm-up"])
        self.embedder_load_s = time.perf_counter() - t0
        self.searcher = self.services.searcher()  # on PostgreSQL: starts the feed follower
        t0 = time.perf_counter()
        self.searcher.search(QUERIES[0], mode="hybrid", top_k=10)  # builds (or loads) the host's indexes
        self.first_search_s = time.perf_counter() - t0

    def ready(self) -> dict[str, Any]:
        return {"ready": True, "pid": os.getpid(), "docstore": type(self.services.docstore).__name__,
                "embedder": self.services.embedder.name, "feed_poll_s": self.settings.feed_poll_s,
                "follower": self.services._follower is not None, "embedder_load_s": round(self.embedder_load_s, 3),
                "first_search_s": round(self.first_search_s, 3)}

    def feed_position(self) -> int | None:
        position = getattr(self.services.docstore, "feed_position", None)
        return None if position is None else int(position())

    def ingest(self, tag: str, i: int) -> dict[str, Any]:
        doc, query = make_document(tag, i)
        start = time.perf_counter()
        report = self.services.pipeline().run([doc])
        t0 = time.time()  # the document is indexed (status committed, NOTIFY sent at that commit)
        if report.documents_failed:
            raise RuntimeError(f"ingest of {doc.id} failed: {report.documents_failed}")
        return {"doc_id": doc.id, "query": query, "t0": t0, "ingest_s": round(time.perf_counter() - start, 4),
                "chunks": report.chunks_added, "position": self.feed_position()}

    def wait_doc(self, doc_id: str, query: str, t0: float, timeout: float) -> dict[str, Any]:
        flt = FilterSpec(doc_ids=(doc_id,))
        deadline = time.monotonic() + timeout
        searches = 0
        while True:
            result = self.searcher.search(query, flt, mode="hybrid", top_k=10)
            searches += 1
            if any(h.document.doc_id == doc_id for h in result.hits):
                return {"found": True, "seconds": time.time() - t0, "searches": searches,
                        "feed": result.feed.model_dump() if result.feed else None}
            if time.monotonic() >= deadline:
                return {"found": False, "seconds": time.time() - t0, "searches": searches,
                        "feed": result.feed.model_dump() if result.feed else None}
            time.sleep(0.02)

    def search(self, query: str) -> dict[str, Any]:
        result = self.searcher.search(query, mode="hybrid", top_k=10)
        return {"chunk_ids": [h.chunk_id for h in result.hits], "feed": result.feed.model_dump() if result.feed
                else None, "degraded": [str(d) for d in result.degraded]}

    def stats(self) -> dict[str, Any]:
        follower = self.services._follower
        out: dict[str, Any] = {"served_position": self.searcher.indexes.served_position,
                               "store_position": self.feed_position(),
                               "last_refresh_ms": self.searcher.indexes.last_refresh_ms}
        if follower is not None:
            stats = asdict(follower.stats)
            stats["refreshed_at"] = len(stats["refreshed_at"])
            out["follower"] = stats
        return out

    def handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        cmd = msg.get("cmd")
        if cmd == "ingest":
            return self.ingest(str(msg["tag"]), int(msg["i"]))
        if cmd == "wait_doc":
            return self.wait_doc(msg["doc_id"], msg["query"], float(msg["t0"]), float(msg.get("timeout", 10)))
        if cmd == "search":
            return self.search(msg["query"])
        if cmd == "stats":
            return self.stats()
        raise ValueError(f"unknown command {cmd!r}")

    def close(self) -> None:
        from equimind.store.pg import close_pools

        self.services.close()
        close_pools()


def _answer(out: IO[str], payload: dict[str, Any]) -> None:
    out.write(json.dumps(payload, default=str) + "\n")
    out.flush()


def main() -> None:
    # Answers go to the real stdout; whatever else writes to fd 1 (a library, a child process) goes to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(level=os.environ.get("MULTIHOST_LOG_LEVEL", "WARNING"),
                        format="%(asctime)s host %(name)s %(message)s", stream=sys.stderr)
    try:
        host = Host()
    except Exception as exc:
        _answer(out, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        raise
    _answer(out, host.ready())
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg.get("cmd") == "quit":
                _answer(out, {"bye": True})
                break
            try:
                _answer(out, host.handle(msg))
            except Exception as exc:  # reported to the driver, which records it
                logging.getLogger("multihost_host").exception("command %s failed", msg.get("cmd"))
                _answer(out, {"error": f"{type(exc).__name__}: {exc}"})
    finally:
        host.close()


if __name__ == "__main__":
    main()
