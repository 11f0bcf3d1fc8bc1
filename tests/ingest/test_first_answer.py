"""First-answer indexing (issue 16.3): a fetched filing is embedded first in the parts the answer needs; the rest is
stored, searchable by BM25, said to be missing from the dense leg, and embedded afterwards — after which the store
is exactly what embedding everything at once gives."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from equimind.core.config import Settings
from equimind.core.documents import Chunk, Document, Origin, Section, Source
from equimind.ingest.first_answer import CAPABILITY, MIN_DEFER_CHUNKS, FirstAnswerRule

pytestmark = pytest.mark.integration

SECTIONS = ("Item 1. Business", "Item 1A. Risk Factors", "Item 7. Management's Discussion and Analysis",
            "Item 15. Exhibits and Financial Statement Schedules")


def _filing(ticker: str = "TST", words_per_section: int = 1200, form: str = "10-K",
            filed: date = date(2025, 2, 1)) -> Document:
    parts, sections, pos = [], [], 0
    for k, name in enumerate(SECTIONS):
        body = " ".join(f"{name.split('.')[0].replace(' ', '')}term{j % 89} w{k}x{j}" for j in range(words_per_section))
        text = f"{name}\n{body}\n"
        parts.append(text)
        sections.append(Section(name, pos, pos + len(text)))
        pos += len(text)
    text = "".join(parts)
    key = f"test:{ticker}:{form}:{filed}"
    return Document(id=Document.make_id(key, text), source_key=key, ticker=ticker, cik="1", company=f"{ticker} Co",
                    source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form=form, filed_at=filed, period_end=None,
                    url=None, title=f"{ticker} {form}", text=text, sections=tuple(sections))


def _services(home: Path, **overrides: object):  # type: ignore[no-untyped-def]
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    return open_services(Settings(home=home, child_tokens=50, parent_tokens=200, **overrides),  # type: ignore[arg-type]
                         embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())


def _chunk(doc: Document, section: str | None, i: int) -> Chunk:
    return Chunk(id=f"{doc.id}:{i}", doc_id=doc.id, parent_id=f"{doc.id}:p", start=i, end=i + 1, parent_start=0,
                 parent_end=1, section=section, text="x", ticker=doc.ticker, source=doc.source, form=doc.form,
                 filed_at=20250101)


def test_the_rule_keeps_the_aspect_sections_of_a_large_filing_and_all_of_a_small_one() -> None:
    rule = FirstAnswerRule(date(2025, 9, 30))
    doc = _filing()
    big = [_chunk(doc, SECTIONS[i % 4], i) for i in range(MIN_DEFER_CHUNKS * 2)]
    now = rule.embed_now(doc, big)
    assert {c.section for c in now} == {SECTIONS[1], SECTIONS[2]}  # risk factors, MD&A; not business, exhibits
    small = big[: MIN_DEFER_CHUNKS - 1]
    assert rule.embed_now(doc, small) == small
    unsectioned = [_chunk(doc, None, i) for i in range(MIN_DEFER_CHUNKS * 2)]  # a PDF: nothing to choose by
    assert rule.embed_now(doc, unsectioned) == unsectioned


def test_market_documents_are_embedded_now_only_when_recent() -> None:
    rule = FirstAnswerRule(date(2025, 9, 30))
    recent = _filing(form="prices", filed=date(2025, 6, 30))
    old = _filing(form="prices", filed=date(2023, 10, 31))
    chunks = [_chunk(recent, None, 0)]
    assert rule.embed_now(recent, chunks) == chunks
    assert rule.embed_now(old, [_chunk(old, None, 0)]) == []


def test_deferred_chunks_are_searched_by_bm25_flagged_and_completed_to_the_full_store(tmp_path: Path) -> None:
    doc = _filing()
    rule = FirstAnswerRule(date(2025, 9, 30))
    part = _services(tmp_path / "part")
    report = part.pipeline().run([doc], defer=rule)
    total = len(part.docstore.chunks_for_document(doc.id))
    assert report.documents_deferred == 1 and 0 < report.chunks_deferred < total
    assert part.docstore.document_status(doc.id) == "indexed"
    assert part.docstore.deferred() == {doc.id: report.chunks_deferred}
    assert part.vectors.count() == total - report.chunks_deferred
    sig_partial = part.docstore.indexed_doc_ids()[1]
    assert sig_partial == [f"{doc.id}~deferred"]

    business = "Item1term7"  # a term only the deferred Item 1 holds
    res = part.searcher().search(business, None, mode="hybrid")
    notes = [d for d in res.degraded if d.capability == CAPABILITY]
    assert len(notes) == 1 and f"{report.chunks_deferred} of {total} passages" in notes[0].reason
    assert "equimind complete" in notes[0].reason
    # BM25's top deferred candidate is embedded on the fly and fused on equal terms (with a dense rank) ...
    found = next(h for h in res.hits if h.scores.bm25_rank == 1)
    assert found.section == SECTIONS[0] and found.scores.dense_rank is not None
    assert "embed_deferred" in res.timings_ms
    # ... but the dense leg alone cannot see a chunk that has no vector
    assert found.chunk_id not in {h.chunk_id for h in part.searcher().search(business, None, mode="dense").hits}
    assert not [d for d in part.searcher().search(business, None, mode="bm25").degraded if d.capability == CAPABILITY]

    done = part.complete_deferred()
    assert done.documents_completed == 1 and done.embeddings_computed == report.chunks_deferred
    assert part.docstore.deferred() == {} and part.vectors.count() == total
    assert part.docstore.indexed_doc_ids()[1] == [doc.id]
    after = part.searcher().search(business, None, mode="hybrid")
    assert not [d for d in after.degraded if d.capability == CAPABILITY]
    assert "embed_deferred" not in after.timings_ms  # every vector is in the (rebuilt) matrix now
    matrix = part.searcher().indexes.current()[0].dense
    assert bool(matrix.has_vec.all()) and matrix.row_of(found.chunk_id) is not None
    assert part.complete_deferred().embeddings_computed == 0  # idempotent

    full = _services(tmp_path / "full")
    full.pipeline().run([doc])
    ids = sorted(c.id for c in full.docstore.chunks_for_document(doc.id))
    a, b = part.vectors.get_vectors(ids), full.vectors.get_vectors(ids)
    assert set(a) == set(b) == set(ids) and all(np.allclose(a[i], b[i]) for i in ids)
    q = "Item7term3 Item1term5"
    assert [h.chunk_id for h in part.searcher().search(q, None).hits] == \
        [h.chunk_id for h in full.searcher().search(q, None).hits]


def test_a_plain_ingest_of_a_deferred_document_completes_it(tmp_path: Path) -> None:
    doc = _filing()
    s = _services(tmp_path / "h")
    s.pipeline().run([doc], defer=FirstAnswerRule(date(2025, 9, 30)))
    report = s.pipeline().run([doc])
    assert report.documents_completed == 1 and report.embeddings_computed > 0
    assert s.docstore.deferred() == {}
    assert s.vectors.count() == len(s.docstore.chunks_for_document(doc.id))


def test_deleting_a_deferred_document_removes_its_record(tmp_path: Path) -> None:
    doc = _filing()
    s = _services(tmp_path / "h")
    s.pipeline().run([doc], defer=FirstAnswerRule(date(2025, 9, 30)))
    assert s.docstore.counts()["deferred"] == 1
    assert s.docstore.delete_document(doc.id)
    assert s.docstore.deferred() == {} and s.docstore.counts()["deferred"] == 0


def test_a_ticker_with_nothing_deferred_never_waits_on_another_tickers_completion(tmp_path: Path) -> None:
    import threading

    s = _services(tmp_path / "h")
    s.pipeline().run([_filing("AAA")], defer=FirstAnswerRule(date(2025, 9, 30)))
    done = threading.Event()
    with s._complete_lock:  # a background completion of AAA holds it
        t = threading.Thread(target=lambda: (s.complete_deferred(("BBB",)), done.set()))
        t.start()
        assert done.wait(timeout=120)  # BBB has nothing deferred: it returns without the lock (or never)
    t.join()
    assert s.docstore.deferred(("AAA",))  # untouched
