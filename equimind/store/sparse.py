"""BM25 sparse index over child chunks (bm25s; Lucene BM25 variant, k1=1.5, b=0.75; English stop words and the
Snowball "english" stemmer from PyStemmer).

The metadata filter is applied INSIDE the BM25 leg: only the rows the mask from ``RowMeta.mask`` admits are scored
and returned, so a matching chunk that would rank below k in the unfiltered corpus is still found when filtered. A
filtered query is scored with the term
statistics of the rows the filter admits (``sparse_subset``), so its scores do not depend on unrelated documents; an
unfiltered one is scored by bm25s over everything.

Saved as inspectable files (bm25s' JSON + ``.npy``, our ids/metadata as ``.npy`` + JSON), stamped with a format
version, written into a fresh directory and swapped in atomically (see ``indexfiles``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import Stemmer

from equimind.core.documents import Chunk, FilterSpec
from equimind.core.errors import ConfigError
from equimind.store.indexfiles import (
    IndexFormatError,
    RowMeta,
    fingerprint,
    has_current,
    read_versioned,
    write_versioned,
)
from equimind.store.sparse_subset import Postings, subset_scores
from equimind.store.topk import top_k

log = logging.getLogger(__name__)

KIND = "equimind-bm25"
FORMAT_VERSION = 3  # 2: term-frequency postings beside bm25s' score matrix (subset statistics for filtered queries);
# 3: a child inside a primary financial statement is indexed under the statement's name (ADR 0012)
K1, B = 1.5, 0.75
STOPWORDS = "en"
STEMMER_LANGUAGE = "english"


def _stemmer() -> Any:

    return Stemmer.Stemmer(STEMMER_LANGUAGE)


def tokenize(texts: Sequence[str], stemmer: Any) -> list[list[str]]:
    """bm25s tokenisation: lower-case, ``\\w\\w+`` tokens, English stop words removed, Snowball-stemmed."""
    import bm25s

    out = bm25s.tokenize(
        list(texts), lower=True, stopwords=STOPWORDS, stemmer=stemmer, return_ids=False, show_progress=False
    )
    return [list(t) for t in out]


class BM25Index:
    """A BM25 index of chunk texts plus the chunks' filter metadata (row i <-> ``meta.ids[i]``).

    A handle bound to a directory (``root``): ``build`` replaces the in-memory index, ``save`` swaps it in on disk,
    ``search`` loads the saved index on first use when nothing was built in this process. ``fingerprint`` identifies
    the indexed chunk set (order-independent), so a reader can tell whether the files match the docstore.
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self._bm25: Any = None
        self._meta: RowMeta | None = None
        self._postings: Postings | None = None
        self.fingerprint: str | None = None
        self._local = threading.local()  # PyStemmer's Stemmer objects are not thread-safe: one per thread

    @property
    def meta(self) -> RowMeta:
        if self._meta is None:
            self._load_into_self()
        assert self._meta is not None
        return self._meta

    def __len__(self) -> int:
        return len(self.meta)

    def build(self, chunks: Sequence[Chunk], texts: Sequence[str] | None = None) -> BM25Index:
        """(Re)index the chunks in memory (``save`` persists them); returns self. ``texts``: what to index for each
        chunk (default: its text; the store passes ``captions.captioned_texts``)."""
        if texts is not None and len(texts) != len(chunks):
            raise ValueError(f"{len(texts)} texts for {len(chunks)} chunks")
        retriever, postings = None, None
        if chunks:
            import bm25s

            tokens = tokenize(list(texts) if texts is not None else [c.text for c in chunks], _stemmer())
            retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
            retriever.index(tokens, show_progress=False)
            postings = Postings.build(tokens, retriever.vocab_dict)
        self._bm25, self._meta, self._postings = retriever, RowMeta.from_chunks(chunks), postings
        self.fingerprint = fingerprint(c.id for c in chunks)
        log.info("built BM25 index over %d chunks", len(chunks))
        return self

    def exists(self) -> bool:
        """Whether a saved index is present under ``root``."""
        return self.root is not None and has_current(self.root)

    def _query_ids(self, query: str) -> list[int]:
        vocab: dict[str, int] = self._bm25.vocab_dict
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = _stemmer()
        tokens = tokenize([query], stemmer)[0]
        return [vocab[t] for t in dict.fromkeys(tokens) if t and t in vocab]

    def search(self, query: str, k: int, flt: FilterSpec | None = None) -> list[tuple[str, float]]:
        """Top-k (chunk_id, BM25 score) among the rows the filter admits; rows scoring 0 are not returned."""
        if k <= 0:
            raise ConfigError(f"k must be a positive integer, got {k}")
        meta = self.meta
        if self._bm25 is None or not len(meta):
            return []
        mask = meta.mask(flt)
        if mask is not None and not mask.any():
            return []
        token_ids = self._query_ids(query)
        if not token_ids:
            return []
        if mask is None:
            scores = np.asarray(self._bm25.get_scores(token_ids), dtype=np.float32)
        else:  # the filter's own term statistics: unrelated rows change nothing
            assert self._postings is not None
            scores = subset_scores(self._postings, mask, token_ids, K1, B)
        return _top_k(scores, meta.ids, k)

    # ------------------------------------------------------------------ persistence
    def save(self, root: Path | str | None = None) -> Path:
        """Write atomically under ``root`` (default: the bound one); readers never see a partial index."""
        target = Path(root) if root is not None else self.root
        if target is None:
            raise ConfigError("BM25Index.save needs a directory: BM25Index(root) or save(root)")
        meta = self.meta

        def write(tmp: Path) -> None:
            meta.save(tmp / "rows")
            if self._bm25 is not None and self._postings is not None:
                self._bm25.save(str(tmp / "bm25s"), show_progress=False)
                self._postings.save(tmp / "postings")

        info = {"rows": len(meta), "fingerprint": self.fingerprint, "stopwords": STOPWORDS,
                "stemmer": STEMMER_LANGUAGE}
        return write_versioned(target, KIND, FORMAT_VERSION, info, write)

    @classmethod
    def load(cls, root: Path | str, mmap: bool = False) -> BM25Index:
        """Load the current index under ``root``; a different format version raises ``IndexFormatError``."""
        index = cls(root)
        index._load_into_self(mmap)
        return index

    def _load_into_self(self, mmap: bool = False) -> None:
        if self.root is None:
            raise ConfigError("this BM25Index was neither built nor bound to a directory; call build() first")

        def read(directory: Path, stamp: dict[str, Any]) -> tuple[Any, RowMeta, Postings | None, str | None]:
            meta = RowMeta.load(directory / "rows")
            if len(meta) != stamp.get("rows"):
                raise IndexFormatError(f"BM25 index at {directory} is inconsistent; delete {self.root} and reindex")
            retriever, postings = None, None
            if len(meta):  # an empty index has no bm25s files (see build); a non-empty one must have them
                import bm25s

                retriever = bm25s.BM25.load(str(directory / "bm25s"), mmap=mmap, show_progress=False)
                postings = Postings.load(directory / "postings", mmap=mmap)
            return retriever, meta, postings, stamp.get("fingerprint")

        self._bm25, self._meta, self._postings, self.fingerprint = read_versioned(
            self.root, KIND, FORMAT_VERSION, read)


def _top_k(scores: np.ndarray[Any, Any], ids: Sequence[str], k: int) -> list[tuple[str, float]]:
    """The k largest positive scores, best first; ties broken by chunk id (``store.topk``), not by row order."""
    positive = np.flatnonzero(scores > 0.0)
    order = top_k(scores[positive], lambda j: ids[int(positive[j])], k)
    return [(ids[int(positive[j])], float(scores[positive[j]])) for j in order]
