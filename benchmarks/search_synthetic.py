"""Synthetic corpora for the search benchmark: documents/parents/chunks built with the real models, Zipfian text,
and 384-d "text-like" vectors.

Vectors: ``normalise(0.55 mu + 0.5 topic + 0.65 noise)`` where topic and noise are drawn from a power-law spectrum
(variance of component i ~ i^-1.0, randomly rotated) — calibrated so that the mean vector norm, random-pair cosine
and PCA variance profile resemble all-MiniLM-L6-v2 embeddings of real 10-K/10-Q text (``--calibrate`` in
search_bench re-measures this). ``kind="uniform"`` gives i.i.d. uniform unit vectors (the worst case for HNSW).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from equimind.core.documents import Chunk, Document, Origin, Parent, Source, date_to_int

DIM = 384
N_TICKERS = 20
CHUNKS_PER_DOC = 50
CHUNKS_PER_PARENT = 4
WORDS_PER_CHUNK = 100
VOCAB = 20_000
START = date(2022, 1, 1)
DAYS = 3 * 365
FORMS = ("10-K", "10-Q", "8-K")
TICKERS = tuple(f"T{i:02d}" for i in range(N_TICKERS))


def vocabulary(rng: np.random.Generator, size: int = VOCAB) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "be", "do", "fi", "gu", "ha"]
    words: set[str] = set()
    while len(words) < size:
        n = int(rng.integers(2, 5))
        words.add("".join(syll[int(i)] for i in rng.integers(0, len(syll), n)) + "x")
    return sorted(words)


def zipf_probs(size: int = VOCAB) -> np.ndarray:
    p: np.ndarray = 1.0 / (np.arange(size) + 2.7) ** 1.07
    out: np.ndarray = p / p.sum()
    return out


@dataclass
class Corpus:
    docs: list[Document]
    parents: list[list[Parent]]
    chunks: list[list[Chunk]]
    vectors: np.ndarray  # (n_chunks, DIM) in the order of [c for doc in chunks for c in doc]
    words: list[str]
    probs: np.ndarray


class VectorModel:
    """Draws text-like (or uniform) unit vectors; topics are shared by chunks and queries."""

    def __init__(self, rng: np.random.Generator, n_topics: int, kind: str = "textlike") -> None:
        self.rng, self.kind = rng, kind
        self.scale = np.arange(1, DIM + 1) ** -0.5  # std ~ i^-0.5, variance ~ i^-1.0
        self.rot, _ = np.linalg.qr(rng.standard_normal((DIM, DIM)))
        mu = rng.standard_normal(DIM)
        self.mu = mu / np.linalg.norm(mu)
        self.topics = self._unit(self._spectral(n_topics))

    def _spectral(self, n: int) -> np.ndarray:
        out: np.ndarray = (self.rng.standard_normal((n, DIM)) * self.scale) @ self.rot.T
        return out

    @staticmethod
    def _unit(m: np.ndarray) -> np.ndarray:
        out: np.ndarray = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
        return out

    def sample(self, topic_ids: np.ndarray) -> np.ndarray:
        n = len(topic_ids)
        if self.kind == "uniform":
            return self._unit(self.rng.standard_normal((n, DIM)))
        noise = self._unit(self._spectral(n))
        return self._unit(0.55 * self.mu + 0.5 * self.topics[topic_ids] + 0.65 * noise)


def make_corpus(n_chunks: int, seed: int = 0, kind: str = "textlike") -> tuple[Corpus, VectorModel]:
    rng = np.random.default_rng(seed)
    words, probs = vocabulary(rng), zipf_probs()
    n_docs = max(1, n_chunks // CHUNKS_PER_DOC)
    model = VectorModel(rng, n_topics=max(1, n_chunks // 20), kind=kind)
    docs: list[Document] = []
    parents: list[list[Parent]] = []
    chunks: list[list[Chunk]] = []
    topic_ids: list[int] = []
    for d in range(n_docs):
        ticker = TICKERS[int(rng.integers(0, N_TICKERS))]
        filed = START + timedelta(days=int(rng.integers(0, DAYS)))
        form = FORMS[int(rng.integers(0, len(FORMS)))]
        ids = rng.choice(len(words), size=(CHUNKS_PER_DOC, WORDS_PER_CHUNK), p=probs)
        texts = [" ".join(words[i] for i in row) + "." for row in ids]
        doc, ps, cs = _document(d, ticker, form, filed, texts)
        docs.append(doc)
        parents.append(ps)
        chunks.append(cs)
        own = int(rng.integers(0, len(model.topics)))
        mixed = np.where(rng.random(len(cs)) < 0.7, own, rng.integers(0, len(model.topics), len(cs)))
        topic_ids.extend(int(t) for t in mixed)
    vectors = model.sample(np.asarray(topic_ids))
    return Corpus(docs, parents, chunks, vectors, words, probs), model


def _document(d: int, ticker: str, form: str, filed: date, texts: list[str]) -> tuple[Document, list[Parent],
                                                                                        list[Chunk]]:
    text = " ".join(texts)
    key = f"bench/{d}"
    doc = Document(id=Document.make_id(key, text), source_key=key, ticker=ticker, cik=None, company=f"{ticker} Inc",
                   source=Source.SEC_EDGAR, origin=Origin.LOCAL_FILE, form=form, filed_at=filed, period_end=None,
                   url=None, title=f"{ticker} {form} {filed}", text=text)
    spans, pos = [], 0
    for t in texts:
        spans.append((pos, pos + len(t)))
        pos += len(t) + 1
    parents: list[Parent] = []
    chunks: list[Chunk] = []
    for p0 in range(0, len(spans), CHUNKS_PER_PARENT):
        group = spans[p0 : p0 + CHUNKS_PER_PARENT]
        ps, pe = group[0][0], group[-1][1]
        parent = Parent(id=f"{doc.id}:{ps}", doc_id=doc.id, start=ps, end=pe, section=None)
        parents.append(parent)
        chunks.extend(Chunk(id=Chunk.make_id(doc.id, s, e), doc_id=doc.id, parent_id=parent.id, start=s, end=e,
                            parent_start=ps, parent_end=pe, section=None, text=text[s:e], ticker=ticker,
                            source=Source.SEC_EDGAR, form=form, filed_at=date_to_int(filed)) for s, e in group)
    return doc, parents, chunks


def make_queries(corpus: Corpus, model: VectorModel, n: int, seed: int = 1) -> list[tuple[str, np.ndarray]]:
    """(text of 3-4 mid-frequency words, a vector from the same distribution as the chunks)."""
    rng = np.random.default_rng(seed)
    vecs = model.sample(rng.integers(0, len(model.topics), n))
    out = []
    for i in range(n):
        picks = rng.integers(50, 3000, int(rng.integers(3, 5)))
        out.append((f"q{i} " + " ".join(corpus.words[int(j)] for j in picks), vecs[i]))
    return out


class TableEmbedder:
    """Embedder whose query vectors were drawn in advance (the benchmark measures search, not the model)."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.name, self.dim, self._table = "synthetic", DIM, table

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._table[t] for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._table[text]
