"""Embedding-text formats by name, and reading/comparing a store's embedding stamp."""

from __future__ import annotations

import pytest

from equimind.app.services import Services
from equimind.core.documents import Chunk, Document, Origin, Source
from equimind.core.errors import ConfigError
from equimind.ingest.chunk import embedding_text
from equimind.ingest.embed_format import (
    PRODUCT_FORMAT,
    EmbeddingStamp,
    EmbedFormat,
    embed_text_for,
    mismatch,
    parse_format,
    read_stamp,
)

TEXT = "Item 7. MD&A\nRevenue grew 114%."
DOC = Document(id="d", source_key="k", ticker="NVDA", cik=None, company=None, source=Source.SEC_EDGAR,
               origin=Origin.SNAPSHOT, form="10-K", filed_at=None, period_end=None, url=None, title="NVIDIA 10-K",
               text=TEXT)
CHUNK = Chunk(id="c", doc_id="d", parent_id="p", start=13, end=len(TEXT), parent_start=0, parent_end=len(TEXT),
              section="Item 7. MD&A", text=TEXT[13:], ticker="NVDA", source=Source.SEC_EDGAR, form="10-K",
              filed_at=0)


class FakeStampStore:
    def __init__(self, stamp: tuple[str, str] | None, chunks: bool) -> None:
        self.stamp, self.chunks = stamp, chunks

    def embedding_stamp(self) -> tuple[str, str] | None:
        return self.stamp

    def has_chunks(self) -> bool:
        return self.chunks


def test_formats_map_to_their_embedding_text() -> None:
    assert embed_text_for("chunk-text-v0")(CHUNK, DOC) == "Revenue grew 114%."
    assert embed_text_for("title-section-v1")(CHUNK, DOC) == "NVIDIA 10-K | Item 7. MD&A\nRevenue grew 114%."
    assert embed_text_for(PRODUCT_FORMAT)(CHUNK, DOC) == embedding_text(CHUNK, DOC.title)
    assert Services.__dataclass_fields__["text_format"].default == PRODUCT_FORMAT.value


def test_unknown_format_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="chunk-text-v0, title-section-v1"):
        parse_format("title-v2")


def test_stamp_of_new_legacy_and_stamped_stores() -> None:
    assert read_stamp(FakeStampStore(None, chunks=False)) is None
    legacy = read_stamp(FakeStampStore(None, chunks=True))
    assert legacy == EmbeddingStamp(None, EmbedFormat.CHUNK_TEXT_V0, legacy=True)
    assert read_stamp(FakeStampStore(("m", "title-section-v1"), chunks=True)) == \
        EmbeddingStamp("m", EmbedFormat.TITLE_SECTION_V1)


def test_mismatch_compares_format_and_known_embedder() -> None:
    v1 = EmbeddingStamp("m", EmbedFormat.TITLE_SECTION_V1)
    assert mismatch(None, v1) is None
    assert mismatch(EmbeddingStamp("m", EmbedFormat.TITLE_SECTION_V1), v1) is None
    assert mismatch(EmbeddingStamp(None, EmbedFormat.CHUNK_TEXT_V0, legacy=True), v1) == \
        "stored as chunk-text-v0, current is title-section-v1"
    assert mismatch(EmbeddingStamp(None, EmbedFormat.CHUNK_TEXT_V0, legacy=True),
                    EmbeddingStamp("m", EmbedFormat.CHUNK_TEXT_V0)) is None  # legacy: embedder unknown
    other = mismatch(EmbeddingStamp("old", EmbedFormat.TITLE_SECTION_V1), v1)
    assert other is not None and "embedder old" in other and "embedder m" in other
