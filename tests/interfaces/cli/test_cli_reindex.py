"""`equimind reindex`: converts a legacy (unstamped, chunk-text) store with the real embedder; a re-run is a no-op."""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from equimind.app.services import open_services
from equimind.core.config import Settings
from equimind.core.documents import Document, Origin, Section, Source
from equimind.embedding.embed import HashEmbedder
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.ingest.tokens import WhitespaceTokenizer
from equimind.interfaces.cli.main import app

PRODUCT = PRODUCT_FORMAT.value

runner = CliRunner()


def _legacy_home(home: Path) -> int:
    """Two small documents embedded as bare chunk text by a 384-d fake, stamp removed (a pre-stamp store)."""
    docs = []
    for i in range(2):
        text = "Item 7. Results\n" + " ".join(f"Revenue rose {j} percent in segment {i}." for j in range(30))
        key = f"cli-reindex:{i}"
        docs.append(Document(id=Document.make_id(key, text), source_key=key, ticker="TST", cik=None, company=None,
                             source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=date(2024, 1, 2),
                             period_end=None, url=None, title=f"Test {i} 10-K", text=text,
                             sections=(Section("Item 7. Results", 0, len(text)),)))
    s = open_services(Settings(home=home, child_tokens=60, parent_tokens=200), embedder=HashEmbedder(),
                      tokenizer=WhitespaceTokenizer(), text_format="chunk-text-v0")
    s.pipeline().run(docs)
    s.docstore.close()
    with sqlite3.connect(home / "docstore.sqlite") as conn:
        conn.execute("DELETE FROM meta WHERE key IN ('embed_model', 'embed_text_format')")
        return int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])


@pytest.mark.integration
def test_reindex_json_converts_a_legacy_store_then_has_nothing_to_do(tmp_path: Path) -> None:
    home = tmp_path / "h"
    n_chunks = _legacy_home(home)
    res = runner.invoke(app, ["reindex", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["reindexed"] is True and report["chunks"] == n_chunks and report["documents"] == 2
    assert report["previous"] == {"embedder": None, "text_format": "chunk-text-v0", "legacy": True}
    assert report["text_format"] == PRODUCT and "MiniLM" in report["embedder"]
    with sqlite3.connect(home / "docstore.sqlite") as conn:
        stamp = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'embed_%'").fetchall())
    assert stamp == {"embed_model": report["embedder"], "embed_text_format": PRODUCT}

    again = runner.invoke(app, ["reindex", "--home", str(home)])
    assert again.exit_code == 0 and "nothing to re-embed" in again.stdout
