"""One host of benchmarks/multihost_bench.py, in a process of its own: the product wiring (``open_services`` over the
environment's settings: EQUIMIND_HOME, EQUIMIND_DOCSTORE_URL, EQUIMIND_CHROMA_URL, the default all-MiniLM-L6-v2 ONNX
embedder) and its searcher, which on a PostgreSQL docstore starts the feed follower.

    python -m benchmarks.multihost_host

Prints ``{"ready": ...}`` once the embedder is loaded and a first search has built the host's indexes, then reads
commands as JSON lines on stdin and answers each with one JSON line on stdout (anything else the libraries print goes
to stderr):

* ``{"cmd": "ingest", "tag": T, "i": I}``: generate filing I of run T (``make_document``) and ingest it with
  ``services.pipeline().run([doc])``; answers its ``doc_id``, a ``query`` naming it, ``t0`` (``time.time()`` right
  after ``run`` returned: the document is indexed and the pipeline's own BM25 rebuilt), ``t_indexed``
  (``time.time()`` at the pipeline's per-document progress call, right after the ``indexed`` status was committed,
  i.e. the feed change and its NOTIFY, before that BM25 rebuild) and the store's feed position.
* ``{"cmd": "ingest_snapshot", "corpus": DIR, "tickers": [...] | null, "forms": [...]}``: what
  ``equimind ingest --snapshot DIR --no-market`` does with the filings: ``SnapshotFilingsSource(DIR).iter_results``
  -> ``equimind.ingest.documents.documents`` -> ``services.pipeline().run`` (one batch); answers the ingest report's
  counts and stage timings, the wall seconds, the store's counts and feed position after it.
* ``{"cmd": "wait_doc", "doc_id": D, "query": Q, "t0": T0, "timeout": 10}``: search ``Q`` filtered to document D
  (mode hybrid, top 10) every 20 ms until a hit of D comes back; answers ``seconds`` = ``time.time() - T0`` at that
  moment (same machine, same clock) and ``at`` (that ``time.time()``), the number of searches, and the result's
  ``feed``.
* ``{"cmd": "search", "query": Q}``: the top-10 chunk ids (mode hybrid, no filter), ``feed`` and the top 3 hits'
  documents (ticker, form, title).
* ``{"cmd": "stats"}``: the feed follower's counters (``FeedFollower.stats``), the indexes' position, their last
  refresh time (``LocalIndexes.last_refresh_ms``) and the store's counts.
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
from pathlib import Path
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
        indexed: list[float] = []

        def progress(stage: str, advance: int, total: int | None) -> None:
            if stage == "documents":  # called right after the document's `indexed` status was committed
                indexed.append(time.time())

        start = time.perf_counter()
        report = self.services.pipeline().run([doc], progress=progress)
        t0 = time.time()  # run() returned: indexed (status committed, NOTIFY sent) and the pipeline's BM25 rebuilt
        if report.documents_failed:
            raise RuntimeError(f"ingest of {doc.id} failed: {report.documents_failed}")
        return {"doc_id": doc.id, "query": query, "t0": t0, "t_indexed": indexed[0] if indexed else None,
                "ingest_s": round(time.perf_counter() - start, 4), "chunks": report.chunks_added,
                "position": self.feed_position(), "timings_s": report.timings_s}

    def ingest_snapshot(self, corpus: str, tickers: list[str] | None, forms: list[str]) -> dict[str, Any]:
        """The filings of ``equimind ingest --snapshot CORPUS --no-market [--tickers ...]``, in one pipeline run."""
        from equimind.ingest.documents import documents
        from equimind.sources.snapshot import SnapshotFilingsSource

        follower = self.services._follower
        before = asdict(follower.stats) if follower is not None else {}
        start = time.perf_counter()
        raw = SnapshotFilingsSource(Path(corpus)).iter_results(tickers=tickers or None, forms=forms or None)
        report = self.services.pipeline().run(documents(raw))
        seconds = time.perf_counter() - start
        after = asdict(follower.stats) if follower is not None else {}
        return {"seconds": round(seconds, 1), "documents_added": report.documents_added,
                "documents_skipped": report.documents_skipped, "chunks_added": report.chunks_added,
                "chunks_skipped": report.chunks_skipped, "parents_added": report.parents_added,
                "embeddings_computed": report.embeddings_computed,
                "documents_failed": [f.model_dump() for f in report.documents_failed],
                "timings_s": report.timings_s, "embedder": report.embedder,
                "embeddings_per_s": round(report.embeddings_computed / report.timings_s["embed"], 1)
                if report.timings_s.get("embed") else None,
                "own_follower_refreshes_during": after.get("refreshes", 0) - before.get("refreshes", 0),
                "store": self.services.docstore.counts(), "position": self.feed_position()}

    def wait_doc(self, doc_id: str, query: str, t0: float, timeout: float) -> dict[str, Any]:
        flt = FilterSpec(doc_ids=(doc_id,))
        deadline = time.monotonic() + timeout
        searches = 0
        while True:
            result = self.searcher.search(query, flt, mode="hybrid", top_k=10)
            searches += 1
            if any(h.document.doc_id == doc_id for h in result.hits):
                at = time.time()
                return {"found": True, "seconds": at - t0, "at": at, "searches": searches,
                        "feed": result.feed.model_dump() if result.feed else None}
            if time.monotonic() >= deadline:
                at = time.time()
                return {"found": False, "seconds": at - t0, "at": at, "searches": searches,
                        "feed": result.feed.model_dump() if result.feed else None}
            time.sleep(0.02)

    def search(self, query: str) -> dict[str, Any]:
        result = self.searcher.search(query, mode="hybrid", top_k=10)
        return {"chunk_ids": [h.chunk_id for h in result.hits], "feed": result.feed.model_dump() if result.feed
                else None, "degraded": [str(d) for d in result.degraded],
                "top_documents": [f"{h.document.ticker} {h.document.form}: {h.document.title}"
                                  for h in result.hits[:3]]}

    def stats(self) -> dict[str, Any]:
        follower = self.services._follower
        out: dict[str, Any] = {"served_position": self.searcher.indexes.served_position,
                               "store_position": self.feed_position(),
                               "last_refresh_ms": self.searcher.indexes.last_refresh_ms,
                               "store": self.services.docstore.counts()}
        if follower is not None:
            stats = asdict(follower.stats)
            out["follower"] = stats
        return out

    def handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        cmd = msg.get("cmd")
        if cmd == "ingest":
            return self.ingest(str(msg["tag"]), int(msg["i"]))
        if cmd == "ingest_snapshot":
            forms = msg.get("forms")
            return self.ingest_snapshot(str(msg["corpus"]), msg.get("tickers"), list(forms) if forms else [])
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
