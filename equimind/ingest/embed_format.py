"""Named embedding-text formats and the stamp that records which one (and which embedder) a store's vectors used.

A child chunk's *embedding text* is what the dense vector is computed from; ``Chunk.text`` itself (citations, BM25)
never changes. Formats are versioned by name so a store embedded one way is never silently extended the other way:

- ``chunk-text-v0`` — the exact chunk text (every store written before stamps existed);
- ``title-section-v1`` — ``equimind.ingest.chunk.embedding_text``: a one-line "document title | section" header, then
  the exact chunk text. Measured on the golden set: dense recall@10 +0.313, paired-bootstrap 95 % CI [+0.194, +0.433]
  (``docs/evaluation.md``, ``benchmarks/results/eval_golden.json``).
- ``title-section-statement-v2`` — the same header plus, for a child inside a primary financial statement, the
  statement's kind ("document title | section | statement of cash flows"; ``equimind.ingest.captions``).
- ``title-section-statement-cells-v3`` — the v2 header, and the chunk text with its Markdown table rows written as
  their non-empty cells (``table_cells_as_text``: no pipes, empty cells or separator rows, which cost a sentence
  embedder its reading of a statement row). The product format (ADR 0011).

The store keeps an :class:`EmbeddingStamp` (embedder name, format) in the docstore's ``meta`` table. A store with
chunks but no stamp is legacy: ``chunk-text-v0`` with an unknown embedder. ``equimind reindex`` re-embeds a store
with the current format and rewrites the stamp.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Protocol

from equimind.core.degraded import Degradation
from equimind.core.documents import Chunk, Document
from equimind.core.errors import ConfigError
from equimind.core.search import DocumentRef
from equimind.ingest.captions import caption_of, document_captions
from equimind.ingest.chunk import embedding_text

EmbedText = Callable[[Chunk, Document], str]
"""(child chunk, its document) -> the text the embedder sees."""


class EmbedFormat(StrEnum):
    CHUNK_TEXT_V0 = "chunk-text-v0"
    TITLE_SECTION_V1 = "title-section-v1"
    TITLE_SECTION_STATEMENT_V2 = "title-section-statement-v2"
    TITLE_SECTION_STATEMENT_CELLS_V3 = "title-section-statement-cells-v3"


PRODUCT_FORMAT = EmbedFormat.TITLE_SECTION_STATEMENT_CELLS_V3
"""What the product pipeline (``Services.pipeline()``) embeds and what search expects to find."""

REINDEX_FIX = "run `equimind reindex`"


def _chunk_text(chunk: Chunk, title: str, caption: str | None) -> str:
    return chunk.text


def _title_section(chunk: Chunk, title: str, caption: str | None) -> str:
    return embedding_text(chunk, title)


def _title_section_statement(chunk: Chunk, title: str, caption: str | None) -> str:
    return embedding_text(chunk, title, caption)


_SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")


def table_cells_as_text(text: str) -> str:
    """Markdown table rows as their non-empty cells separated by spaces (separator rows dropped); other lines as
    they are. What a sentence embedder reads best: the row's words and numbers, not the pipes and empty cells."""
    out: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            kept = [c for c in cells if c]
            if kept and all(_SEPARATOR_CELL.match(c) for c in kept):
                continue
            out.append(" ".join(kept))
        else:
            out.append(line)
    return "\n".join(out)


def _title_section_statement_cells(chunk: Chunk, title: str, caption: str | None) -> str:
    return embedding_text(replace(chunk, text=table_cells_as_text(chunk.text)), title, caption)


# (child chunk, its document's title, its statement caption) -> the embedded text: the one table both entry points
# below read
_TEXT_FNS: dict[EmbedFormat, Callable[[Chunk, str, str | None], str]] = {
    EmbedFormat.CHUNK_TEXT_V0: _chunk_text,
    EmbedFormat.TITLE_SECTION_V1: _title_section,
    EmbedFormat.TITLE_SECTION_STATEMENT_V2: _title_section_statement,
    EmbedFormat.TITLE_SECTION_STATEMENT_CELLS_V3: _title_section_statement_cells,
}
USES_CAPTIONS: frozenset[EmbedFormat] = frozenset({EmbedFormat.TITLE_SECTION_STATEMENT_V2,
                                                   EmbedFormat.TITLE_SECTION_STATEMENT_CELLS_V3})


