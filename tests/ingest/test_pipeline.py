"""Ingest pipeline: idempotent, bad documents reported and skipped, and a real SIGKILL mid-ingest recovers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Document, Origin, Section, Source
from equimind.sources.base import SourceFailure

pytestmark = pytest.mark.integration


def _doc(i: int, words: int = 900) -> Document:
    body = " ".join(f"word{i}_{j % 97} revenue growth" if j % 13 else f"Sentence {j}." for j in range(words))
    text = f"Item 1A. Risk Factors\n{body}"
    key = f"test:{i}"
    return Document(id=Document.make_id(key, text), source_key=key, ticker="TST", cik="1", company="Test Co",
                    source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K", filed_at=date(2025, 1, i + 1),
                    period_end=None, url=None, title=f"doc {i}", text=text,
                    sections=(Section("Item 1A. Risk Factors", 0, len(text)),))


def _services(home: Path):  # type: ignore[no-untyped-def]
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    return open_services(Settings(home=home, child_tokens=50, parent_tokens=200), embedder=HashEmbedder(),
                         tokenizer=WhitespaceTokenizer())


def _state(home: Path) -> tuple[dict[str, int], int, set[str]]:
    s = _services(home)
    return s.docstore.counts(), s.vectors.count(), {c.id for c in s.docstore.iter_chunks(only_indexed=False)}


def test_second_ingest_adds_nothing(tmp_path: Path) -> None:
    docs = [_doc(i) for i in range(3)]
    first = _services(tmp_path / "h").pipeline().run(docs)
    assert first.documents_added == 3 and first.chunks_added > 0 and first.bm25_rebuilt
    before = _state(tmp_path / "h")
    second = _services(tmp_path / "h").pipeline().run(docs)
    assert second.documents_added == 0 and second.chunks_added == 0
    assert second.documents_skipped == 3 and second.chunks_skipped == first.chunks_added
    assert _state(tmp_path / "h") == before


def test_bad_item_is_reported_and_the_rest_stored(tmp_path: Path) -> None:
    items = [_doc(0), SourceFailure(source="broken.pdf", error="not a PDF"), _doc(1)]
    report = _services(tmp_path / "h").pipeline().run(items)
    assert report.documents_added == 2
    assert [(f.source, f.error) for f in report.documents_failed] == [("broken.pdf", "not a PDF")]
    hits = _services(tmp_path / "h").searcher().search("revenue growth", None, mode="hybrid").hits
    assert hits and {h.document.doc_id for h in hits} <= {_doc(0).id, _doc(1).id}


_CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    from ingest.test_pipeline import _doc, _services
    from equimind.embedding.embed import HashEmbedder

    class SlowEmbedder(HashEmbedder):
        def embed(self, texts):
            time.sleep(0.15)
            return super().embed(texts)

    s = _services(Path({home!r}))
    s._embedder = SlowEmbedder()
    from equimind.ingest.pipeline import IngestPipeline
    p = s.pipeline()
    p._batch = 4
    p.run([_doc(i, 2500) for i in range(4)])
    print("finished", flush=True)
""")


def test_killed_mid_ingest_then_rerun_completes_without_duplicates(tmp_path: Path) -> None:
    home = tmp_path / "killed"
    script = _CHILD.format(tests=str(Path(__file__).resolve().parents[1]), home=str(home))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    deadline = time.time() + 60
    # wait until the first document is written and some (not all) of its vectors are in Chroma
    while time.time() < deadline:
        if (home / "docstore.sqlite").exists():
            counts, nvec, _ = _state(home)
            if counts.get("pending", 0) >= 1 and nvec > 0:
                break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("child never reached the middle of the ingest: " + proc.stderr.read().decode()[-2000:])
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    counts, _, _ = _state(home)
    assert counts["pending"] >= 1, counts  # really interrupted mid-document

    report = _services(home).pipeline().run([_doc(i, 2500) for i in range(4)])
    assert report.documents_completed >= 1
    clean = tmp_path / "clean"
    _services(clean).pipeline().run([_doc(i, 2500) for i in range(4)])
    assert _state(home) == _state(clean)  # same documents, chunks and vectors: nothing lost, nothing duplicated
    assert _state(home)[0]["pending"] == 0
