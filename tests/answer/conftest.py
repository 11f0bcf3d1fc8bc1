"""Answer-path fixtures: a small real store (the recorded NVIDIA 10-K and 10-Q ingested with the project's pipeline:
real SQLite, Chroma and bm25s in a temp home, the fast hash embedder), the real hybrid search over it, and the
recorded SEC companyfacts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from equimind.answer.answerer import Answerer
from equimind.core.config import Settings
from equimind.core.documents import Document, FilterSpec, Origin, Source
from equimind.core.search import SearchHit

AS_OF = date(2025, 9, 30)


class OneFilingStore:
    """A docstore of one 10-K (any id) holding ``text``, of ``ticker`` / ``company`` for ``fiscal_year``, filed on
    ``filed`` for the year ended ``period_end``."""

    def __init__(self, text: str, ticker: str, company: str, fiscal_year: int, filed: date,
                 period_end: date) -> None:
        self.text, self.ticker, self.company = text, ticker, company
        self.fiscal_year, self.filed, self.period_end = fiscal_year, filed, period_end

    def get_document_text(self, doc_id: str) -> str:
        return self.text

    def get_document(self, doc_id: str) -> Document:
        return Document(id=doc_id, source_key=f"test/{self.ticker}", ticker=self.ticker, cik=None,
                        company=self.company, source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K",
                        filed_at=self.filed, period_end=self.period_end, url=None, title=f"{self.ticker} 10-K",
                        text=self.get_document_text(doc_id),
                        meta=(("fiscal_period", "FY"), ("fiscal_year", str(self.fiscal_year))))


def sentence_units(*sentences: str, ticker: str = "TSLA") -> tuple[list[Any], dict[str, str]]:
    """One passage of document "d" made of ``sentences`` (joined by spaces), one sentence unit each, and the text."""
    from equimind.answer.record import PassageRead
    from equimind.answer.units import Span, Unit, UnitKind

    text = " ".join(sentences)
    passage = PassageRead(doc_id="d", start=0, end=len(text), score=1.0, ticker=ticker)
    units, at = [], 0
    for s in sentences:
        start = text.index(s, at)
        units.append(Unit("d", UnitKind.SENTENCE, Span(start, start + len(s), s), passage, 0))
        at = start + len(s)
    return units, {"d": text}
TOP_K = 20  # hits handed to the answerer (the hash embedder ranks worse than the product's model)


def open_hash_services(home: Path, corpus: Path) -> Any:
    from equimind.app.services import open_services
    from equimind.embedding.embed import HashEmbedder
    from equimind.embedding.rerank import FixedScoreReranker
    from equimind.ingest.tokens import WhitespaceTokenizer

    return open_services(Settings(home=home, snapshot=corpus), embedder=HashEmbedder(),
                         reranker=FixedScoreReranker({}, unavailable="no cross-encoder in tests"),
                         tokenizer=WhitespaceTokenizer())


@pytest.fixture(scope="session")
def nvda_services(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Any:
    from equimind.evaluation.golden import snapshot_documents

    services = open_hash_services(tmp_path_factory.mktemp("answer") / "home", corpus_dir)
    services.pipeline().run(snapshot_documents(corpus_dir, ["NVDA"]))
    return services


@pytest.fixture(scope="session")
def facts(corpus_dir: Path) -> Any:
    from equimind.sources.market_snapshot import SnapshotSec

    return SnapshotSec(corpus_dir)


@pytest.fixture()
def search(nvda_services: Any) -> Callable[[str], list[SearchHit]]:
    from equimind.app.engine import EquiMindEngine

    engine = EquiMindEngine(nvda_services)
    return lambda q: engine.search(q, FilterSpec(tickers=("NVDA",)), top_k=TOP_K).hits


@pytest.fixture()
def answerer(nvda_services: Any, facts: Any) -> Answerer:
    return Answerer(nvda_services.docstore, facts)