def parse_format(name: str | EmbedFormat) -> EmbedFormat:
    """The format called ``name``; an unknown name raises ``ConfigError`` listing the valid ones."""
    try:
        return EmbedFormat(name)
    except ValueError:
        valid = ", ".join(f.value for f in EmbedFormat)
        raise ConfigError(f"unknown embedding-text format {name!r}; valid: {valid}") from None


def text_with_title(fmt: EmbedFormat, chunk: Chunk, title: str) -> str:
    """What ``fmt`` embeds for ``chunk`` of a document titled ``title``, for a format that reads nothing else of the
    document (not one of ``USES_CAPTIONS``)."""
    return _TEXT_FNS[fmt](chunk, title, None)


def embed_text_for(name: str | EmbedFormat) -> EmbedText:
    """The (Chunk, Document) -> str function of a format."""
    fmt = parse_format(name)
    fn = _TEXT_FNS[fmt]
    if fmt not in USES_CAPTIONS:
        return lambda chunk, doc: fn(chunk, doc.title, None)
    return lambda chunk, doc: fn(chunk, doc.title, caption_of(document_captions(doc), chunk))


class _DocSource(Protocol):
    def get_refs(self, doc_ids: Iterable[str]) -> Mapping[str, DocumentRef]: ...
    def get_document(self, doc_id: str) -> Document: ...


def stored_chunk_texts(fmt: EmbedFormat, chunks: Sequence[Chunk], docstore: _DocSource) -> list[str]:
    """What ``fmt`` embeds for stored chunks: a format that reads the statement captions loads each document once,
    any other only the documents' metadata (for their titles)."""
    doc_ids = list(dict.fromkeys(c.doc_id for c in chunks))
    if fmt not in USES_CAPTIONS:
        refs = docstore.get_refs(doc_ids)
        return [text_with_title(fmt, c, refs[c.doc_id].title) for c in chunks]
    fn = embed_text_for(fmt)
    docs = {doc_id: docstore.get_document(doc_id) for doc_id in doc_ids}
    return [fn(c, docs[c.doc_id]) for c in chunks]


@dataclass(frozen=True)
class EmbeddingStamp:
    """How a store's vectors were made. ``embedder`` is None for a legacy (unstamped) store."""

    embedder: str | None
    text_format: EmbedFormat
    legacy: bool = False

    def as_dict(self) -> dict[str, str | bool | None]:
        return {"embedder": self.embedder, "text_format": self.text_format.value, "legacy": self.legacy}


class _StampStore(Protocol):
    def embedding_stamp(self) -> tuple[str, str] | None: ...
    def has_chunks(self) -> bool: ...


def read_stamp(docstore: _StampStore) -> EmbeddingStamp | None:
    """The store's stamp; a legacy stamp when it has chunks but none was written; None for an empty store."""
    raw = docstore.embedding_stamp()
    if raw is not None:
        return EmbeddingStamp(embedder=raw[0], text_format=parse_format(raw[1]))
    if docstore.has_chunks():
        return EmbeddingStamp(embedder=None, text_format=EmbedFormat.CHUNK_TEXT_V0, legacy=True)
    return None


def stamp_note(stored: EmbeddingStamp | None, wanted: EmbeddingStamp) -> Degradation | None:
    """The degraded note search and health show while the store's vectors were made otherwise than ``wanted``."""
    why = mismatch(stored, wanted)
    return None if why is None else Degradation(capability="embeddings", reason=f"{why}; {REINDEX_FIX}")


def mismatch(stored: EmbeddingStamp | None, wanted: EmbeddingStamp) -> str | None:
    """Why vectors made as ``stored`` must not be mixed with / searched as ``wanted`` (None when compatible).

    A legacy stamp's unknown embedder is not held against it: only its format can be compared."""
    if stored is None:
        return None
    same_format = stored.text_format == wanted.text_format
    same_embedder = stored.embedder is None or stored.embedder == wanted.embedder
    if same_format and same_embedder:
        return None
    if same_embedder:
        return f"stored as {stored.text_format.value}, current is {wanted.text_format.value}"
    return (f"stored as {stored.text_format.value} with embedder {stored.embedder}, current is "
            f"{wanted.text_format.value} with embedder {wanted.embedder}")
